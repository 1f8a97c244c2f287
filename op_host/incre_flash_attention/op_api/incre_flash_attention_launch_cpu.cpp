// The CPU target's aclnnInnerIncreFlashAttention (incre_flash_attention_launch.h): the
// emulator's op runner checks the call against the OpDef, runs the tiling and launches the
// kernel on the emulated cores. What opbuild generates for the NPU package.
#include "incre_flash_attention_launch.h"

#include "emu/op_runner.h"

extern "C" void incre_flash_attention(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *pseShift,
                                      uint8_t *attenMask, uint8_t *actualSeqLengths, uint8_t *dequantScale1,
                                      uint8_t *quantScale1, uint8_t *dequantScale2, uint8_t *quantScale2,
                                      uint8_t *quantOffset2, uint8_t *antiquantScale, uint8_t *antiquantOffset,
                                      uint8_t *blockTable, uint8_t *kvPaddingSize, uint8_t *attentionOut,
                                      uint8_t *workspace, uint8_t *tiling);

extern "C" aclnnStatus aclnnInnerIncreFlashAttentionGetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShiftOptional,
    const aclTensor *attenMaskOptional, const aclIntArray *actualSeqLengthsOptional,
    const aclTensor *dequantScale1Optional, const aclTensor *quantScale1Optional,
    const aclTensor *dequantScale2Optional, const aclTensor *quantScale2Optional, const aclTensor *quantOffset2Optional,
    const aclTensor *antiquantScaleOptional, const aclTensor *antiquantOffsetOptional,
    const aclTensor *blockTableOptional, const aclTensor *kvPaddingSizeOptional, int64_t numHeads, double scaleValue,
    char *inputLayoutOptional, int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("IncreFlashAttention");
    runner.Input(query)
        .Input(key)
        .Input(value)
        .Input(pseShiftOptional)
        .Input(attenMaskOptional)
        .Input(actualSeqLengthsOptional)
        .Input(dequantScale1Optional)
        .Input(quantScale1Optional)
        .Input(dequantScale2Optional)
        .Input(quantScale2Optional)
        .Input(quantOffset2Optional)
        .Input(antiquantScaleOptional)
        .Input(antiquantOffsetOptional)
        .Input(blockTableOptional)
        .Input(kvPaddingSizeOptional)
        .Output(out);
    runner.Attr("num_heads", numHeads)
        .Attr("scale_value", scaleValue)
        .Attr("input_layout", static_cast<const char *>(inputLayoutOptional))
        .Attr("num_key_value_heads", numKeyValueHeads)
        .Attr("block_size", blockSize)
        .Attr("inner_precise", innerPrecise);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnInnerIncreFlashAttention(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                     aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, incre_flash_attention,
                             emu::CoreMix::MIX_AIC_1_2, "incre_flash_attention");
}
