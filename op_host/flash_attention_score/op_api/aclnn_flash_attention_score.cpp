// aclnnFlashAttentionVarLenScore (spec 001) on every target: the spec's validation
// (flash_attention_var_len_score_checks.cpp), then the OpType FlashAttentionScore's launcher
// (flash_attention_score_launch.h: opbuild's on the NPU, the emulator's on the CPU target).
#include "aclnn_flash_attention_score.h"

#include <cstdint>

#include "../../common/op_log.h"
#include "flash_attention_score_launch.h"
#include "flash_attention_var_len_score_checks.h"
#include "opdev/op_errno.h"

extern "C" aclnnStatus aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, double scaleValueOptional, double keepProbOptional,
    int64_t preTokensOptional, int64_t nextTokensOptional, int64_t headNum, char *inputLayout,
    int64_t innerPreciseOptional, int64_t sparseModeOptional, const aclTensor *softmaxMaxOut,
    const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    VarLenScoreArgs a{query,
                      key,
                      value,
                      realShiftOptional,
                      dropMaskOptional,
                      paddingMaskOptional,
                      attenMaskOptional,
                      prefixOptional,
                      actualSeqQLenOptional,
                      actualSeqKvLenOptional,
                      scaleValueOptional,
                      keepProbOptional,
                      preTokensOptional,
                      nextTokensOptional,
                      headNum,
                      inputLayout,
                      innerPreciseOptional,
                      sparseModeOptional,
                      softmaxMaxOut,
                      softmaxSumOut,
                      softmaxOutOut,
                      attentionOutOut};
    const aclnnStatus status = FlashAttentionVarLenScoreCheckParams(a, workspaceSize, executor);
    if (status != ACLNN_SUCCESS) return status;
    if (paddingMaskOptional != nullptr) {
        FA_LOGW("aclnnFlashAttentionVarLenScore: paddingMaskOptional is reserved by the spec; the tensor is ignored");
    }

    // keep_prob == 1 means the drop mask is not read; the reserved padding mask and softmax_out
    // are not passed to the kernel.
    return aclnnInnerFlashAttentionScoreGetWorkspaceSize(
        query, key, value, realShiftOptional, keepProbOptional < 1.0 ? dropMaskOptional : nullptr, nullptr,
        attenMaskOptional, VarLenScoreUsesPrefix(a) ? prefixOptional : nullptr, actualSeqQLenOptional,
        actualSeqKvLenOptional, scaleValueOptional, keepProbOptional, preTokensOptional, nextTokensOptional, headNum,
        inputLayout, innerPreciseOptional, sparseModeOptional, softmaxMaxOut, softmaxSumOut, nullptr, attentionOutOut,
        workspaceSize, executor);
}

extern "C" aclnnStatus aclnnFlashAttentionVarLenScore(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                      const aclrtStream stream)
{
    return aclnnInnerFlashAttentionScore(workspace, workspaceSize, executor, stream);
}
