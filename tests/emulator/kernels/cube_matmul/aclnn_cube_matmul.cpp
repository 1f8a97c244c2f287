// aclnn API of CubeMatmul on the CPU target.
#include "aclnn_cube_matmul.h"

#include "emu/op_runner.h"

extern "C" void cube_matmul(uint8_t *a, uint8_t *b, uint8_t *c, uint8_t *workspace, uint8_t *tiling);

aclnnStatus aclnnCubeMatmulGetWorkspaceSize(const aclTensor *a, const aclTensor *b, aclTensor *c,
                                            uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("CubeMatmul");
    runner.Input(a).Input(b).Output(c);
    return runner.Build(workspaceSize, executor);
}

aclnnStatus aclnnCubeMatmul(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, cube_matmul, emu::CoreMix::AIC_ONLY,
                             "cube_matmul");
}
