// aclnn API of EmuFault on the CPU target.
#include "aclnn_emu_fault.h"

#include "emu/op_runner.h"

extern "C" void emu_fault(uint8_t *x, uint8_t *y, uint8_t *workspace, uint8_t *tiling);

aclnnStatus aclnnEmuFaultGetWorkspaceSize(const aclTensor *x, int64_t mode, int64_t iterations, aclTensor *y,
                                          uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("EmuFault");
    runner.Input(x).Output(y).Attr("mode", mode).Attr("iterations", iterations);
    return runner.Build(workspaceSize, executor);
}

aclnnStatus aclnnEmuFault(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, emu_fault, emu::CoreMix::MIX_AIC_1_2,
                             "emu_fault");
}
