// aclnnIncreFlashAttentionV4 kernel entry: the shared forward core with the decode variant
// (units = (batch, KV head, head block, KV split) with the GQA heads of a KV group as the cube's
// rows, contiguous or paged K/V, KV window + pse + mask row, plain softmax), followed by the
// combine pass of the KV splits (attention_core/split_kv_combine.h).
#include "kernel_operator.h"
#include "../attention_core/forward_kernel.h"
#include "../attention_core/decode_policies.h"
#include "../attention_core/split_kv_combine.h"
#include "incre_flash_attention_tiling_data.h"

using DecodeVariant = AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecode,
                                                    AttentionCore::ScoreScale, AttentionCore::MaskDecode,
                                                    AttentionCore::SoftmaxPlain>;

template <typename T>
__aicore__ inline void RunDecode(const AttentionCore::ForwardParams *p, const AttentionCore::ForwardTensors &t)
{
    AttentionCore::RunForward<T, DecodeVariant>(p, t);
    if ASCEND_IS_AIV {
        if (AttentionCore::DecodeOf(p).kvSplits > 1) {
            AttentionCore::KvSplitCombiner<T> combine;
            combine.Run(p, t.out);
        }
    }
}

// The quantisation inputs (int8 query, int8 output, int8 KV) are rejected by the aclnn API.
extern "C" __global__ __aicore__ void incre_flash_attention(
    GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR pse_shift, GM_ADDR atten_mask, GM_ADDR actual_seq_lengths,
    GM_ADDR dequant_scale1, GM_ADDR quant_scale1, GM_ADDR dequant_scale2, GM_ADDR quant_scale2,
    GM_ADDR quant_offset2, GM_ADDR antiquant_scale, GM_ADDR antiquant_offset, GM_ADDR block_table,
    GM_ADDR kv_padding_size, GM_ADDR attention_out, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)dequant_scale1;
    (void)quant_scale1;
    (void)dequant_scale2;
    (void)quant_scale2;
    (void)quant_offset2;
    (void)antiquant_scale;
    (void)antiquant_offset;
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(IncreFlashAttentionTilingData, tilingData, tiling);
    GM_ADDR user = AscendC::GetUserWorkspace(workspace);
    tilingData.decode.blockTableAddr = reinterpret_cast<uint64_t>(block_table);
    tilingData.decode.kvPaddingAddr = reinterpret_cast<uint64_t>(kv_padding_size);
    tilingData.decode.workspaceAddr = reinterpret_cast<uint64_t>(user);
    AscendC::ListTensorDesc keys(reinterpret_cast<__gm__ void *>(key));
    AscendC::ListTensorDesc values(reinterpret_cast<__gm__ void *>(value));
    AttentionCore::ForwardTensors tensors{query, keys.GetDataPtr<uint8_t>(0), values.GetDataPtr<uint8_t>(0),
                                          atten_mask, actual_seq_lengths, attention_out, user};
    tensors.pse = pse_shift;
    if (TILING_KEY_IS(IFA_TILING_KEY_FP16)) {
        RunDecode<half>(&tilingData.params, tensors);
    } else if (TILING_KEY_IS(IFA_TILING_KEY_BF16)) {
        RunDecode<bfloat16_t>(&tilingData.params, tensors);
    }
}
