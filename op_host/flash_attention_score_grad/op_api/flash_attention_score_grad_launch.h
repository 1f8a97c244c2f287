// The launch seam of aclnnFlashAttentionUnpaddingScoreGradV5: the two-stage launcher of the
// OpType FlashAttentionScoreGrad, parameters in OpDef order. The public API validates its
// arguments (flash_attention_score_grad_checks.cpp), maps them onto the OpDef and calls this
// launcher, the only code that differs between targets:
//  - NPU package: opbuild generates it from the OpDef (aclnnInner_flash_attention_score_grad.h/
//    .cpp; cmake/npu.cmake sets OPS_PROJECT_NAME=aclnnInner); the declaration below must agree
//    with the generated one, which the compiler checks (both are seen in one TU);
//  - CPU target: flash_attention_score_grad_launch_cpu.cpp (the emulator's op runner).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"
#ifdef FA_NPU_BUILD
#include "aclnnInner_flash_attention_score_grad.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnInnerFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *dy,
    const aclTensor *pseShiftOptional, const aclTensor *dropMaskOptional, const aclTensor *attenMaskOptional,
    const aclTensor *softmaxMaxOptional, const aclTensor *softmaxSumOptional, const aclTensor *attentionInOptional,
    const aclIntArray *actualSeqQlen, const aclIntArray *actualSeqKvlen, const aclIntArray *prefixOptional,
    const aclIntArray *qStartIdxOptional, const aclIntArray *kvStartIdxOptional, const aclTensor *sinkOptional,
    const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, const aclTensor *paddingMaskOptional,
    const aclTensor *softmaxInOptional, double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t headNum, char *inputLayout, int64_t sparseMode, int64_t pseType, char *softmaxInLayoutOptional,
    int64_t innerPrecise, const aclTensor *dqOut, const aclTensor *dkOut, const aclTensor *dvOut,
    const aclTensor *dsinkOutOptional, const aclTensor *dqRopeOutOptional, const aclTensor *dkRopeOutOptional,
    const aclTensor *dpseOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor);

aclnnStatus aclnnInnerFlashAttentionScoreGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                              aclrtStream stream);

#ifdef __cplusplus
}
#endif
