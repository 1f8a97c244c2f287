// aclnn API of the vector proof operator: z = alpha * x + y (x, y, z: same shape, float or half).
#ifndef ACLNN_VECTOR_AXPY_H_
#define ACLNN_VECTOR_AXPY_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

// tileLength: elements per pipeline tile (0: as many as the UB holds).
aclnnStatus aclnnVectorAxpyGetWorkspaceSize(const aclTensor *x, const aclTensor *y, double alpha, int64_t tileLength,
                                            aclTensor *z, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnVectorAxpy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
