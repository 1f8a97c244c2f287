// Validation of aclnnFlashAttentionUnpaddingScoreGradV5's arguments against spec 003 (Atlas A2).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"

struct FagV5Args {
    const aclTensor *query, *queryRope, *key, *keyRope, *value, *dy, *pse, *dropMask, *paddingMask, *attenMask,
        *softmaxMax, *softmaxSum, *softmaxIn, *attentionIn, *sink;
    const aclIntArray *prefix, *seqQ, *seqKv, *qStartIdx, *kvStartIdx;
    double scaleValue, keepProb;
    int64_t preTokens, nextTokens, headNum;
    const char *inputLayout;
    int64_t innerPrecise, sparseMode, pseType;
    const char *softmaxInLayout;
    const aclTensor *dq, *dqRope, *dk, *dkRope, *dv, *dpse, *dsink;
    const uint64_t *workspaceSize;
    aclOpExecutor *const *executor;
};

aclnnStatus FagV5CheckParams(const FagV5Args &a);
