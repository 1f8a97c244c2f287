// aclnnIncreFlashAttentionV4 kernel entry: the shared forward core with the decode variant
// (units = (batch, KV head, head block, KV split) with the GQA heads of a KV group as the cube's
// rows, contiguous or paged K/V, KV window + pse + mask row, plain softmax), followed by the
// combine pass of the KV splits (attention_core/split_kv_combine.h).
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"  // ListTensorDesc: not part of kernel_operator.h
#include "../attention_core/forward_kernel.h"
#include "../attention_core/decode_policies.h"
#include "../attention_core/split_kv_combine.h"
#include "../attention_core/kv_antiquant.h"
#include "incre_flash_attention_tiling_data.h"

using DecodeVariant = AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecode,
                                                    AttentionCore::ScoreScale, AttentionCore::MaskDecode,
                                                    AttentionCore::SoftmaxPlain>;

template <typename T>
__aicore__ inline void RunDecode(const AttentionCore::ForwardParams *p, const AttentionCore::ForwardTensors &in,
                                 GM_ADDR antiScale = nullptr, GM_ADDR antiOffset = nullptr)
{
    const AttentionCore::DecodeParams &d = AttentionCore::DecodeOf(p);
    AttentionCore::ForwardTensors t = in;
    if (d.antiquant != 0) {  // int8 K/V: the core reads dequantised copies from the workspace
        GM_ADDR keyCopy = reinterpret_cast<GM_ADDR>(d.workspaceAddr) + d.antiWsOffset;
        GM_ADDR valueCopy = keyCopy + d.antiCopyBytes;
        if ASCEND_IS_AIV {
            AttentionCore::KvAntiquant<T> dequant;
            dequant.Run(p, in.key, in.value, antiScale, antiOffset, keyCopy, valueCopy);
            AscendC::PipeBarrier<PIPE_ALL>();
        }
        AscendC::SyncAll<false>();  // cube and vector cores: the copies are complete
        t.key = keyCopy;
        t.value = valueCopy;
    }
    AttentionCore::RunForward<T, DecodeVariant>(p, t);
    if ASCEND_IS_AIV {
        if (AttentionCore::StoresPartials(AttentionCore::DecodeOf(p))) {
            AttentionCore::KvSplitCombiner<T> combine;
            combine.Run(p, t.out);
        }
    }
}

// Tensor-list form with one batch-1 tensor per batch (each with its own S): the core runs
// once per batch on that batch's tensors; the plan is the one of a single batch.
template <typename T>
__aicore__ inline void RunDecodeList(IncreFlashAttentionTilingData &td, const AttentionCore::ForwardTensors &all,
                                     AscendC::ListTensorDesc &keys, AscendC::ListTensorDesc &values,
                                     GM_ADDR antiScale, GM_ADDR antiOffset)
{
    AttentionCore::DecodeParams &d = td.decode;
    for (uint32_t b = 0; b < d.kvListBatches; ++b) {
        AttentionCore::ForwardTensors t = all;
        t.key = keys.GetDataPtr<uint8_t>(b);
        t.value = values.GetDataPtr<uint8_t>(b);
        t.query = all.query + b * td.params.qStrideB * sizeof(T);
        t.out = all.out + b * td.params.oStrideB * (d.quantOut != 0 ? sizeof(int8_t) : sizeof(T));
        if (d.hasKvLengths != 0 && d.kvLengthsCount > 1) t.actualSeqLengths = all.actualSeqLengths + b * sizeof(int64_t);
        if (d.hasMask != 0) t.mask = all.mask + b * d.maskStrideB;
        if (d.hasPse != 0) t.pse = all.pse + b * d.pseStrideB * sizeof(T);
        td.params.seqKv = d.kvListSeq[b];
        if (d.kvListBnsd != 0) td.params.kvStrideN = static_cast<uint64_t>(d.kvListSeq[b]) * td.params.headDim;
        if (d.antiquant != 0) {  // this batch's int8 tensors: S_b x N_kv rows of D
            d.antiRows = static_cast<uint64_t>(d.kvListSeq[b]) * td.params.numKvHeads;
            if (d.kvListBnsd != 0) d.antiHeadRun = d.kvListSeq[b];
        }
        if (b > 0 && d.antiquant != 0) {
            AscendC::SyncAll<false>();  // no core still reads the previous batch's K/V copies
        } else if (b > 0 && AttentionCore::StoresPartials(d)) {
            if ASCEND_IS_AIV {
                AscendC::SyncAll();  // every core has combined the previous batch's partials
            }
        }
        RunDecode<T>(&td.params, t, antiScale, antiOffset);
    }
}

extern "C" __global__ __aicore__ void incre_flash_attention(
    GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR pse_shift, GM_ADDR atten_mask, GM_ADDR actual_seq_lengths,
    GM_ADDR dequant_scale1, GM_ADDR quant_scale1, GM_ADDR dequant_scale2, GM_ADDR quant_scale2,
    GM_ADDR quant_offset2, GM_ADDR antiquant_scale, GM_ADDR antiquant_offset, GM_ADDR block_table,
    GM_ADDR kv_padding_size, GM_ADDR attention_out, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)dequant_scale1;
    (void)quant_scale1;
    (void)dequant_scale2;
    // dequant_scale1 / quant_scale1 / dequant_scale2 apply to an int8 query (rejected by the API)
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(IncreFlashAttentionTilingData, tilingData, tiling);
    GM_ADDR user = AscendC::GetUserWorkspace(workspace);
    tilingData.decode.blockTableAddr = reinterpret_cast<uint64_t>(block_table);
    tilingData.decode.kvPaddingAddr = reinterpret_cast<uint64_t>(kv_padding_size);
    tilingData.decode.workspaceAddr = reinterpret_cast<uint64_t>(user);
    tilingData.decode.quantScaleAddr = reinterpret_cast<uint64_t>(quant_scale2);
    tilingData.decode.quantOffsetAddr = reinterpret_cast<uint64_t>(quant_offset2);
    AscendC::ListTensorDesc keys(reinterpret_cast<__gm__ void *>(key));
    AscendC::ListTensorDesc values(reinterpret_cast<__gm__ void *>(value));
    AttentionCore::ForwardTensors tensors{query, keys.GetDataPtr<uint8_t>(0), values.GetDataPtr<uint8_t>(0),
                                          atten_mask, actual_seq_lengths, attention_out, user};
    tensors.pse = pse_shift;
    const bool list = tilingData.decode.kvListBatches != 0;
    if (TILING_KEY_IS(IFA_TILING_KEY_FP16)) {
        if (list) {
            RunDecodeList<half>(tilingData, tensors, keys, values, antiquant_scale, antiquant_offset);
        } else {
            RunDecode<half>(&tilingData.params, tensors, antiquant_scale, antiquant_offset);
        }
    } else if (TILING_KEY_IS(IFA_TILING_KEY_BF16)) {
        if (list) {
            RunDecodeList<bfloat16_t>(tilingData, tensors, keys, values, antiquant_scale, antiquant_offset);
        } else {
            RunDecode<bfloat16_t>(&tilingData.params, tensors, antiquant_scale, antiquant_offset);
        }
    }
}
