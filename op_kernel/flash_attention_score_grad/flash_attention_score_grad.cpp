// FlashAttentionScoreGrad kernel entry (aclnnFlashAttentionUnpaddingScoreGradV5, TND): the
// shared backward core (op_kernel/attention_core/backward_*.h) in the input dtype.
#include "kernel_operator.h"
#include "../attention_core/backward/backward_kernel.h"
#include "../attention_core/forward/forward_kernel.h"
#include "flash_attention_score_grad_tiling_data.h"

// The varlen forward (as flash_attention_score's kernel) recomputes missing statistics: when any
// of softmax_max / softmax_sum / attention_in is absent it runs, and the absent ones are taken
// from it (the given ones are used as given); LAZY_PV and KV_NZ are its P.V mode and K/V staging
// (the tiling key's).
using RecomputeVariant =
    AttentionCore::ForwardVariant<AttentionCore::SplitTnd, AttentionCore::KvStrided, AttentionCore::ScorePse,
                                  AttentionCore::MaskSparseMode, AttentionCore::SoftmaxDropout>;

template <typename T, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void Run(const FlashAttentionScoreGradTilingData &tiling, AttentionCore::BackwardTensors &t,
                           GM_ADDR userWorkspace)
{
    if (tiling.recompute != 0) {
        AttentionCore::ForwardTensors<RecomputeVariant> f;
        f.query = t.query;
        f.key = t.key;
        f.value = t.value;
        f.out = userWorkspace + tiling.attentionOffset;
        f.workspace = userWorkspace;
        f.softmaxMax = userWorkspace + tiling.statsMaxOffset;
        f.softmaxSum = userWorkspace + tiling.statsSumOffset;
        f.split = {t.seqQ, t.seqKv};
        f.score.pse = t.pse;
        f.mask = {t.mask, t.prefix};
        f.softmax = {t.dropMask, t.seqQ, t.seqKv};
        AttentionCore::RunForward<T, RecomputeVariant, LAZY_PV, KV_NZ>(tiling.forward, f);
        AscendC::SyncAll<false>();  // the statistics and the output are in GM for every core
        if (t.softmaxMax == nullptr) t.softmaxMax = f.softmaxMax;
        if (t.softmaxSum == nullptr) t.softmaxSum = f.softmaxSum;
        if (t.attentionIn == nullptr) t.attentionIn = f.out;
    }
    t.workspace = userWorkspace + tiling.backwardOffset;
    AttentionCore::RunBackward<T>(&tiling.params, t);
}

extern "C" __global__ __aicore__ void
flash_attention_score_grad(GM_ADDR query, GM_ADDR key, GM_ADDR value, GM_ADDR dy, GM_ADDR pse_shift, GM_ADDR drop_mask,
                           GM_ADDR atten_mask, GM_ADDR softmax_max, GM_ADDR softmax_sum, GM_ADDR attention_in,
                           GM_ADDR actual_seq_qlen, GM_ADDR actual_seq_kvlen, GM_ADDR prefix, GM_ADDR q_start_idx,
                           GM_ADDR kv_start_idx, GM_ADDR sink, GM_ADDR query_rope, GM_ADDR key_rope,
                           GM_ADDR padding_mask, GM_ADDR softmax_in, GM_ADDR dq, GM_ADDR dk, GM_ADDR dv, GM_ADDR dsink,
                           GM_ADDR dq_rope, GM_ADDR dk_rope, GM_ADDR dpse, GM_ADDR workspace, GM_ADDR tiling)
{
    (void)padding_mask;  // reserved by the spec: never read
    (void)softmax_in;    // reserved by the spec: never read
    (void)dpse;          // reserved by the spec: never written
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(FlashAttentionScoreGradTilingData, tilingData, tiling);
    AttentionCore::BackwardTensors t;
    t.query = query;
    t.key = key;
    t.value = value;
    t.dy = dy;
    t.pse = pse_shift;
    t.dropMask = drop_mask;
    t.mask = atten_mask;
    t.softmaxMax = softmax_max;
    t.softmaxSum = softmax_sum;
    t.attentionIn = attention_in;
    t.seqQ = actual_seq_qlen;
    t.seqKv = actual_seq_kvlen;
    t.prefix = prefix;
    t.qStartIdx = q_start_idx;
    t.kvStartIdx = kv_start_idx;
    t.sink = sink;
    t.queryRope = query_rope;
    t.keyRope = key_rope;
    t.dq = dq;
    t.dk = dk;
    t.dv = dv;
    t.dsink = dsink;
    t.dqRope = dq_rope;
    t.dkRope = dk_rope;
    GM_ADDR userWorkspace = AscendC::GetUserWorkspace(workspace);
    if (TILING_KEY_IS(FAG_TILING_KEY_FP16)) {
        Run<half, false, false>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_FP16_LAZY)) {
        Run<half, true, false>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_FP16_KV_NZ)) {
        Run<half, false, true>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_FP16_LAZY_KV_NZ)) {
        Run<half, true, true>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_BF16)) {
        Run<bfloat16_t, false, false>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_BF16_LAZY)) {
        Run<bfloat16_t, true, false>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_BF16_KV_NZ)) {
        Run<bfloat16_t, false, true>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_BF16_LAZY_KV_NZ)) {
        Run<bfloat16_t, true, true>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_FP32)) {
        Run<float, false, false>(tilingData, t, userWorkspace);
    } else if (TILING_KEY_IS(FAG_TILING_KEY_FP32_LAZY)) {
        Run<float, true, false>(tilingData, t, userWorkspace);
    }
}
