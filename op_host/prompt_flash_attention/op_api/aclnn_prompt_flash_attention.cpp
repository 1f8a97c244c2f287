// aclnnPromptFlashAttention on the CPU target: the spec-000 validation
// (prompt_flash_attention_checks.cpp), then the emulator's op runner (OpDef check, tiling,
// executor) and the kernel launch.
#include "aclnn_prompt_flash_attention.h"

#include <cstdint>

#include "../../common/op_log.h"
#include "emu/op_runner.h"
#include "prompt_flash_attention_checks.h"

extern "C" void prompt_flash_attention(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *pseShift,
                                       uint8_t *attenMask, uint8_t *actualSeqLengths, uint8_t *attentionOut,
                                       uint8_t *workspace, uint8_t *tiling);

namespace {
constexpr const char *API = "aclnnPromptFlashAttention";
}

extern "C" aclnnStatus aclnnPromptFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, int64_t numHeads, double scaleValue,
    int64_t preTokens, int64_t nextTokens, char *inputLayout, int64_t numKeyValueHeads,
    const aclTensor *attentionOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const aclnnStatus status =
        PromptFlashAttentionCheckParams(query, key, value, attenMask, actualSeqLengths, numHeads, scaleValue, preTokens,
                                        nextTokens, inputLayout, numKeyValueHeads, attentionOut, workspaceSize,
                                        executor);
    if (status != ACLNN_SUCCESS) return status;
    if (pseShift != nullptr) {
        FA_LOGW("%s: pseShift is reserved by the spec and forced to nullptr; the tensor passed is ignored", API);
    }

    // Empty query: nothing to compute (the tiling plans no unit). S2 = 0: every unit sees no key
    // and the vector cores write zeros.
    emu::OpRunner runner("PromptFlashAttention");
    runner.Input(query).Input(key).Input(value).Input(static_cast<const aclTensor *>(nullptr)).Input(attenMask)
        .Input(actualSeqLengths).Output(attentionOut);
    runner.Attr("num_heads", numHeads)
        .Attr("scale_value", scaleValue)
        .Attr("pre_tokens", preTokens)
        .Attr("next_tokens", nextTokens)
        .Attr("input_layout", static_cast<const char *>(inputLayout))
        .Attr("num_key_value_heads", numKeyValueHeads);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnPromptFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                 const aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, prompt_flash_attention,
                             emu::CoreMix::MIX_AIC_1_2, "prompt_flash_attention");
}
