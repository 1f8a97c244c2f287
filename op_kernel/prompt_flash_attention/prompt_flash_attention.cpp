// aclnnPromptFlashAttention kernel entry: the shared forward core with the prefill variant
// (q-block split, strided layouts, scale, mask tensor + band, plain softmax). The tiling key
// selects the dtype, the P.V mode, whether the mask goes through the mask summary and whether
// K/V are staged in Nz order.
#include "kernel_operator.h"
#include "../attention_core/forward/forward_kernel.h"
#include "prompt_flash_attention_tiling_data.h"

template <class MaskTag>
using PromptVariant = AttentionCore::ForwardVariant<AttentionCore::SplitQBlocks, AttentionCore::KvStrided,
                                                    AttentionCore::ScoreScale, MaskTag, AttentionCore::SoftmaxPlain>;
using Plain = PromptVariant<AttentionCore::MaskTensorBand>;
using Summary = PromptVariant<AttentionCore::MaskTensorBandSummary>;

extern "C" __global__ __aicore__ void prompt_flash_attention(GM_ADDR query, GM_ADDR key, GM_ADDR value,
                                                             GM_ADDR pse_shift, GM_ADDR atten_mask,
                                                             GM_ADDR actual_seq_lengths, GM_ADDR attention_out,
                                                             GM_ADDR workspace, GM_ADDR tiling)
{
    (void)pse_shift;  // reserved by the spec: the V1 API always passes nullptr
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(PromptFlashAttentionTilingData, tilingData, tiling);
    AttentionCore::ForwardTensors<Plain> tensors;  // Summary's tensors are the same
    tensors.query = query;
    tensors.key = key;
    tensors.value = value;
    tensors.out = attention_out;
    tensors.workspace = AscendC::GetUserWorkspace(workspace);
    tensors.split.actualSeqLengths = actual_seq_lengths;
    tensors.mask.mask = atten_mask;
    if (TILING_KEY_IS(PFA_TILING_KEY_FP16)) {
        AttentionCore::RunForward<half, Plain, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY)) {
        AttentionCore::RunForward<half, Plain, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_SUMMARY)) {
        AttentionCore::RunForward<half, Summary, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY_SUMMARY)) {
        AttentionCore::RunForward<half, Summary, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_KV_NZ)) {
        AttentionCore::RunForward<half, Plain, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY_KV_NZ)) {
        AttentionCore::RunForward<half, Plain, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_SUMMARY_KV_NZ)) {
        AttentionCore::RunForward<half, Summary, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY_SUMMARY_KV_NZ)) {
        AttentionCore::RunForward<half, Summary, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16)) {
        AttentionCore::RunForward<bfloat16_t, Plain, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY)) {
        AttentionCore::RunForward<bfloat16_t, Plain, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_SUMMARY)) {
        AttentionCore::RunForward<bfloat16_t, Summary, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY_SUMMARY)) {
        AttentionCore::RunForward<bfloat16_t, Summary, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_KV_NZ)) {
        AttentionCore::RunForward<bfloat16_t, Plain, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY_KV_NZ)) {
        AttentionCore::RunForward<bfloat16_t, Plain, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_SUMMARY_KV_NZ)) {
        AttentionCore::RunForward<bfloat16_t, Summary, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY_SUMMARY_KV_NZ)) {
        AttentionCore::RunForward<bfloat16_t, Summary, true, true>(tilingData, tensors);
    }
}
