// aclnnPromptFlashAttention: FlashAttention for full-sequence inference (prefill), the
// two-stage aclnn API of spec 000. GetWorkspaceSize validates every documented constraint
// (161001 null pointer, 161002 invalid dtype/format/shape/attribute) and returns the workspace
// size and an executor; the second call runs the operator on `stream`.
#ifndef ACLNN_PROMPT_FLASH_ATTENTION_H_
#define ACLNN_PROMPT_FLASH_ATTENTION_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnPromptFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, int64_t numHeads, double scaleValue,
    int64_t preTokens, int64_t nextTokens, char *inputLayout, int64_t numKeyValueHeads, const aclTensor *attentionOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnPromptFlashAttention(void *workspace, uint64_t workspaceSize,
                                                                             aclOpExecutor *executor,
                                                                             const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // ACLNN_PROMPT_FLASH_ATTENTION_H_
