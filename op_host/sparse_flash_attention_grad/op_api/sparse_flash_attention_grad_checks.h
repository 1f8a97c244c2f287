// Validation of aclnnSparseFlashAttentionGrad's arguments against spec 004 (Atlas A2).
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"

struct SfagArgs {
    const aclTensor *query, *key, *value, *sparseIndices, *dOut, *out, *softmaxMax, *softmaxSum, *seqQ, *seqKv,
        *queryRope, *keyRope;
    double scaleValue;
    int64_t sparseBlockSize;
    const char *layout;
    int64_t sparseMode, preTokens, nextTokens;
    bool deterministic;
    const aclTensor *dq, *dk, *dv, *dqRope, *dkRope;
    const uint64_t *workspaceSize;
    aclOpExecutor *const *executor;
};

// ACLNN_SUCCESS or the documented status (161001 / 161002) after logging the failed rule.
aclnnStatus SfagCheckParams(const SfagArgs &a);

// The layout the call uses ("BSND" when layoutOptional is null).
const char *SfagLayout(const char *layoutOptional);
