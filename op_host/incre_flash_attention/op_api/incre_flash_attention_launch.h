// The launch seam of aclnnIncreFlashAttentionV4: the two-stage launcher of the OpType
// IncreFlashAttention, parameters in OpDef order. The public API validates its arguments
// (incre_flash_attention_checks.cpp) and calls this launcher, the only code that differs
// between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_incre_flash_attention.h/.cpp;
//    cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree with
//    the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: incre_flash_attention_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_incre_flash_attention.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnInnerIncreFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShiftOptional,
    const aclTensor *attenMaskOptional, const aclIntArray *actualSeqLengthsOptional,
    const aclTensor *dequantScale1Optional, const aclTensor *quantScale1Optional,
    const aclTensor *dequantScale2Optional, const aclTensor *quantScale2Optional, const aclTensor *quantOffset2Optional,
    const aclTensor *antiquantScaleOptional, const aclTensor *antiquantOffsetOptional,
    const aclTensor *blockTableOptional, const aclTensor *kvPaddingSizeOptional, int64_t numHeads, double scaleValue,
    char *inputLayoutOptional, int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnInnerIncreFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif
