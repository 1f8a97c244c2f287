// The launch seam of aclnnPromptFlashAttention: the two-stage launcher of the OpType
// PromptFlashAttention, parameters in OpDef order. The public API validates its arguments
// (prompt_flash_attention_checks.cpp) and then calls this launcher; it is the only code that
// differs between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_prompt_flash_attention.h/.cpp;
//    cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree with
//    the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: prompt_flash_attention_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include "../../common/op_api/launch_seam.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_prompt_flash_attention.h"
#endif

// aclnnInnerPromptFlashAttention's parameters in OpDef order (launch_seam.h).
#define PROMPT_FLASH_ATTENTION_SEAM(IN, ATTR, OUT)                                                                     \
    IN(const aclTensor *, query)                                                                                       \
    IN(const aclTensor *, key)                                                                                         \
    IN(const aclTensor *, value)                                                                                       \
    IN(const aclTensor *, pseShiftOptional)                                                                            \
    IN(const aclTensor *, attenMaskOptional)                                                                           \
    IN(const aclIntArray *, actualSeqLengthsOptional)                                                                  \
    ATTR(int64_t, numHeads, "num_heads")                                                                               \
    ATTR(double, scaleValue, "scale_value")                                                                            \
    ATTR(int64_t, preTokens, "pre_tokens")                                                                             \
    ATTR(int64_t, nextTokens, "next_tokens")                                                                           \
    ATTR(char *, inputLayoutOptional, "input_layout")                                                                  \
    ATTR(int64_t, numKeyValueHeads, "num_key_value_heads")                                                             \
    OUT(const aclTensor *, out)

FA_DECLARE_LAUNCH_SEAM(PromptFlashAttention, PROMPT_FLASH_ATTENTION_SEAM)
