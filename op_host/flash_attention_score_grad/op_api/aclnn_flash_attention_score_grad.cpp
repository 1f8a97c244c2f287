// aclnnFlashAttentionUnpaddingScoreGradV5 on the CPU target: the spec-003 validation
// (flash_attention_score_grad_checks.cpp), then the emulator's op runner (OpDef check, tiling,
// executor) and the kernel launch.
#include "aclnn_flash_attention_score_grad.h"

#include <cstdint>

#include "emu/op_runner.h"
#include "flash_attention_score_grad_checks.h"

extern "C" void flash_attention_score_grad(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *dy,
                                           uint8_t *pse, uint8_t *dropMask, uint8_t *attenMask, uint8_t *softmaxMax, uint8_t *softmaxSum,
                                           uint8_t *attentionIn, uint8_t *seqQ, uint8_t *seqKv, uint8_t *prefix, uint8_t *qStartIdx,
                                           uint8_t *kvStartIdx, uint8_t *sink,
                                           uint8_t *queryRope, uint8_t *keyRope, uint8_t *paddingMask,
                                           uint8_t *softmaxIn, uint8_t *dq, uint8_t *dk, uint8_t *dv, uint8_t *dsink,
                                           uint8_t *dqRope, uint8_t *dkRope, uint8_t *dpse, uint8_t *workspace,
                                           uint8_t *tiling);

extern "C" aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
    const aclTensor *query, const aclTensor *queryRope, const aclTensor *keyIn, const aclTensor *keyInRope,
    const aclTensor *value, const aclTensor *dy, const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional,
    const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional, const aclTensor *softmaxMaxOptional,
    const aclTensor *softmaxSumOptional, const aclTensor *softmaxInOptional, const aclTensor *attentionInOptional,
    const aclTensor *sinkInOptional, const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, const aclIntArray *qStartIdxOptional,
    const aclIntArray *kvStartIdxOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode, int64_t pseType,
    char *softmaxInLayout, const aclTensor *dqOut, const aclTensor *dqRopeOut, const aclTensor *dkOut,
    const aclTensor *dkRopeOut, const aclTensor *dvOut, const aclTensor *dpseOut, const aclTensor *dsinkOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const FagV5Args args{query, queryRope, keyIn, keyInRope, value, dy, pseShiftOptional, dropMaskOptional,
                         paddingMaskOptional, attenMaskOptional, softmaxMaxOptional, softmaxSumOptional,
                         softmaxInOptional, attentionInOptional, sinkInOptional, prefixOptional,
                         actualSeqQLenOptional, actualSeqKvLenOptional, qStartIdxOptional, kvStartIdxOptional,
                         scaleValue, keepProb, preTokens, nextTokens, headNum, inputLayout, innerPrecise,
                         sparseMode, pseType, softmaxInLayout, dqOut, dqRopeOut, dkOut, dkRopeOut, dvOut, dpseOut,
                         dsinkOut, workspaceSize, executor};
    const aclnnStatus status = FagV5CheckParams(args);
    if (status != ACLNN_SUCCESS) return status;

    // With keepProb 1 the drop mask is not read; the prefix is read by sparse mode 6 with a mask
    // only; softmaxIn and dpse are unused by the spec; the start indices only shift generated
    // pse (types 2/3).
    const bool dropout = dropMaskOptional != nullptr && keepProb < 1.0;
    const bool alibi = pseShiftOptional != nullptr && pseType >= 2;
    const bool prefix = prefixOptional != nullptr && sparseMode == 6 && attenMaskOptional != nullptr;
    emu::OpRunner runner("FlashAttentionScoreGrad");
    runner.Input(query).Input(keyIn).Input(value).Input(dy).Input(pseShiftOptional)
        .Input(dropout ? dropMaskOptional : nullptr).Input(attenMaskOptional).Input(softmaxMaxOptional)
        .Input(softmaxSumOptional).Input(attentionInOptional).Input(actualSeqQLenOptional)
        .Input(actualSeqKvLenOptional).Input(prefix ? prefixOptional : static_cast<const aclIntArray *>(nullptr))
        .Input(alibi ? qStartIdxOptional : nullptr).Input(alibi ? kvStartIdxOptional : nullptr)
        .Input(sinkInOptional).Input(queryRope).Input(keyInRope)
        .Input(static_cast<const aclTensor *>(nullptr))  // paddingMask: reserved by the spec
        .Input(static_cast<const aclTensor *>(nullptr))  // softmaxIn: reserved by the spec
        .Output(dqOut).Output(dkOut).Output(dvOut)
        .Output(sinkInOptional != nullptr ? dsinkOut : nullptr)
        .Output(queryRope != nullptr ? dqRopeOut : nullptr)
        .Output(queryRope != nullptr ? dkRopeOut : nullptr)
        .Output(static_cast<const aclTensor *>(nullptr));  // dpse: reserved by the spec
    runner.Attr("scale_value", scaleValue)
        .Attr("keep_prob", keepProb)
        .Attr("pre_tokens", preTokens)
        .Attr("next_tokens", nextTokens)
        .Attr("head_num", headNum)
        .Attr("input_layout", static_cast<const char *>(inputLayout))
        .Attr("sparse_mode", sparseMode)
        .Attr("pse_type", pseType)
        .Attr("softmax_in_layout", static_cast<const char *>(softmaxInLayout))
        .Attr("inner_precise", innerPrecise);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(void *workspace, uint64_t workspaceSize,
                                                              aclOpExecutor *executor, const aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, flash_attention_score_grad,
                             emu::CoreMix::MIX_AIC_1_2, "flash_attention_score_grad");
}
