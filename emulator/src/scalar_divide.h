// Integer division by zero in kernel code. The AI core's scalar unit does not trap on it; an x86
// CPU raises SIGFPE. CATLASS computes `x % n` with n = 0 on paths whose result it then ignores
// (block_mmad_preload.hpp: the next block's k tile when there is no next block), so a kernel that
// runs on the NPU must not crash here. On x86-64 a kernel thread's faulting div/idiv completes
// as an ARM or RISC-V divider completes it (quotient 0, remainder = dividend) and the launch
// reports how often that happened; any other SIGFPE keeps its default action.
#pragma once

namespace emu {

// Installs the SIGFPE handler once per process.
void InstallScalarDivideHandler();
// Number of divisions by zero completed on this thread since the last call; resets it.
int TakeScalarDivideFaults();

}  // namespace emu
