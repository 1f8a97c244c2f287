// PlatformAscendC over the emulator's SoC table (values and their sources: emulator/src/soc.cpp).
#include "tiling/platform/platform_ascendc.h"

#include <cstdio>
#include <mutex>
#include <string>

#include "emu/log.h"
#include "emu/soc.h"

namespace fe {

uint32_t PlatFormInfos::GetCoreNum() const
{
    const emu::SocSpec *soc = socVersion_.empty() ? &emu::CurrentSoc() : emu::FindSoc(socVersion_.c_str());
    return soc ? soc->aicCores : 0;
}

}  // namespace fe

namespace platform_ascendc {

const emu::SocSpec &PlatformAscendC::Soc() const
{
    if (platformInfo_ != nullptr && !platformInfo_->GetSocVersionName().empty()) {
        const emu::SocSpec *soc = emu::FindSoc(platformInfo_->GetSocVersionName().c_str());
        if (soc != nullptr) return *soc;
        EMU_LOGW("PlatformAscendC: unknown SoC \"%s\", using %s", platformInfo_->GetSocVersionName().c_str(),
                 emu::CurrentSoc().name);
    }
    return emu::CurrentSoc();
}

uint32_t PlatformAscendC::GetCoreNum() const { return Soc().aicCores; }
uint32_t PlatformAscendC::GetCoreNumAic() const { return Soc().aicCores; }
uint32_t PlatformAscendC::GetCoreNumAiv() const { return Soc().aivCores; }

void PlatformAscendC::GetCoreMemSize(const CoreMemType &memType, uint64_t &size) const
{
    const emu::SocSpec &soc = Soc();
    switch (memType) {
        case CoreMemType::L0_A:
            size = soc.l0aBytes;
            break;
        case CoreMemType::L0_B:
            size = soc.l0bBytes;
            break;
        case CoreMemType::L0_C:
            size = soc.l0cBytes;
            break;
        case CoreMemType::L1:
            size = soc.l1Bytes - emu::kCoreMemPlatformReserve;
            break;
        case CoreMemType::L2:
            size = soc.l2Bytes;
            break;
        case CoreMemType::UB:
            size = soc.ubBytes - emu::kCoreMemPlatformReserve;
            break;
        case CoreMemType::HBM:
            size = soc.hbmBytes;
            break;
        case CoreMemType::FB:
            size = soc.fbBytes;
            break;
        case CoreMemType::BT:
            size = soc.btBytes;
            break;
        default:
            size = 0;
            break;
    }
}

void PlatformAscendC::GetCoreMemBw(const CoreMemType &memType, uint64_t &bwSize) const
{
    // Only HBM bandwidth is in the table (bytes per cycle at the AI core clock).
    const emu::SocSpec &soc = Soc();
    bwSize = memType == CoreMemType::HBM
                 ? static_cast<uint64_t>(soc.hbmBytesPerSec / (static_cast<double>(soc.clockMhz) * 1e6))
                 : 0;
}

SocVersion PlatformAscendC::GetSocVersion() const
{
    const std::string name = Soc().name;
    // Ascend910B1..B4 and Ascend910_93 (A3) all report ASCEND910B.
    if (name.rfind("Ascend910B", 0) == 0 || name.rfind("Ascend910_93", 0) == 0) return SocVersion::ASCEND910B;
    return SocVersion::RESERVED_VERSION;
}

uint32_t PlatformAscendC::CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const
{
    if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) return sliceNum;
    const uint32_t ratio = aivCoreNum / aicCoreNum;
    const uint32_t blocks = (sliceNum + ratio - 1) / ratio;
    if (ratio == 2 && blocks > aicCoreNum) {
        EMU_LOGE("CalcTschBlockDim: %u vector slices need %u AI cores, the SoC has %u", sliceNum, blocks, aicCoreNum);
        return 0;
    }
    return blocks;
}

PlatformAscendC *PlatformAscendCManager::GetInstance() { return GetInstance(nullptr); }

PlatformAscendC *PlatformAscendCManager::GetInstance(const char *customSocVersion)
{
    static std::once_flag once;
    static fe::PlatFormInfos infos;
    static PlatformAscendC *instance = nullptr;
    std::call_once(once, [customSocVersion] {
        if (customSocVersion != nullptr) infos.SetSocVersionName(customSocVersion);
        instance = new PlatformAscendC(&infos);
    });
    return instance;
}

}  // namespace platform_ascendc
