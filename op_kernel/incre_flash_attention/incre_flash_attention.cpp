// aclnnIncreFlashAttentionV4 kernel entry: the shared forward core with the decode variant
// (units = (batch, KV head, head block, KV split) with the GQA heads of a KV group as the cube's
// rows, contiguous or paged K/V, scale + pse, KV window + mask row, plain softmax), followed by the
// combine pass of the KV splits (attention_core/variants/split_kv_combine.h). The tiling key
// selects the dtype and the core's P.V mode, or for int8 K/V the int8 x int8 core
// (variants/int8_digit_core.h) where the tiling planned it.
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"  // ListTensorDesc: not part of kernel_operator.h
#include "../attention_core/forward/forward_kernel.h"
#include "../attention_core/variants/decode_policies.h"
#include "../attention_core/variants/split_kv_combine.h"
#include "../attention_core/variants/kv_ring.h"
#include "../attention_core/variants/kv_antiquant.h"
#include "../attention_core/variants/int8_query_digits.h"
#include "../attention_core/variants/int8_digit_core.h"
#include "incre_flash_attention_tiling_data.h"

using DecodeVariant =
    AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecode, AttentionCore::ScoreDecodePse,
                                  AttentionCore::MaskDecode, AttentionCore::SoftmaxPlain>;
// The same variant reading K/V from the ring the vector cores fill in the cube's Nz order
// (kv_ring.h): fp16 / bf16 K/V copied, int8 K/V cast (kv_antiquant.h).
template <typename T>
using DecodeRingVariant = AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecodeRing<T>,
                                                        AttentionCore::ScoreDecodePse, AttentionCore::MaskDecode,
                                                        AttentionCore::SoftmaxPlain>;
template <typename T>
using DecodeInt8Variant = AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecodeInt8<T>,
                                                        AttentionCore::ScoreDecodePse, AttentionCore::MaskDecode,
                                                        AttentionCore::SoftmaxPlain>;
// int8 K/V kept in int8 up to the cube (variants/int8_digit_core.h; its vector event ids take
// the mask rows' id, which MaskDecode leaves free).
template <typename T>
using DecodeDigitsVariant =
    AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecodeInt8Digits<T>,
                                  AttentionCore::ScoreDecodePse, AttentionCore::MaskDecode,
                                  AttentionCore::SoftmaxPlain>;
// The launch's GM tensors: the int8 variant's K/V piece extends the ring's and the paged one,
// so one struct serves every variant (its ring and int8 members stay null where unused).
using DecodeTensors = AttentionCore::ForwardTensors<DecodeInt8Variant<half>>;

// The int8 x int8 core: the query digits of the core's rows (FLAG_Q_SCALED), then its cube
// stream and the forward vector stage with the digit hooks, K/V through the int8 ring.
template <typename T> __aicore__ inline void RunDigits(const IncreFlashAttentionTilingData &td, const DecodeTensors &in)
{
    const AttentionCore::Int8DigitParams &g = td.decode.digits;
    DecodeTensors t = in;
    t.kv.cacheKey = in.key;
    t.kv.cacheValue = in.value;
    t.key = in.workspace + g.ringOffset;
    t.value = t.key;
    if ASCEND_IS_AIV {
        const uint32_t core = AscendC::GetBlockIdx() / 2;
        AttentionCore::QueryDigits<T> digits;
        digits.Run(td, in.query, in.kv.antiScale, in.workspace + g.queryOffset + core * g.queryCoreBytes, core,
                   AscendC::GetSubBlockIdx(), 2, false);  // Q s_k: the score policy scales S
        // set on MTE3, the flag goes out behind the digit rows' stores
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(AttentionCore::FLAG_Q_SCALED);
    }
    AscendC::TPipe pipe;
    if ASCEND_IS_AIC {
        AttentionCore::Int8DigitCube<T, DecodeDigitsVariant<T>> cube;
        cube.Init(td, &pipe, t);
        cube.Process();
    }
    if ASCEND_IS_AIV {
        AttentionCore::ForwardVector<T, DecodeDigitsVariant<T>, false, false> vec;
        vec.Init(td, &pipe, t);
        vec.Process();
    }
}

template <typename T, bool LAZY_PV, bool DIGITS = false>
__aicore__ inline void RunDecode(const IncreFlashAttentionTilingData &td, const DecodeTensors &in)
{
    const AttentionCore::DecodeParams &d = td.decode;
    if constexpr (DIGITS) {
        RunDigits<T>(td, in);
    } else if (d.ring == 0) {
        AttentionCore::RunForward<T, DecodeVariant, LAZY_PV>(td, in);
    } else {  // the cube reads K/V from the ring; the vector cores read the cache
        DecodeTensors t = in;
        t.kv.cacheKey = in.key;
        t.kv.cacheValue = in.value;
        t.key = in.workspace + d.ringOffset;
        t.value = t.key;
        if (d.antiquant == 0) {
            AttentionCore::RunForward<T, DecodeRingVariant<T>, LAZY_PV>(td, t);
        } else {  // int8 K/V: Q * scale_k of the core's rows, then the core on the cast ring (kv_antiquant.h)
            uint32_t core = AscendC::GetBlockIdx();
            if ASCEND_IS_AIV {
                core /= 2;
            }
            t.query = in.workspace + d.antiQueryOffset + core * d.antiQueryCoreBytes;
            if ASCEND_IS_AIV {
                AttentionCore::QueryAntiquant<T> scaleQuery;
                scaleQuery.Run(td, in.query, in.kv.antiScale, t.query, core);
                // set on MTE3, the flag goes out behind the scaled rows' stores; then the ring
                AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(AttentionCore::FLAG_Q_SCALED);
            }
            if ASCEND_IS_AIC {
                AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(AttentionCore::FLAG_Q_SCALED);  // before the Q load
            }
            AttentionCore::RunForward<T, DecodeInt8Variant<T>, LAZY_PV>(td, t);
        }
    }
    if (AttentionCore::StoresPartials(d)) {
        if ASCEND_IS_AIV {
            AttentionCore::KvSplitCombiner<T> combine;
            combine.Run(td, in);
        }
        if ASCEND_IS_AIC {  // the combine's barrier orders the cube's last partial rows (policies.h PartialRows)
            AscendC::PipeBarrier<PIPE_ALL>();
            AscendC::SyncAll<false>();
        }
    }
}

// Tensor-list form with one batch-1 tensor per batch (each with its own S): the core runs
// once per batch on that batch's tensors; the plan is the one of a single batch.
template <typename T, bool LAZY_PV, bool DIGITS>
__aicore__ inline void RunDecodeList(IncreFlashAttentionTilingData &td, const DecodeTensors &all,
                                     AscendC::ListTensorDesc &keys, AscendC::ListTensorDesc &values)
{
    const AttentionCore::DecodeParams &d = td.decode;
    for (uint32_t b = 0; b < d.kvListBatches; ++b) {
        DecodeTensors t = all;
        t.key = keys.GetDataPtr<uint8_t>(b);
        t.value = values.GetDataPtr<uint8_t>(b);
        t.query = all.query + b * td.params.qStrideB * sizeof(T);
        t.out = all.out + b * td.params.oStrideB * (d.quantOut != 0 ? sizeof(int8_t) : sizeof(T));
        if (td.mask.hasKvLengths != 0 && td.mask.kvLengthsCount > 1) {
            t.mask.kvLengths = all.mask.kvLengths + b * sizeof(int64_t);
        }
        if (td.mask.hasMask != 0) t.mask.mask = all.mask.mask + b * td.mask.maskStrideB;
        if (td.score.hasPse != 0) t.score.pse = all.score.pse + b * td.score.pseStrideB * sizeof(T);
        td.params.seqKv = d.kvListSeq[b];
        if (d.kvListBnsd != 0) td.params.kvStrideN = static_cast<uint64_t>(d.kvListSeq[b]) * td.params.headDim;
        if (b > 0 && d.ring != 0) {
            AscendC::SyncAll<false>();  // no core still reads the previous batch's ring or scaled query
        } else if (b > 0 && AttentionCore::StoresPartials(d)) {
            if ASCEND_IS_AIV {
                AscendC::SyncAll();  // every core has combined the previous batch's partials
            }
        }
        RunDecode<T, LAZY_PV, DIGITS>(td, t);
    }
}

template <typename T, bool LAZY_PV, bool DIGITS = false>
__aicore__ inline void Run(IncreFlashAttentionTilingData &td, const DecodeTensors &t, AscendC::ListTensorDesc &keys,
                           AscendC::ListTensorDesc &values)
{
    if (td.decode.kvListBatches != 0) {
        RunDecodeList<T, LAZY_PV, DIGITS>(td, t, keys, values);
    } else {
        RunDecode<T, LAZY_PV, DIGITS>(td, t);
    }
}

extern "C" __global__ __aicore__ void
incre_flash_attention(GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR pse_shift, GM_ADDR atten_mask,
                      GM_ADDR actual_seq_lengths, GM_ADDR dequant_scale1, GM_ADDR quant_scale1, GM_ADDR dequant_scale2,
                      GM_ADDR quant_scale2, GM_ADDR quant_offset2, GM_ADDR antiquant_scale, GM_ADDR antiquant_offset,
                      GM_ADDR block_table, GM_ADDR kv_padding_size, GM_ADDR attention_out, GM_ADDR workspace,
                      GM_ADDR tiling)
{
    (void)dequant_scale1;
    (void)quant_scale1;
    (void)dequant_scale2;
    // dequant_scale1 / quant_scale1 / dequant_scale2 apply to an int8 query (rejected by the API)
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(IncreFlashAttentionTilingData, tilingData, tiling);
    AscendC::ListTensorDesc keys(reinterpret_cast<__gm__ void *>(key));
    AscendC::ListTensorDesc values(reinterpret_cast<__gm__ void *>(value));
    DecodeTensors tensors;
    tensors.query = query;
    tensors.key = keys.GetDataPtr<uint8_t>(0);
    tensors.value = values.GetDataPtr<uint8_t>(0);
    tensors.out = attention_out;
    tensors.workspace = AscendC::GetUserWorkspace(workspace);
    tensors.split = {quant_scale2, quant_offset2};
    tensors.kv.blockTable = block_table;
    tensors.kv.antiScale = antiquant_scale;
    tensors.kv.antiOffset = antiquant_offset;
    tensors.score.pse = pse_shift;
    tensors.mask = {atten_mask, actual_seq_lengths, kv_padding_size};
    if (TILING_KEY_IS(IFA_TILING_KEY_FP16)) {
        Run<half, false>(tilingData, tensors, keys, values);
    } else if (TILING_KEY_IS(IFA_TILING_KEY_FP16_LAZY)) {
        Run<half, true>(tilingData, tensors, keys, values);
    } else if (TILING_KEY_IS(IFA_TILING_KEY_BF16)) {
        Run<bfloat16_t, false>(tilingData, tensors, keys, values);
    } else if (TILING_KEY_IS(IFA_TILING_KEY_BF16_LAZY)) {
        Run<bfloat16_t, true>(tilingData, tensors, keys, values);
    } else if (TILING_KEY_IS(IFA_TILING_KEY_FP16_DIGITS)) {
        Run<half, false, true>(tilingData, tensors, keys, values);
    } else if (TILING_KEY_IS(IFA_TILING_KEY_BF16_DIGITS)) {
        Run<bfloat16_t, false, true>(tilingData, tensors, keys, values);
    }
}
