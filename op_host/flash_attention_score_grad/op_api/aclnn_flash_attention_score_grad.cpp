// aclnnFlashAttentionUnpaddingScoreGradV5 (spec 003) on every target: the spec's validation
// (flash_attention_score_grad_checks.cpp), then the OpType FlashAttentionScoreGrad's launcher
// (flash_attention_score_grad_launch.h: opbuild's on the NPU, the emulator's on the CPU target).
#include "aclnn_flash_attention_score_grad.h"

#include <cstdint>

#include "flash_attention_score_grad_checks.h"
#include "flash_attention_score_grad_launch.h"
#include "opdev/op_errno.h"

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
    const FagV5Args args{query,
                         queryRope,
                         keyIn,
                         keyInRope,
                         value,
                         dy,
                         pseShiftOptional,
                         dropMaskOptional,
                         paddingMaskOptional,
                         attenMaskOptional,
                         softmaxMaxOptional,
                         softmaxSumOptional,
                         softmaxInOptional,
                         attentionInOptional,
                         sinkInOptional,
                         prefixOptional,
                         actualSeqQLenOptional,
                         actualSeqKvLenOptional,
                         qStartIdxOptional,
                         kvStartIdxOptional,
                         scaleValue,
                         keepProb,
                         preTokens,
                         nextTokens,
                         headNum,
                         inputLayout,
                         innerPrecise,
                         sparseMode,
                         pseType,
                         softmaxInLayout,
                         dqOut,
                         dqRopeOut,
                         dkOut,
                         dkRopeOut,
                         dvOut,
                         dpseOut,
                         dsinkOut,
                         workspaceSize,
                         executor};
    const aclnnStatus status = FagV5CheckParams(args);
    if (status != ACLNN_SUCCESS) return status;

    // With keepProb 1 the drop mask is not read; the prefix is read by sparse mode 6 with a mask
    // only; the start indices only shift generated pse (types 2/3); paddingMask, softmaxIn and
    // dpse are reserved by the spec and never passed on.
    const bool dropout = dropMaskOptional != nullptr && keepProb < 1.0;
    const bool alibi = pseShiftOptional != nullptr && pseType >= 2;
    const bool prefix = prefixOptional != nullptr && sparseMode == 6 && attenMaskOptional != nullptr;
    return aclnnInnerFlashAttentionScoreGradGetWorkspaceSize(
        query, keyIn, value, dy, pseShiftOptional, dropout ? dropMaskOptional : nullptr, attenMaskOptional,
        softmaxMaxOptional, softmaxSumOptional, attentionInOptional, actualSeqQLenOptional, actualSeqKvLenOptional,
        prefix ? prefixOptional : nullptr, alibi ? qStartIdxOptional : nullptr, alibi ? kvStartIdxOptional : nullptr,
        sinkInOptional, queryRope, keyInRope, nullptr, nullptr, scaleValue, keepProb, preTokens, nextTokens, headNum,
        inputLayout, sparseMode, pseType, softmaxInLayout, innerPrecise, dqOut, dkOut, dvOut,
        sinkInOptional != nullptr ? dsinkOut : nullptr, queryRope != nullptr ? dqRopeOut : nullptr,
        queryRope != nullptr ? dkRopeOut : nullptr, nullptr, workspaceSize, executor);
}

extern "C" aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(void *workspace, uint64_t workspaceSize,
                                                               aclOpExecutor *executor, const aclrtStream stream)
{
    return aclnnInnerFlashAttentionScoreGrad(workspace, workspaceSize, executor, stream);
}
