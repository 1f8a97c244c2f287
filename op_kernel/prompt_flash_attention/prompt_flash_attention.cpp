// aclnnPromptFlashAttention kernel entry: the shared forward core with the prefill variant
// (q-block split, strided layouts, scale, mask tensor + band, plain softmax).
#include "kernel_operator.h"
#include "../attention_core/forward/forward_kernel.h"
#include "prompt_flash_attention_tiling_data.h"

using PromptVariant =
    AttentionCore::ForwardVariant<AttentionCore::SplitQBlocks, AttentionCore::KvStrided, AttentionCore::ScoreScale,
                                  AttentionCore::MaskTensorBand, AttentionCore::SoftmaxPlain>;

extern "C" __global__ __aicore__ void prompt_flash_attention(GM_ADDR query, GM_ADDR key, GM_ADDR value,
                                                             GM_ADDR pse_shift, GM_ADDR atten_mask,
                                                             GM_ADDR actual_seq_lengths, GM_ADDR attention_out,
                                                             GM_ADDR workspace, GM_ADDR tiling)
{
    (void)pse_shift;  // reserved by the spec: the V1 API always passes nullptr
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(PromptFlashAttentionTilingData, tilingData, tiling);
    const AttentionCore::ForwardTensors tensors{
        query, key, value, atten_mask, actual_seq_lengths, attention_out, AscendC::GetUserWorkspace(workspace)};
    if (TILING_KEY_IS(PFA_TILING_KEY_FP16)) {
        AttentionCore::RunForward<half, PromptVariant>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16)) {
        AttentionCore::RunForward<bfloat16_t, PromptVariant>(tilingData, tensors);
    }
}
