// The CPU target's aclnnInnerFlashAttentionScoreGrad (flash_attention_score_grad_launch.h): the
// emulator's op runner checks the call against the OpDef, runs the tiling and launches the
// kernel on the emulated cores. What opbuild generates for the NPU package.
#include "flash_attention_score_grad_launch.h"

#include "emu/op_runner.h"

extern "C" void flash_attention_score_grad(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *dy, uint8_t *pse,
                                           uint8_t *dropMask, uint8_t *attenMask, uint8_t *softmaxMax,
                                           uint8_t *softmaxSum, uint8_t *attentionIn, uint8_t *seqQ, uint8_t *seqKv,
                                           uint8_t *prefix, uint8_t *qStartIdx, uint8_t *kvStartIdx, uint8_t *sink,
                                           uint8_t *queryRope, uint8_t *keyRope, uint8_t *paddingMask,
                                           uint8_t *softmaxIn, uint8_t *dq, uint8_t *dk, uint8_t *dv, uint8_t *dsink,
                                           uint8_t *dqRope, uint8_t *dkRope, uint8_t *dpse, uint8_t *workspace,
                                           uint8_t *tiling);

extern "C" aclnnStatus aclnnInnerFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional, const aclTensor *attentionInOptional,
    const aclIntArray *actualSeqQlen, const aclIntArray *actualSeqKvlen, const aclIntArray *prefixOptional,
    const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, const aclTensor *sinkOptional,
    const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, const aclTensor *paddingMaskOptional,
    const aclTensor *softmaxInOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t sparseMode, int64_t pseType, char *softmaxInLayoutOptional,
    int64_t innerPrecise, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut,
    const aclTensor *dsinkOutOptional, const aclTensor *dqRopeOutOptional, const aclTensor *dkRopeOutOptional,
    const aclTensor *dpseOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("FlashAttentionScoreGrad");
    runner.Input(query)
        .Input(key)
        .Input(value)
        .Input(dy)
        .Input(pseShiftOptional)
        .Input(dropMaskOptional)
        .Input(attenMaskOptional)
        .Input(softmaxMaxOptional)
        .Input(softmaxSumOptional)
        .Input(attentionInOptional)
        .Input(actualSeqQlen)
        .Input(actualSeqKvlen)
        .Input(prefixOptional)
        .Input(qStartIdxOptional)
        .Input(kvStartIdxOptional)
        .Input(sinkOptional)
        .Input(queryRopeOptional)
        .Input(keyRopeOptional)
        .Input(paddingMaskOptional)
        .Input(softmaxInOptional)
        .Output(dqOut)
        .Output(dkOut)
        .Output(dvOut)
        .Output(dsinkOutOptional)
        .Output(dqRopeOutOptional)
        .Output(dkRopeOutOptional)
        .Output(dpseOutOptional);
    runner.Attr("scale_value", scaleValue)
        .Attr("keep_prob", keepProb)
        .Attr("pre_tokens", preTokens)
        .Attr("next_tokens", nextTokens)
        .Attr("head_num", headNum)
        .Attr("input_layout", static_cast<const char *>(inputLayout))
        .Attr("sparse_mode", sparseMode)
        .Attr("pse_type", pseType)
        .Attr("softmax_in_layout", static_cast<const char *>(softmaxInLayoutOptional))
        .Attr("inner_precise", innerPrecise);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnInnerFlashAttentionScoreGrad(void *workspace, uint64_t workspaceSize,
                                                         aclOpExecutor *executor, aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, flash_attention_score_grad,
                             emu::CoreMix::MIX_AIC_1_2, "flash_attention_score_grad");
}
