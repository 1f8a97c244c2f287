// Tiling of the fault proof operator EmuFault: y = x, with a misuse chosen by `mode` — the
// vehicle of the tests of what a faulting or long launch does to the calling process.
// Kernel entry: extern "C" __global__ __aicore__ void emu_fault(GM_ADDR x, GM_ADDR y,
//     GM_ADDR workspace, GM_ADDR tiling); KERNEL_TYPE_MIX_AIC_1_2, blockDim 1.
#pragma once
#include <cstdint>

// mode: what the launch does besides y = x.
constexpr uint32_t EMU_FAULT_NONE = 0;        // nothing: a clean launch
constexpr uint32_t EMU_FAULT_UNSET_FLAG = 1;  // the AIC waits on a cross-core flag nobody sets
constexpr uint32_t EMU_FAULT_GM_OVERRUN = 2;  // the AIV reads 64 elements past the end of x (past
                                              // its device memory when x fills whole pages)
constexpr uint32_t EMU_FAULT_MODES = 3;

constexpr uint32_t EMU_FAULT_OVERRUN = 64;  // elements read past x in EMU_FAULT_GM_OVERRUN

struct EmuFaultTilingData {
    uint32_t length;      // elements of x and y (a multiple of 8)
    uint32_t mode;        // EMU_FAULT_*
    uint32_t iterations;  // vector passes over the data before y is written (a long launch)
};
