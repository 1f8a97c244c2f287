// aclnn API of VectorAxpy on the CPU target.
#include "aclnn_vector_axpy.h"

#include "emu/log.h"
#include "emu/op_runner.h"

extern "C" void vector_axpy(uint8_t *x, uint8_t *y, uint8_t *z, uint8_t *workspace, uint8_t *tiling);

aclnnStatus aclnnVectorAxpyGetWorkspaceSize(const aclTensor *x, const aclTensor *y, double alpha, int64_t tileLength,
                                            aclTensor *z, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (x != nullptr && y != nullptr && x->GetDataType() != y->GetDataType()) {
        EMU_LOGE("aclnnVectorAxpy: x (%s) and y (%s) must have the same dtype", emu::AclDataTypeName(x->dataType),
                 emu::AclDataTypeName(y->dataType));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (tileLength < 0) {
        EMU_LOGE("aclnnVectorAxpy: tileLength %lld is negative", static_cast<long long>(tileLength));
        return ACLNN_ERR_PARAM_INVALID;
    }
    emu::OpRunner runner("VectorAxpy");
    runner.Input(x).Input(y).Output(z).Attr("alpha", alpha).Attr("tile_length", tileLength);
    return runner.Build(workspaceSize, executor);
}

aclnnStatus aclnnVectorAxpy(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, vector_axpy, emu::CoreMix::AIV_ONLY,
                             "vector_axpy");
}
