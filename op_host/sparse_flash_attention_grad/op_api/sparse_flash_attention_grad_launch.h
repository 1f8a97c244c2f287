// The launch seam of aclnnSparseFlashAttentionGrad: the two-stage launcher of the OpType
// SparseFlashAttentionGrad, parameters in OpDef order. The public API (same name as opbuild's
// default, hence the aclnnInner prefix of the launcher) validates its arguments
// (sparse_flash_attention_grad_checks.cpp) and calls this launcher, the only code that differs
// between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_sparse_flash_attention_grad.h/
//    .cpp; cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree
//    with the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: sparse_flash_attention_grad_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_sparse_flash_attention_grad.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnInnerSparseFlashAttentionGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *dOut, const aclTensor *out, const aclTensor *softmaxMax, const aclTensor *softmaxSum,
    const aclTensor *actualSeqQlenOptional, const aclTensor *actualSeqKvlenOptional, const aclTensor *queryRopeOptional,
    const aclTensor *keyRopeOptional, double scaleValue, int64_t sparseBlockSize, char *layoutOptional,
    int64_t sparseMode, int64_t preTokens, int64_t nextTokens, bool deterministic, const aclTensor *dQueryOut,
    const aclTensor *dKeyOut, const aclTensor *dValueOut, const aclTensor *dQueryRopeOutOptional,
    const aclTensor *dKeyRopeOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnInnerSparseFlashAttentionGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                               aclrtStream stream);

#ifdef __cplusplus
}
#endif
