// The launch seam of aclnnFlashAttentionVarLenScore: the two-stage launcher of the OpType
// FlashAttentionScore, parameters in OpDef order. The public API validates its arguments
// (flash_attention_var_len_score_checks.cpp), maps them onto the OpDef (TND with the cumulative
// lengths) and calls this launcher, the only code that differs between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_flash_attention_score.h/.cpp;
//    cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree with
//    the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: flash_attention_score_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_flash_attention_score.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnInnerFlashAttentionScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQlenOptional,
    const aclIntArray *actualSeqKvlenOptional, double scaleValue, double keepProb, int64_t preTockens,
    int64_t nextTockens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOutOptional,
    const aclTensor *attentionOutOut, uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnInnerFlashAttentionScore(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                          aclrtStream stream);

#ifdef __cplusplus
}
#endif
