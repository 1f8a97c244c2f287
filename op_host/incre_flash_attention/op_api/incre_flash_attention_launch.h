// The launch seam of aclnnIncreFlashAttentionV4: the two-stage launcher of the OpType
// IncreFlashAttention, parameters in OpDef order. The public API validates its arguments
// (incre_flash_attention_checks.cpp) and calls this launcher, the only code that differs
// between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_incre_flash_attention.h/.cpp;
//    cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree with
//    the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: incre_flash_attention_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include "../../common/op_api/launch_seam.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_incre_flash_attention.h"
#endif

// aclnnInnerIncreFlashAttention's parameters in OpDef order (launch_seam.h).
#define INCRE_FLASH_ATTENTION_SEAM(IN, ATTR, OUT)                                                                      \
    IN(const aclTensor *, query)                                                                                       \
    IN(const aclTensorList *, key)                                                                                     \
    IN(const aclTensorList *, value)                                                                                   \
    IN(const aclTensor *, pseShiftOptional)                                                                            \
    IN(const aclTensor *, attenMaskOptional)                                                                           \
    IN(const aclIntArray *, actualSeqLengthsOptional)                                                                  \
    IN(const aclTensor *, dequantScale1Optional)                                                                       \
    IN(const aclTensor *, quantScale1Optional)                                                                         \
    IN(const aclTensor *, dequantScale2Optional)                                                                       \
    IN(const aclTensor *, quantScale2Optional)                                                                         \
    IN(const aclTensor *, quantOffset2Optional)                                                                        \
    IN(const aclTensor *, antiquantScaleOptional)                                                                      \
    IN(const aclTensor *, antiquantOffsetOptional)                                                                     \
    IN(const aclTensor *, blockTableOptional)                                                                          \
    IN(const aclTensor *, kvPaddingSizeOptional)                                                                       \
    ATTR(int64_t, numHeads, "num_heads")                                                                               \
    ATTR(double, scaleValue, "scale_value")                                                                            \
    ATTR(char *, inputLayoutOptional, "input_layout")                                                                  \
    ATTR(int64_t, numKeyValueHeads, "num_key_value_heads")                                                             \
    ATTR(int64_t, blockSize, "block_size")                                                                             \
    ATTR(int64_t, innerPrecise, "inner_precise")                                                                       \
    OUT(const aclTensor *, out)

FA_DECLARE_LAUNCH_SEAM(IncreFlashAttention, INCRE_FLASH_ATTENTION_SEAM)
