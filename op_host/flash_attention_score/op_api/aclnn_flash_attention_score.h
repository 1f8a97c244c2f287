// aclnnFlashAttentionVarLenScore: training-time FlashAttention over variable-length sequences
// packed in the TND layout, the two-stage aclnn API of spec 001. GetWorkspaceSize validates
// every documented constraint (161001 null pointer, 161002 invalid dtype/format/shape/attribute)
// and returns the workspace size and an executor; the second call runs the operator on
// `stream`. Outputs: attention_out [T, N, D] and the softmax statistics softmax_max /
// softmax_sum [T, N, 8] (fp32, 8 replicated values) that the backward consumes.
#ifndef ACLNN_FLASH_ATTENTION_SCORE_H_
#define ACLNN_FLASH_ATTENTION_SCORE_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, double scaleValueOptional, double keepProbOptional,
    int64_t preTokensOptional, int64_t nextTokensOptional, int64_t headNum, char *inputLayout,
    int64_t innerPreciseOptional, int64_t sparseModeOptional, const aclTensor *softmaxMaxOut,
    const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnFlashAttentionVarLenScore(void *workspace,
                                                                                  uint64_t workspaceSize,
                                                                                  aclOpExecutor *executor,
                                                                                  const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // ACLNN_FLASH_ATTENTION_SCORE_H_
