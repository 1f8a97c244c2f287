// aclnn API of the cube proof operator: c = a * b, a [M, K], b [K, N], c [M, N], all fp16 or
// all bf16 (fp32 accumulation), ND layout.
#ifndef ACLNN_CUBE_MATMUL_H_
#define ACLNN_CUBE_MATMUL_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnCubeMatmulGetWorkspaceSize(const aclTensor *a, const aclTensor *b, aclTensor *c,
                                            uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnCubeMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
