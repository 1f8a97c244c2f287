// The CPU target's aclnnInnerSparseFlashAttentionGrad (sparse_flash_attention_grad_launch.h):
// the emulator's op runner checks the call against the OpDef, runs the tiling and launches the
// kernel on the emulated cores. What opbuild generates for the NPU package.
#include "sparse_flash_attention_grad_launch.h"

#include "emu/op_runner.h"

extern "C" void sparse_flash_attention_grad(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *sparseIndices,
                                            uint8_t *dOut, uint8_t *out, uint8_t *softmaxMax, uint8_t *softmaxSum,
                                            uint8_t *seqQ, uint8_t *seqKv, uint8_t *queryRope, uint8_t *keyRope,
                                            uint8_t *dq, uint8_t *dk, uint8_t *dv, uint8_t *dqRope, uint8_t *dkRope,
                                            uint8_t *workspace, uint8_t *tiling);

extern "C" aclnnStatus aclnnInnerSparseFlashAttentionGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *dOut, const aclTensor *out, const aclTensor *softmaxMax, const aclTensor *softmaxSum,
    const aclTensor *actualSeqQlenOptional, const aclTensor *actualSeqKvlenOptional, const aclTensor *queryRopeOptional,
    const aclTensor *keyRopeOptional, double scaleValue, int64_t sparseBlockSize, char *layoutOptional,
    int64_t sparseMode, int64_t preTokens, int64_t nextTokens, bool deterministic, const aclTensor *dQueryOut,
    const aclTensor *dKeyOut, const aclTensor *dValueOut, const aclTensor *dQueryRopeOutOptional,
    const aclTensor *dKeyRopeOutOptional, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("SparseFlashAttentionGrad");
    runner.Input(query)
        .Input(key)
        .Input(value)
        .Input(sparseIndices)
        .Input(dOut)
        .Input(out)
        .Input(softmaxMax)
        .Input(softmaxSum)
        .Input(actualSeqQlenOptional)
        .Input(actualSeqKvlenOptional)
        .Input(queryRopeOptional)
        .Input(keyRopeOptional)
        .Output(dQueryOut)
        .Output(dKeyOut)
        .Output(dValueOut)
        .Output(dQueryRopeOutOptional)
        .Output(dKeyRopeOutOptional);
    runner.Attr("scale_value", scaleValue)
        .Attr("sparse_block_size", sparseBlockSize)
        .Attr("layout", static_cast<const char *>(layoutOptional))
        .Attr("sparse_mode", sparseMode)
        .Attr("pre_tokens", preTokens)
        .Attr("next_tokens", nextTokens)
        .Attr("deterministic", deterministic);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnInnerSparseFlashAttentionGrad(void *workspace, uint64_t workspaceSize,
                                                          aclOpExecutor *executor, aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, sparse_flash_attention_grad,
                             emu::CoreMix::MIX_AIC_1_2, "sparse_flash_attention_grad");
}
