// Argument validation of aclnnPromptFlashAttentionGetWorkspaceSize (spec 000, Atlas A2):
// returns 0 or the documented status (161001 null required argument, 161002 dtype / format /
// shape / attribute violation) after logging one line naming the parameter and the rule.
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"

aclnnStatus PromptFlashAttentionCheckParams(const aclTensor *query, const aclTensor *key, const aclTensor *value,
                                            const aclTensor *attenMask, const aclIntArray *actualSeqLengths,
                                            int64_t numHeads, double scaleValue, int64_t preTokens, int64_t nextTokens,
                                            const char *inputLayout, int64_t numKeyValueHeads,
                                            const aclTensor *attentionOut, const uint64_t *workspaceSize,
                                            aclOpExecutor *const *executor);
