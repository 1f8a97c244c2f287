// aclnnIncreFlashAttentionV4 on the CPU target: the spec-002 validation
// (incre_flash_attention_checks.cpp), then the emulator's op runner (OpDef check, tiling,
// executor) and the kernel launch.
#include "aclnn_incre_flash_attention_v4.h"

#include <cstdint>

#include "emu/op_runner.h"
#include "incre_flash_attention_checks.h"

extern "C" void incre_flash_attention(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *pseShift,
                                      uint8_t *attenMask, uint8_t *actualSeqLengths, uint8_t *dequantScale1,
                                      uint8_t *quantScale1, uint8_t *dequantScale2, uint8_t *quantScale2,
                                      uint8_t *quantOffset2, uint8_t *antiquantScale, uint8_t *antiquantOffset,
                                      uint8_t *blockTable, uint8_t *kvPaddingSize, uint8_t *attentionOut,
                                      uint8_t *workspace, uint8_t *tiling);

extern "C" aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, const aclTensor *dequantScale1,
    const aclTensor *quantScale1, const aclTensor *dequantScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, const aclTensor *antiquantScale, const aclTensor *antiquantOffset,
    const aclTensor *blocktable, const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue,
    char *inputLayout, int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise,
    const aclTensor *attentionOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    IfaArgs args{query, key, value, pseShift, attenMask, actualSeqLengths, dequantScale1, quantScale1,
                 dequantScale2, quantScale2, quantOffset2, antiquantScale, antiquantOffset, blocktable,
                 kvPaddingSize, numHeads, scaleValue, inputLayout, numKeyValueHeads, blockSize, innerPrecise,
                 attentionOut, workspaceSize, executor};
    const aclnnStatus status = IncreFlashAttentionCheckParams(args);
    if (status != ACLNN_SUCCESS) return status;

    // Without actual_seq_lengths kv_padding_size has no effect (right padding): not passed on.
    const aclTensor *padding = actualSeqLengths == nullptr ? nullptr : kvPaddingSize;
    emu::OpRunner runner("IncreFlashAttention");
    runner.Input(query).Input(key).Input(value).Input(pseShift).Input(attenMask).Input(actualSeqLengths)
        .Input(dequantScale1).Input(quantScale1).Input(dequantScale2).Input(quantScale2).Input(quantOffset2)
        .Input(antiquantScale).Input(antiquantOffset).Input(blocktable).Input(padding).Output(attentionOut);
    runner.Attr("num_heads", numHeads)
        .Attr("scale_value", scaleValue)
        .Attr("input_layout", static_cast<const char *>(inputLayout))
        .Attr("num_key_value_heads", numKeyValueHeads)
        .Attr("block_size", blockSize)
        .Attr("inner_precise", innerPrecise);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                  const aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, incre_flash_attention,
                             emu::CoreMix::MIX_AIC_1_2, "incre_flash_attention");
}
