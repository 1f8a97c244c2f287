// Argument validation of aclnnIncreFlashAttentionV4GetWorkspaceSize (spec 002, Atlas A2):
// returns 0 or the documented status (161001 null required argument, 161002 dtype / format /
// shape / attribute violation, or a feature this implementation does not provide) after
// logging one line naming the parameter and the rule.
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"

struct IfaArgs {
    const aclTensor *query;
    const aclTensorList *key;
    const aclTensorList *value;
    const aclTensor *pseShift;
    const aclTensor *attenMask;
    const aclIntArray *actualSeqLengths;
    const aclTensor *dequantScale1;
    const aclTensor *quantScale1;
    const aclTensor *dequantScale2;
    const aclTensor *quantScale2;
    const aclTensor *quantOffset2;
    const aclTensor *antiquantScale;
    const aclTensor *antiquantOffset;
    const aclTensor *blockTable;
    const aclTensor *kvPaddingSize;
    int64_t numHeads;
    double scaleValue;
    const char *inputLayout;
    int64_t numKeyValueHeads;
    int64_t blockSize;
    int64_t innerPrecise;
    const aclTensor *attentionOut;
    const uint64_t *workspaceSize;
    aclOpExecutor *const *executor;
};

// The arguments with every optional tensor that is given as an empty tensor set to null: spec 002
// lets each of them be empty, and an empty one means the same as one not passed. The functions
// below take the arguments after it.
IfaArgs IncreFlashAttentionDropEmptyOptionals(IfaArgs a);

aclnnStatus IncreFlashAttentionCheckParams(const IfaArgs &a);

// The kvPaddingSize the kernel gets once the checks passed: null unless the call asks for KV left
// padding (one value, with actualSeqLengths; without them the padding is the ordinary right one).
const aclTensor *IncreFlashAttentionLeftPadding(const IfaArgs &a);
