// aclnnFlashAttentionUnpaddingScoreGradV5: the FlashAttention backward for TND (varlen)
// inputs, the two-stage aclnn API of spec 003. GetWorkspaceSize validates the documented
// constraints (161001 null pointer, 161002 invalid dtype/format/shape/attribute or a feature
// this implementation does not provide) and returns the workspace size and an executor.
#ifndef ACLNN_FLASH_ATTENTION_SCORE_GRAD_H_
#define ACLNN_FLASH_ATTENTION_SCORE_GRAD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5GetWorkspaceSize(
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
    uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnFlashAttentionUnpaddingScoreGradV5(void *workspace,
                                                                                           uint64_t workspaceSize,
                                                                                           aclOpExecutor *executor,
                                                                                           const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // ACLNN_FLASH_ATTENTION_SCORE_GRAD_H_
