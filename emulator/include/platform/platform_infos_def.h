// fe::PlatFormInfos of the CPU target: names the SoC whose row of the emulator's SoC table
// (emu/soc.h) PlatformAscendC reports.
#ifndef EMU_PLATFORM_PLATFORM_INFOS_DEF_H_
#define EMU_PLATFORM_PLATFORM_INFOS_DEF_H_

#include <cstdint>
#include <string>

namespace fe {

class PlatFormInfos {
public:
    PlatFormInfos() = default;
    explicit PlatFormInfos(const std::string &socVersion) : socVersion_(socVersion) {}
    // Empty: the emulator's current SoC (env ASCEND_EMU_SOC, default Ascend910B2).
    const std::string &GetSocVersionName() const { return socVersion_; }
    void SetSocVersionName(const std::string &name) { socVersion_ = name; }
    uint32_t GetCoreNum() const;  // AI cores (cube count) of that SoC

private:
    std::string socVersion_;
};

}  // namespace fe

#endif
