// aclnnSparseFlashAttentionGrad: the backward of SparseFlashAttention (MLA, one KV head, KV
// gathered by top-k block indices), the two-stage aclnn API of spec 004. GetWorkspaceSize
// validates the documented constraints (161001 null pointer, 161002 invalid dtype/format/
// shape/attribute or a feature this implementation does not provide) and returns the
// workspace size and an executor.
#ifndef ACLNN_SPARSE_FLASH_ATTENTION_GRAD_H_
#define ACLNN_SPARSE_FLASH_ATTENTION_GRAD_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnSparseFlashAttentionGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *dOut, const aclTensor *out, const aclTensor *softmaxMax, const aclTensor *softmaxSum,
    const aclTensor *actualSeqLengthsQueryOptional, const aclTensor *actualSeqLengthskvOptional,
    const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, double scaleValue, int64_t sparseBlockSize,
    char *layoutOptional, int64_t sparseMode, int64_t preTokens, int64_t nextTokens, bool deterministic,
    const aclTensor *dQueryOut, const aclTensor *dKeyOut, const aclTensor *dValueOut,
    const aclTensor *dQueryRopeOutOptional, const aclTensor *dKeyRopeOutOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnSparseFlashAttentionGrad(void *workspace,
                                                                                 uint64_t workspaceSize,
                                                                                 aclOpExecutor *executor,
                                                                                 aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // ACLNN_SPARSE_FLASH_ATTENTION_GRAD_H_
