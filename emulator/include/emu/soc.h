// The SoC table of the emulator: one row per supported Atlas A2/A3 SoC. The launcher sizes the
// per-core local memories from it and the host side (PlatformAscendC) reports it. Not a CANN
// header. Sources of the values are in soc.cpp, next to each row.
#pragma once
#include <cstdint>

namespace emu {

struct SocSpec {
    const char *name;            // CANN SoC version string, e.g. "Ascend910B2"
    uint32_t aicCores;           // AI cores = cube cores (max blockDim of a MIX/AIC launch)
    uint32_t aivCores;           // vector cores (2 per AI core on arch 2201)
    uint64_t ubBytes;            // Unified Buffer per vector core (physical)
    uint64_t l1Bytes;            // L1 per cube core (physical)
    uint64_t l0aBytes;           // L0A per cube core
    uint64_t l0bBytes;           // L0B per cube core
    uint64_t l0cBytes;           // L0C per cube core
    uint64_t btBytes;            // bias table per cube core
    uint64_t fbBytes;            // fixpipe buffer per cube core
    uint32_t clockMhz;           // AI core clock
    uint64_t hbmBytes;           // device memory capacity
    double hbmBytesPerSec;       // device memory bandwidth
    uint64_t l2Bytes;            // L2 cache
    double cubeFp16FlopsPerSec;  // cube peak, fp16/bf16 (2 FLOP per MAC)
};

// The bytes the platform keeps back from UB/L1 in mixed cube+vector kernels (GetCoreMemSize
// subtracts them).
constexpr uint64_t kCoreMemPlatformReserve = 256;

// Number of rows in the table and row access (index < SocCount()).
int SocCount();
const SocSpec &SocAt(int index);
// Row by CANN name (case-insensitive); nullptr when unknown.
const SocSpec *FindSoc(const char *name);
// The SoC in use: SelectSoc(name) if called, else env ASCEND_EMU_SOC, else "Ascend910B2".
// An unknown name in ASCEND_EMU_SOC aborts with the list of known names.
const SocSpec &CurrentSoc();
// Selects the SoC for later launches; returns false (and changes nothing) for an unknown name.
bool SelectSoc(const char *name);

}  // namespace emu
