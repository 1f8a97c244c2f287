// The launch seam of aclnnFlashAttentionUnpaddingScoreGradV5: the two-stage launcher of the
// OpType FlashAttentionScoreGrad, parameters in OpDef order. The public API validates its
// arguments (flash_attention_score_grad_checks.cpp), maps them onto the OpDef and calls this
// launcher, the only code that differs between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_flash_attention_score_grad.h/
//    .cpp; cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree
//    with the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: flash_attention_score_grad_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include "../../common/op_api/launch_seam.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_flash_attention_score_grad.h"
#endif

// aclnnInnerFlashAttentionScoreGrad's parameters in OpDef order (launch_seam.h).
#define FLASH_ATTENTION_SCORE_GRAD_SEAM(IN, ATTR, OUT)                                                                 \
    IN(const aclTensor *, query)                                                                                       \
    IN(const aclTensor *, key)                                                                                         \
    IN(const aclTensor *, value)                                                                                       \
    IN(const aclTensor *, dy)                                                                                          \
    IN(const aclTensor *, pseShiftOptional)                                                                            \
    IN(const aclTensor *, dropMaskOptional)                                                                            \
    IN(const aclTensor *, attenMaskOptional)                                                                           \
    IN(const aclTensor *, softmaxMaxOptional)                                                                          \
    IN(const aclTensor *, softmaxSumOptional)                                                                          \
    IN(const aclTensor *, attentionInOptional)                                                                         \
    IN(const aclIntArray *, actualSeqQlen)                                                                             \
    IN(const aclIntArray *, actualSeqKvlen)                                                                            \
    IN(const aclIntArray *, prefixOptional)                                                                            \
    IN(const aclIntArray *, qStartIdxOptional)                                                                         \
    IN(const aclIntArray *, kvStartIdxOptional)                                                                        \
    IN(const aclTensor *, sinkOptional)                                                                                \
    IN(const aclTensor *, queryRopeOptional)                                                                           \
    IN(const aclTensor *, keyRopeOptional)                                                                             \
    IN(const aclTensor *, paddingMaskOptional)                                                                         \
    IN(const aclTensor *, softmaxInOptional)                                                                           \
    ATTR(double, scaleValue, "scale_value")                                                                            \
    ATTR(double, keepProb, "keep_prob")                                                                                \
    ATTR(int64_t, preTokens, "pre_tokens")                                                                             \
    ATTR(int64_t, nextTokens, "next_tokens")                                                                           \
    ATTR(int64_t, headNum, "head_num")                                                                                 \
    ATTR(char *, inputLayout, "input_layout")                                                                          \
    ATTR(int64_t, sparseMode, "sparse_mode")                                                                           \
    ATTR(int64_t, pseType, "pse_type")                                                                                 \
    ATTR(char *, softmaxInLayoutOptional, "softmax_in_layout")                                                         \
    ATTR(int64_t, innerPrecise, "inner_precise")                                                                       \
    OUT(const aclTensor *, dqOut)                                                                                      \
    OUT(const aclTensor *, dkOut)                                                                                      \
    OUT(const aclTensor *, dvOut)                                                                                      \
    OUT(const aclTensor *, dsinkOutOptional)                                                                           \
    OUT(const aclTensor *, dqRopeOutOptional)                                                                          \
    OUT(const aclTensor *, dkRopeOutOptional)                                                                          \
    OUT(const aclTensor *, dpseOutOptional)

FA_DECLARE_LAUNCH_SEAM(FlashAttentionScoreGrad, FLASH_ATTENTION_SCORE_GRAD_SEAM)
