// aclnn API of the MIX proof operator: y = softmax over rows of (a * b^T); a [M, K] and
// b [N, K] fp16, y [M, N] fp32, 1 <= N <= 512. maxCores bounds the AI cores used (0 = all).
#ifndef ACLNN_MIX_SOFTMAX_H_
#define ACLNN_MIX_SOFTMAX_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnMixSoftmaxGetWorkspaceSize(const aclTensor *a, const aclTensor *b, int64_t maxCores, aclTensor *y,
                                            uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnMixSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
