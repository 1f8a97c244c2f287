// The launch seam of aclnnFlashAttentionVarLenScore: the two-stage launcher of the OpType
// FlashAttentionScore, parameters in OpDef order. The public API validates its arguments
// (flash_attention_var_len_score_checks.cpp), maps them onto the OpDef (TND with the cumulative
// lengths) and calls this launcher, the only code that differs between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_flash_attention_score.h/.cpp;
//    cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree with
//    the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: flash_attention_score_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include "../../common/op_api/launch_seam.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_flash_attention_score.h"
#endif

// aclnnInnerFlashAttentionScore's parameters in OpDef order (launch_seam.h).
#define FLASH_ATTENTION_SCORE_SEAM(IN, ATTR, OUT)                                                                      \
    IN(const aclTensor *, query)                                                                                       \
    IN(const aclTensor *, key)                                                                                         \
    IN(const aclTensor *, value)                                                                                       \
    IN(const aclTensor *, realShiftOptional)                                                                           \
    IN(const aclTensor *, dropMaskOptional)                                                                            \
    IN(const aclTensor *, paddingMaskOptional)                                                                         \
    IN(const aclTensor *, attenMaskOptional)                                                                           \
    IN(const aclIntArray *, prefixOptional)                                                                            \
    IN(const aclIntArray *, actualSeqQlenOptional)                                                                     \
    IN(const aclIntArray *, actualSeqKvlenOptional)                                                                    \
    ATTR(double, scaleValue, "scale_value")                                                                            \
    ATTR(double, keepProb, "keep_prob")                                                                                \
    ATTR(int64_t, preTockens, "pre_tockens")                                                                           \
    ATTR(int64_t, nextTockens, "next_tockens")                                                                         \
    ATTR(int64_t, headNum, "head_num")                                                                                 \
    ATTR(char *, inputLayout, "input_layout")                                                                          \
    ATTR(int64_t, innerPrecise, "inner_precise")                                                                       \
    ATTR(int64_t, sparseMode, "sparse_mode")                                                                           \
    OUT(const aclTensor *, softmaxMaxOut)                                                                              \
    OUT(const aclTensor *, softmaxSumOut)                                                                              \
    OUT(const aclTensor *, softmaxOutOutOptional)                                                                      \
    OUT(const aclTensor *, attentionOutOut)

FA_DECLARE_LAUNCH_SEAM(FlashAttentionScore, FLASH_ATTENTION_SCORE_SEAM)
