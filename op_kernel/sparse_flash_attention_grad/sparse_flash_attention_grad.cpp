// SparseFlashAttentionGrad kernel entry (aclnnSparseFlashAttentionGrad, BSND/TND, MLA with one
// KV head): the sparse backward core (op_kernel/attention_core/sparse_backward_*.h, KV gathered
// by kv_gather.h) in the input dtype.
#include "kernel_operator.h"
#include "../attention_core/sparse_backward/sparse_backward_kernel.h"
#include "sparse_flash_attention_grad_tiling_data.h"

extern "C" __global__ __aicore__ void sparse_flash_attention_grad(GM_ADDR query, GM_ADDR key, GM_ADDR value,
                                                                  GM_ADDR sparse_indices, GM_ADDR d_out, GM_ADDR out,
                                                                  GM_ADDR softmax_max, GM_ADDR softmax_sum,
                                                                  GM_ADDR actual_seq_qlen, GM_ADDR actual_seq_kvlen,
                                                                  GM_ADDR query_rope, GM_ADDR key_rope, GM_ADDR d_query,
                                                                  GM_ADDR d_key, GM_ADDR d_value, GM_ADDR d_query_rope,
                                                                  GM_ADDR d_key_rope, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(SparseFlashAttentionGradTilingData, tilingData, tiling);
    const AttentionCore::SparseBackwardTensors tensors{
        query,       key,         value,           sparse_indices,   d_out,      out,
        softmax_max, softmax_sum, actual_seq_qlen, actual_seq_kvlen, query_rope, key_rope,
        d_query,     d_key,       d_value,         d_query_rope,     d_key_rope, AscendC::GetUserWorkspace(workspace)};
    if (TILING_KEY_IS(SFAG_TILING_KEY_FP16)) {
        AttentionCore::RunSparseBackward<half>(&tilingData.params, tensors);
    } else if (TILING_KEY_IS(SFAG_TILING_KEY_BF16)) {
        AttentionCore::RunSparseBackward<bfloat16_t>(&tilingData.params, tensors);
    }
}
