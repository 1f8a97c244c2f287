// CANN's CPU-twin launch interface (asc-devkit API pages `调试接口/CPU孪生调试/`): ICPU_RUN_KF, ICPU_SET_TILING_KEY,
// AscendC::GmAlloc/GmFree and AscendC::SetKernelMode, so a kernel unit test written for CANN's
// CPU twin builds and runs unchanged. Cores are threads here (CANN forks processes).
#pragma once
#include <cstddef>
#include <cstdint>

#include "emu/abi_stamp.h"
#include "emu/device_memory.h"
#include "emu/launch.h"
#include "kernel_operator.h"

// Global-namespace enum, called as AscendC::SetKernelMode(KernelMode::AIV_MODE).
enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };

namespace AscendC {

inline void *GmAlloc(size_t size) { return emu::DeviceAlloc(size, "AscendC::GmAlloc"); }
inline void GmFree(void *ptr) { emu::DeviceFree(ptr, "AscendC::GmFree"); }

namespace cpu {
inline KernelMode &Mode()
{
    static KernelMode mode = KernelMode::MIX_MODE;
    return mode;
}
inline uint64_t &TilingKey()
{
    static uint64_t key = 0;
    return key;
}
inline emu::CoreMix MixOf(KernelMode m)
{
    switch (m) {
        case KernelMode::AIC_MODE:
            return emu::CoreMix::AIC_ONLY;
        case KernelMode::AIV_MODE:
            return emu::CoreMix::AIV_ONLY;
        case KernelMode::MIX_AIC_1_1:
            return emu::CoreMix::MIX_AIC_1_1;
        default:
            return emu::CoreMix::MIX_AIC_1_2;
    }
}
template <class F, class... Args> void RunKernel(F func, const char *name, uint32_t numBlocks, Args... args)
{
    static_assert(sizeof...(Args) <= 32, "ICPU_RUN_KF accepts at most 32 kernel arguments");
    emu::LaunchConfig cfg;
    cfg.name = name;
    cfg.blockDim = numBlocks;
    cfg.mix = MixOf(Mode());
    cfg.tilingKey = TilingKey();
    emu::Launch(cfg, [&] { func(reinterpret_cast<GM_ADDR>(args)...); }, ASCEND_EMU_ABI_STAMP);
}
}  // namespace cpu

inline void SetKernelMode(KernelMode mode) { cpu::Mode() = mode; }

}  // namespace AscendC

#define ICPU_SET_TILING_KEY(tilingKey) (AscendC::cpu::TilingKey() = static_cast<uint64_t>(tilingKey))
#define ICPU_RUN_KF(func, numBlocks, ...) AscendC::cpu::RunKernel(func, #func, numBlocks, __VA_ARGS__)
