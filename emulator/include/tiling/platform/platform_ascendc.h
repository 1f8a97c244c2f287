// platform_ascendc::PlatformAscendC of the CPU target (as CANN's tiling/platform/platform_ascendc.h):
// reports the row of the emulator's SoC table (emu/soc.h) named by the PlatFormInfos, i.e. the
// SoC selected with env ASCEND_EMU_SOC (default Ascend910B2).
#ifndef EMU_TILING_PLATFORM_PLATFORM_ASCENDC_H_
#define EMU_TILING_PLATFORM_PLATFORM_ASCENDC_H_

#include <cstdint>

#include "platform/platform_infos_def.h"

namespace emu {
struct SocSpec;
}

namespace platform_ascendc {

enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };

// Atlas A3 (Ascend910_93) reports ASCEND910B, as CANN does for binary reuse.
enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND310P,
    ASCEND310B,
    ASCEND950,
    RESERVED_VERSION = 99999
};

enum class NpuArch { DAV_1001 = 1001, DAV_2002 = 2002, DAV_2201 = 2201, DAV_3002 = 3002, DAV_3510 = 3510 };

class PlatformAscendC {
public:
    PlatformAscendC() = delete;
    explicit PlatformAscendC(fe::PlatFormInfos *platformInfo) : platformInfo_(platformInfo) {}
    ~PlatformAscendC() = default;

    // AI cores; on arch 2201 in MIX mode this is the cube-core count (CANN header comment; the
    // API doc says vector cores — ops-transformer uses GetCoreNumAic/Aiv instead).
    uint32_t GetCoreNum() const;
    uint32_t GetCoreNumAic() const;
    uint32_t GetCoreNumAiv() const;
    uint32_t GetCoreNumVector() const { return 0; }  // no standalone vector cores on A2/A3
    // UB and L1 report the physical size minus the 256 bytes the platform keeps back.
    void GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const;
    void GetCoreMemBw(const CoreMemType &memType, uint64_t &bwSize) const;
    SocVersion GetSocVersion() const;
    NpuArch GetCurNpuArch() const { return NpuArch::DAV_2201; }
    // The system workspace the Ascend C API reserves at the start of the workspace: 16 MiB.
    uint32_t GetLibApiWorkSpaceSize() const { return 16u * 1024u * 1024u; }
    // blockDim of a MIX kernel that has sliceNum vector tasks (CANN's rule; 0 on overflow).
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const;
    uint32_t CalcTschNumBlocks(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
    {
        return CalcTschBlockDim(sliceNum, aicCoreNum, aivCoreNum);
    }
    uint32_t GetVecRegLen() const { return 256; }

private:
    const emu::SocSpec &Soc() const;
    fe::PlatFormInfos *platformInfo_;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC *GetInstance();
    // Only the first call's SoC name counts (CANN: a singleton).
    static PlatformAscendC *GetInstance(const char *customSocVersion);
};

}  // namespace platform_ascendc

#endif
