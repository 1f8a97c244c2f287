// Argument validation of aclnnFlashAttentionVarLenScoreGetWorkspaceSize (spec 001, Atlas A2):
// returns 0 or the documented status (161001 null required argument, 161002 dtype / format /
// shape / attribute violation, or a feature this implementation does not provide yet) after
// logging one line naming the parameter and the rule.
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"

struct VarLenScoreArgs {
    const aclTensor *query, *key, *value, *realShift, *dropMask, *paddingMask, *attenMask;
    const aclIntArray *prefix, *actualSeqQLen, *actualSeqKvLen;
    double scaleValue, keepProb;
    int64_t preTokens, nextTokens, headNum;
    const char *inputLayout;
    int64_t innerPrecise, sparseMode;
    const aclTensor *softmaxMax, *softmaxSum, *softmaxOut, *attentionOut;
};

aclnnStatus FlashAttentionVarLenScoreCheckParams(const VarLenScoreArgs &a, const uint64_t *workspaceSize,
                                                 aclOpExecutor *const *executor);

// Whether the kernel reads the prefix (sparse mode 6 with a mask).
bool VarLenScoreUsesPrefix(const VarLenScoreArgs &a);
