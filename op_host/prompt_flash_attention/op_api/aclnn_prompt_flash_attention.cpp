// aclnnPromptFlashAttention (spec 000) on every target: the spec's validation
// (prompt_flash_attention_checks.cpp), then the OpType's launcher (prompt_flash_attention_launch.h:
// opbuild's on the NPU, the emulator's on the CPU target).
#include "aclnn_prompt_flash_attention.h"

#include <cstdint>

#include "../../common/op_log.h"
#include "prompt_flash_attention_checks.h"
#include "prompt_flash_attention_launch.h"
#include "opdev/op_errno.h"

namespace {
constexpr const char *API = "aclnnPromptFlashAttention";
}

extern "C" aclnnStatus aclnnPromptFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, int64_t numHeads, double scaleValue,
    int64_t preTokens, int64_t nextTokens, char *inputLayout, int64_t numKeyValueHeads, const aclTensor *attentionOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const aclnnStatus status = PromptFlashAttentionCheckParams(query, key, value, attenMask, actualSeqLengths, numHeads,
                                                               scaleValue, preTokens, nextTokens, inputLayout,
                                                               numKeyValueHeads, attentionOut, workspaceSize, executor);
    if (status != ACLNN_SUCCESS) return status;
    if (pseShift != nullptr) {
        FA_LOGW("%s: pseShift is reserved by the spec and forced to nullptr; the tensor passed is ignored", API);
    }

    // Empty query: nothing to compute (the tiling plans no unit). S2 = 0: every unit sees no key
    // and the vector cores write zeros.
    return aclnnInnerPromptFlashAttentionGetWorkspaceSize(query, key, value, nullptr, attenMask, actualSeqLengths,
                                                          numHeads, scaleValue, preTokens, nextTokens, inputLayout,
                                                          numKeyValueHeads, attentionOut, workspaceSize, executor);
}

extern "C" aclnnStatus aclnnPromptFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                 const aclrtStream stream)
{
    return aclnnInnerPromptFlashAttention(workspace, workspaceSize, executor, stream);
}
