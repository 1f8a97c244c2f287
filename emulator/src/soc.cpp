// The SoC table. Sources:
//   [INI]  CANN platform_config/<soc>.ini (ai_core_cnt, vector_core_cnt, memory sizes, clock),
//          (published copy: the pypto 0.2.0 wheel, pypto/lib/configs/A2A3.ini).
//   [HDR]  asc-devkit impl/basic_api/utils/kernel_utils_constants.h (__NPU_ARCH__ == 2201):
//          TOTAL_UB_SIZE 192 KiB, L0A/L0B 64 KiB, L0C 128 KiB, L1 512 KiB.
//   [ARCH] asc-devkit docs guide NPU架构版本2201.md: BT 1 KB.
//   [TWIN] asc-devkit impl/basic_api/utils/kernel_utils_mode_cpu.h (bufferInitLen, arch 2201):
//          the CPU twin's FB is 7 KiB (the architecture page lists 2 KB, the quantisation-
//          parameter part; CATLASS's AtlasA2::FIXBUF_SIZE is 7 KiB too).
//   [MIG]  CANN cross-platform migration guide: 910B2 353.9 TF fp16, 1.6 TB/s, 64 GB.
//   (inf.) values inferred from the above (e.g. 910B4 bandwidth from a cost model).
#include "emu/soc.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <strings.h>

namespace emu {
namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// Per-core memories are identical on every arch-2201 SoC [HDR][ARCH][TWIN].
#define EMU_2201_LOCAL_MEM 192 * KiB, 512 * KiB, 64 * KiB, 64 * KiB, 128 * KiB, 1 * KiB, 7 * KiB

const SocSpec kSocs[] = {
    // name, AIC, AIV [INI]; local memories; clock MHz [INI]; HBM [INI]; BW; L2 [INI]; cube peak
    {"Ascend910B1", 24, 48, EMU_2201_LOCAL_MEM, 1850, 64 * GiB, 1.6e12 /*inf.*/, 192 * MiB,
     363.7e12 /*inf.: 24 AIC x 4096 MAC x 2 x 1.85 GHz*/},
    {"Ascend910B2", 24, 48, EMU_2201_LOCAL_MEM, 1800, 64 * GiB, 1.6e12 /*[MIG]*/, 192 * MiB, 353.9e12 /*[MIG]*/},
    {"Ascend910B3", 20, 40, EMU_2201_LOCAL_MEM, 1800, 64 * GiB, 1.6e12 /*inf.*/, 192 * MiB, 294.9e12 /*inf.*/},
    {"Ascend910B4", 20, 40, EMU_2201_LOCAL_MEM, 1500, 32 * GiB, 0.8e12 /*inf.*/, 96 * MiB, 245.8e12 /*inf.*/},
    // One die of an Atlas A3 (910C) package; values of the Ascend910_9382 ini [INI].
    {"Ascend910_93", 24, 48, EMU_2201_LOCAL_MEM, 1800, 64 * GiB, 1.6e12 /*public est.*/, 192 * MiB, 353.9e12 /*inf.*/},
};
constexpr int kDefault = 1;  // Ascend910B2, the A2 part most published figures use

std::mutex g_mu;
const SocSpec *g_selected = nullptr;

}  // namespace

int SocCount() { return static_cast<int>(sizeof(kSocs) / sizeof(kSocs[0])); }
const SocSpec &SocAt(int index) { return kSocs[index]; }

const SocSpec *FindSoc(const char *name)
{
    if (name == nullptr) return nullptr;
    for (const SocSpec &s : kSocs)
        if (strcasecmp(s.name, name) == 0) return &s;
    return nullptr;
}

const SocSpec &CurrentSoc()
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_selected != nullptr) return *g_selected;
    const char *env = std::getenv("ASCEND_EMU_SOC");
    if (env != nullptr && *env != '\0') {
        const SocSpec *s = FindSoc(env);
        if (s == nullptr) {
            std::fprintf(stderr, "[ascendc-emu] ASCEND_EMU_SOC=%s is not a known SoC; known:", env);
            for (const SocSpec &k : kSocs) std::fprintf(stderr, " %s", k.name);
            std::fprintf(stderr, "\n");
            std::abort();
        }
        g_selected = s;
        return *s;
    }
    g_selected = &kSocs[kDefault];
    return *g_selected;
}

namespace {
std::string CurrentSocJson()
{
    const SocSpec &s = CurrentSoc();
    char buf[256];
    std::snprintf(buf, sizeof buf, "{\"name\":\"%s\",\"aic_cores\":%u,\"aiv_cores\":%u,\"clock_mhz\":%u}", s.name,
                  s.aicCores, s.aivCores, s.clockMhz);
    return buf;
}
}  // namespace

bool SelectSoc(const char *name)
{
    const SocSpec *s = FindSoc(name);
    if (s == nullptr) return false;
    std::lock_guard<std::mutex> lock(g_mu);
    g_selected = s;
    return true;
}

}  // namespace emu

// The selected SoC's name, core counts and clock, as JSON (profilers' device info).
extern "C" const char *ascendc_emu_soc_json(void)
{
    static thread_local std::string copy;
    copy = emu::CurrentSocJson();
    return copy.c_str();
}
