// The CPU target's aclnnInnerPromptFlashAttention (prompt_flash_attention_launch.h): the
// emulator's op runner checks the call against the OpDef, runs the tiling and launches the
// kernel on the emulated cores. What opbuild generates for the NPU package.
#include "prompt_flash_attention_launch.h"

#include "emu/op_runner.h"

extern "C" void prompt_flash_attention(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *pseShift,
                                       uint8_t *attenMask, uint8_t *actualSeqLengths, uint8_t *attentionOut,
                                       uint8_t *workspace, uint8_t *tiling);

extern "C" aclnnStatus aclnnInnerPromptFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *pseShiftOptional,
    const aclTensor *attenMaskOptional, const aclIntArray *actualSeqLengthsOptional, int64_t numHeads,
    double scaleValue, int64_t preTokens, int64_t nextTokens, char *inputLayoutOptional, int64_t numKeyValueHeads,
    const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("PromptFlashAttention");
    runner.Input(query)
        .Input(key)
        .Input(value)
        .Input(pseShiftOptional)
        .Input(attenMaskOptional)
        .Input(actualSeqLengthsOptional)
        .Output(out);
    runner.Attr("num_heads", numHeads)
        .Attr("scale_value", scaleValue)
        .Attr("pre_tokens", preTokens)
        .Attr("next_tokens", nextTokens)
        .Attr("input_layout", static_cast<const char *>(inputLayoutOptional))
        .Attr("num_key_value_heads", numKeyValueHeads);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnInnerPromptFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                      aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, prompt_flash_attention,
                             emu::CoreMix::MIX_AIC_1_2, "prompt_flash_attention");
}
