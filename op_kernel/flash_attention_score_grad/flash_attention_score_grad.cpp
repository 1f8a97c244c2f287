// FlashAttentionScoreGrad kernel entry (aclnnFlashAttentionUnpaddingScoreGradV5, TND): the
// shared backward core (op_kernel/attention_core/backward_*.h) in the input dtype.
#include "kernel_operator.h"
#include "../attention_core/backward_kernel.h"
#include "flash_attention_score_grad_tiling_data.h"

extern "C" __global__ __aicore__ void flash_attention_score_grad(
    GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR dy, GM_ADDR pse_shift, GM_ADDR drop_mask, GM_ADDR atten_mask,
    GM_ADDR softmax_max, GM_ADDR softmax_sum, GM_ADDR attention_in, GM_ADDR actual_seq_qlen,
    GM_ADDR actual_seq_kvlen, GM_ADDR prefix, GM_ADDR sink, GM_ADDR query_rope, GM_ADDR key_rope, GM_ADDR dq,
    GM_ADDR dk, GM_ADDR dv, GM_ADDR dsink, GM_ADDR dq_rope, GM_ADDR dk_rope, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(FlashAttentionScoreGradTilingData, tilingData, tiling);
    const AttentionCore::BackwardTensors tensors{query, key, value, dy, pse_shift, drop_mask, atten_mask,
                                                 softmax_max, softmax_sum, attention_in, actual_seq_qlen,
                                                 actual_seq_kvlen, prefix, sink, query_rope, key_rope, dq, dk, dv,
                                                 dsink, dq_rope, dk_rope,
                                                 AscendC::GetUserWorkspace(workspace)};
    if (TILING_KEY_IS(FAG_TILING_KEY_FP16)) {
        AttentionCore::RunBackward<half>(&tilingData.params, tensors);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_BF16)) {
        AttentionCore::RunBackward<bfloat16_t>(&tilingData.params, tensors);
    }
}
