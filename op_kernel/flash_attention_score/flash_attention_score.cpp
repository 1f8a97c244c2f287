// FlashAttentionScore kernel entry (aclnnFlashAttentionVarLenScore): the shared forward core
// with the varlen variant (q-blocks over TND batches, pse before the scale, sparse modes 0-8,
// dropout) writing attention_out and the softmax max/sum statistics. The tiling key selects the
// dtype, the P.V mode and whether K/V are staged in Nz order.
#include "kernel_operator.h"
#include "../attention_core/forward/forward_kernel.h"
#include "flash_attention_score_tiling_data.h"

using VarLenVariant =
    AttentionCore::ForwardVariant<AttentionCore::SplitTnd, AttentionCore::KvStrided, AttentionCore::ScorePse,
                                  AttentionCore::MaskSparseMode, AttentionCore::SoftmaxDropout>;

extern "C" __global__ __aicore__ void flash_attention_score(GM_ADDR query, GM_ADDR key, GM_ADDR value,
                                                            GM_ADDR real_shift, GM_ADDR drop_mask, GM_ADDR padding_mask,
                                                            GM_ADDR atten_mask, GM_ADDR prefix, GM_ADDR actual_seq_qlen,
                                                            GM_ADDR actual_seq_kvlen, GM_ADDR softmax_max,
                                                            GM_ADDR softmax_sum, GM_ADDR softmax_out,
                                                            GM_ADDR attention_out, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)padding_mask;  // reserved by the spec
    (void)softmax_out;   // reserved by the spec
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(FlashAttentionScoreTilingData, tilingData, tiling);
    AttentionCore::ForwardTensors<VarLenVariant> tensors;
    tensors.query = query;
    tensors.key = key;
    tensors.value = value;
    tensors.out = attention_out;
    tensors.workspace = AscendC::GetUserWorkspace(workspace);
    tensors.softmaxMax = softmax_max;
    tensors.softmaxSum = softmax_sum;
    tensors.split = {actual_seq_qlen, actual_seq_kvlen, tiling + FA_UNIT_ORDER_OFFSET};
    tensors.score.pse = real_shift;
    tensors.mask = {atten_mask, prefix};
    tensors.softmax = {drop_mask, actual_seq_qlen, actual_seq_kvlen};
    if (TILING_KEY_IS(FA_TILING_KEY_FP16)) {
        AttentionCore::RunForward<half, VarLenVariant, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_FP16_LAZY)) {
        AttentionCore::RunForward<half, VarLenVariant, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_FP16_KV_NZ)) {
        AttentionCore::RunForward<half, VarLenVariant, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_FP16_LAZY_KV_NZ)) {
        AttentionCore::RunForward<half, VarLenVariant, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_BF16)) {
        AttentionCore::RunForward<bfloat16_t, VarLenVariant, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_BF16_LAZY)) {
        AttentionCore::RunForward<bfloat16_t, VarLenVariant, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_BF16_KV_NZ)) {
        AttentionCore::RunForward<bfloat16_t, VarLenVariant, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_BF16_LAZY_KV_NZ)) {
        AttentionCore::RunForward<bfloat16_t, VarLenVariant, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_FP32)) {
        AttentionCore::RunForward<float, VarLenVariant, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(FA_TILING_KEY_FP32_LAZY)) {
        AttentionCore::RunForward<float, VarLenVariant, true>(tilingData, tensors);
    }
}
