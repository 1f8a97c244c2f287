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
#include "../../common/op_api/launch_seam.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_sparse_flash_attention_grad.h"
#endif

// aclnnInnerSparseFlashAttentionGrad's parameters in OpDef order (launch_seam.h).
#define SPARSE_FLASH_ATTENTION_GRAD_SEAM(IN, ATTR, OUT)                                                                \
    IN(const aclTensor *, query)                                                                                       \
    IN(const aclTensor *, key)                                                                                         \
    IN(const aclTensor *, value)                                                                                       \
    IN(const aclTensor *, sparseIndices)                                                                               \
    IN(const aclTensor *, dOut)                                                                                        \
    IN(const aclTensor *, out)                                                                                         \
    IN(const aclTensor *, softmaxMax)                                                                                  \
    IN(const aclTensor *, softmaxSum)                                                                                  \
    IN(const aclTensor *, actualSeqQlenOptional)                                                                       \
    IN(const aclTensor *, actualSeqKvlenOptional)                                                                      \
    IN(const aclTensor *, queryRopeOptional)                                                                           \
    IN(const aclTensor *, keyRopeOptional)                                                                             \
    ATTR(double, scaleValue, "scale_value")                                                                            \
    ATTR(int64_t, sparseBlockSize, "sparse_block_size")                                                                \
    ATTR(char *, layoutOptional, "layout")                                                                             \
    ATTR(int64_t, sparseMode, "sparse_mode")                                                                           \
    ATTR(int64_t, preTokens, "pre_tokens")                                                                             \
    ATTR(int64_t, nextTokens, "next_tokens")                                                                           \
    ATTR(bool, deterministic, "deterministic")                                                                         \
    OUT(const aclTensor *, dQueryOut)                                                                                  \
    OUT(const aclTensor *, dKeyOut)                                                                                    \
    OUT(const aclTensor *, dValueOut)                                                                                  \
    OUT(const aclTensor *, dQueryRopeOutOptional)                                                                      \
    OUT(const aclTensor *, dKeyRopeOutOptional)

FA_DECLARE_LAUNCH_SEAM(SparseFlashAttentionGrad, SPARSE_FLASH_ATTENTION_GRAD_SEAM)
