// The CPU target's definition of an operator's launch seam (launch_seam.h) from its parameter
// list: the emulator's op runner checks the call against the OpDef (inputs, outputs and
// attributes in order), runs the tiling and launches the kernel (one uint8_t * per input and
// output, then workspace and tiling) on the emulated cores, MIX 1:2. What opbuild generates for
// the NPU package. The including <op>_launch_cpu.cpp includes "emu/op_runner.h" itself: that
// include is what keeps it out of the NPU build (cmake/npu.cmake).
#pragma once
#include "launch_seam.h"

#define FA_SEAM_NONE(...)
#define FA_SEAM_KERNEL_ARG(type, name, ...) uint8_t *,
#define FA_SEAM_INPUT(type, name, ...) runner.Input(name);
#define FA_SEAM_OUTPUT(type, name, ...) runner.Output(name);
#define FA_SEAM_ATTR(type, name, attr) runner.Attr(attr, name);

#define FA_DEFINE_LAUNCH_SEAM_CPU(OpType, kernel, PARAMS)                                                              \
    extern "C" void kernel(PARAMS(FA_SEAM_KERNEL_ARG, FA_SEAM_NONE, FA_SEAM_KERNEL_ARG) uint8_t *, uint8_t *);         \
    extern "C" aclnnStatus aclnnInner##OpType##GetWorkspaceSize(                                                       \
        PARAMS(FA_SEAM_PARAM, FA_SEAM_PARAM, FA_SEAM_PARAM) uint64_t *workspaceSize, aclOpExecutor **executor)         \
    {                                                                                                                  \
        emu::OpRunner runner(#OpType);                                                                                 \
        PARAMS(FA_SEAM_INPUT, FA_SEAM_NONE, FA_SEAM_OUTPUT)                                                            \
        PARAMS(FA_SEAM_NONE, FA_SEAM_ATTR, FA_SEAM_NONE)                                                               \
        return runner.Build(workspaceSize, executor);                                                                  \
    }                                                                                                                  \
    extern "C" aclnnStatus aclnnInner##OpType(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,        \
                                              aclrtStream stream)                                                      \
    {                                                                                                                  \
        return emu::LaunchKernel(executor, workspace, workspaceSize, stream, kernel, emu::CoreMix::MIX_AIC_1_2,        \
                                 #kernel);                                                                             \
    }
