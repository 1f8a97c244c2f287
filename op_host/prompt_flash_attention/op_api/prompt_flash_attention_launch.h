// The launch seam of aclnnPromptFlashAttention: the two-stage launcher of the OpType
// PromptFlashAttention, parameters in OpDef order. The public API validates its arguments
// (prompt_flash_attention_checks.cpp) and then calls this launcher; it is the only code that
// differs between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_prompt_flash_attention.h/.cpp;
//    cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree with
//    the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: prompt_flash_attention_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_prompt_flash_attention.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnInnerPromptFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *pseShiftOptional,
    const aclTensor *attenMaskOptional, const aclIntArray *actualSeqLengthsOptional, int64_t numHeads,
    double scaleValue, int64_t preTokens, int64_t nextTokens, char *inputLayoutOptional, int64_t numKeyValueHeads,
    const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnInnerPromptFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                           aclrtStream stream);

#ifdef __cplusplus
}
#endif
