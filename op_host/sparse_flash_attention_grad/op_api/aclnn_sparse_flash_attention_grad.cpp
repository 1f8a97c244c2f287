// aclnnSparseFlashAttentionGrad (spec 004) on every target: the spec's validation
// (sparse_flash_attention_grad_checks.cpp), then the OpType's launcher
// (sparse_flash_attention_grad_launch.h: opbuild's on the NPU, the emulator's on the CPU target).
#include "aclnn_sparse_flash_attention_grad.h"

#include <cstdint>

#include "sparse_flash_attention_grad_checks.h"
#include "sparse_flash_attention_grad_launch.h"
#include "opdev/op_errno.h"

extern "C" aclnnStatus aclnnSparseFlashAttentionGradGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *sparseIndices,
    const aclTensor *dOut, const aclTensor *out, const aclTensor *softmaxMax, const aclTensor *softmaxSum,
    const aclTensor *actualSeqLengthsQueryOptional, const aclTensor *actualSeqLengthskvOptional,
    const aclTensor *queryRopeOptional, const aclTensor *keyRopeOptional, double scaleValue, int64_t sparseBlockSize,
    char *layoutOptional, int64_t sparseMode, int64_t preTokens, int64_t nextTokens, bool deterministic,
    const aclTensor *dQueryOut, const aclTensor *dKeyOut, const aclTensor *dValueOut,
    const aclTensor *dQueryRopeOutOptional, const aclTensor *dKeyRopeOutOptional, uint64_t *workspaceSize,
    aclOpExecutor **executor)
{
    const SfagArgs args{query,
                        key,
                        value,
                        sparseIndices,
                        dOut,
                        out,
                        softmaxMax,
                        softmaxSum,
                        actualSeqLengthsQueryOptional,
                        actualSeqLengthskvOptional,
                        queryRopeOptional,
                        keyRopeOptional,
                        scaleValue,
                        sparseBlockSize,
                        layoutOptional,
                        sparseMode,
                        preTokens,
                        nextTokens,
                        deterministic,
                        dQueryOut,
                        dKeyOut,
                        dValueOut,
                        dQueryRopeOutOptional,
                        dKeyRopeOutOptional,
                        workspaceSize,
                        executor};
    const aclnnStatus status = SfagCheckParams(args);
    if (status != ACLNN_SUCCESS) return status;

    // An empty query plans no token: the kernel only writes zero dK/dV.
    return aclnnInnerSparseFlashAttentionGradGetWorkspaceSize(
        query, key, value, sparseIndices, dOut, out, softmaxMax, softmaxSum, actualSeqLengthsQueryOptional,
        actualSeqLengthskvOptional, queryRopeOptional, keyRopeOptional, scaleValue, sparseBlockSize,
        const_cast<char *>(SfagLayout(layoutOptional)), sparseMode, preTokens, nextTokens, deterministic, dQueryOut,
        dKeyOut, dValueOut, dQueryRopeOutOptional, dKeyRopeOutOptional, workspaceSize, executor);
}

extern "C" aclnnStatus aclnnSparseFlashAttentionGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                     const aclrtStream stream)
{
    return aclnnInnerSparseFlashAttentionGrad(workspace, workspaceSize, executor, stream);
}
