// aclnnIncreFlashAttentionV4 (spec 002) on every target: empty optional tensors dropped, the
// spec's validation (incre_flash_attention_checks.cpp), then the OpType IncreFlashAttention's launcher
// (incre_flash_attention_launch.h: opbuild's on the NPU, the emulator's on the CPU target).
#include "aclnn_incre_flash_attention_v4.h"

#include <cstdint>

#include "incre_flash_attention_checks.h"
#include "incre_flash_attention_launch.h"
#include "opdev/op_errno.h"

extern "C" aclnnStatus aclnnIncreFlashAttentionV4GetWorkspaceSize(
    const aclTensor *query, const aclTensorList *key, const aclTensorList *value, const aclTensor *pseShift,
    const aclTensor *attenMask, const aclIntArray *actualSeqLengths, const aclTensor *dequantScale1,
    const aclTensor *quantScale1, const aclTensor *dequantScale2, const aclTensor *quantScale2,
    const aclTensor *quantOffset2, const aclTensor *antiquantScale, const aclTensor *antiquantOffset,
    const aclTensor *blocktable, const aclTensor *kvPaddingSize, int64_t numHeads, double scaleValue, char *inputLayout,
    int64_t numKeyValueHeads, int64_t blockSize, int64_t innerPrecise, const aclTensor *attentionOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    const IfaArgs args = IncreFlashAttentionDropEmptyOptionals(
        {query,         key,           value,       pseShift,     attenMask,        actualSeqLengths, dequantScale1,
         quantScale1,   dequantScale2, quantScale2, quantOffset2, antiquantScale,   antiquantOffset,  blocktable,
         kvPaddingSize, numHeads,      scaleValue,  inputLayout,  numKeyValueHeads, blockSize,        innerPrecise,
         attentionOut,  workspaceSize, executor});
    const aclnnStatus status = IncreFlashAttentionCheckParams(args);
    if (status != ACLNN_SUCCESS) return status;

    return aclnnInnerIncreFlashAttentionGetWorkspaceSize(
        query, key, value, args.pseShift, args.attenMask, actualSeqLengths, args.dequantScale1, args.quantScale1,
        args.dequantScale2, args.quantScale2, args.quantOffset2, args.antiquantScale, args.antiquantOffset,
        args.blockTable, IncreFlashAttentionLeftPadding(args), numHeads, scaleValue, inputLayout, numKeyValueHeads,
        blockSize, innerPrecise, attentionOut, workspaceSize, executor);
}

extern "C" aclnnStatus aclnnIncreFlashAttentionV4(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                  const aclrtStream stream)
{
    return aclnnInnerIncreFlashAttention(workspace, workspaceSize, executor, stream);
}
