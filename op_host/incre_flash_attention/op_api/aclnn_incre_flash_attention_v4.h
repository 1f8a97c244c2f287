// aclnnIncreFlashAttentionV4: FlashAttention for incremental (decode) inference, query S = 1
// against a KV cache, the two-stage aclnn API of spec 002. GetWorkspaceSize validates every
// documented constraint (161001 null pointer, 161002 invalid dtype/format/shape/attribute or
// a feature this implementation does not provide) and returns the workspace size and an
// executor; the second call runs the operator on `stream`.
#ifndef ACLNN_INCRE_FLASH_ATTENTION_V4_H_
#define ACLNN_INCRE_FLASH_ATTENTION_V4_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, const aclTensor *dequantScale1,
    const aclTensor *quantScale1, const aclTensor *dequantScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, const aclTensor *antiquantScale, const aclTensor *antiquantOffset,
    const aclTensor *blocktable, const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue, char *inputLayout,
    int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise, const aclTensor *attentionOut,
    uint64_t *workspaceSize, aclOpExecutor **executor);

__attribute__((visibility("default"))) aclnnStatus aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize,
                                                                              aclOpExecutor *executor,
                                                                              const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // ACLNN_INCRE_FLASH_ATTENTION_V4_H_
