// Seam between the host side (op_api run stage, tikicpulib ICPU_RUN_KF) and the emulated
// AI cores. Not a CANN header: CPU-target code only (op_api launch seam, tests).
#pragma once
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace emu {

// Which sub-cores a launch starts per AI core (Atlas A2: 1 cube + 2 vector per core).
enum class CoreMix : int { AIV_ONLY = 0, AIC_ONLY = 1, MIX_AIC_1_1 = 2, MIX_AIC_1_2 = 3 };

struct LaunchConfig {
    const char *name = "kernel";  // for messages and counters
    uint32_t blockDim = 1;        // number of AI cores (MIX: cube cores)
    CoreMix mix = CoreMix::MIX_AIC_1_2;
    uint64_t tilingKey = 0;  // what TILING_KEY_IS() compares against
    // Bytes GetUserWorkspace() skips: 0 = CPU-twin convention (workspace is the user part);
    // 16 MiB when the workspace starts with the system part as on the NPU (aclnn path).
    uint64_t userWorkspaceOffset = 0;
};

// Runs `body` once on every emulated sub-core thread of `cfg.blockDim` AI cores, with the
// per-thread core context set (GetBlockIdx, GetSubBlockIdx, ASCEND_IS_AIC/AIV, local memories).
// Blocks until all threads end. A misuse or deadlock inside is handled as the fault mode says;
// a launch stopped by CancelLaunches() throws LaunchFault in either mode.
// `abiStamp` is ASCEND_EMU_ABI_STAMP (emu/abi_stamp.h, generated: the digest of the emulator's
// headers) as the caller was compiled: a launch from code built against other headers than the
// runtime's is refused with a message, as their types may be laid out differently.
void Launch(const LaunchConfig &cfg, const std::function<void()> &body, uint64_t abiStamp);

// The same with one entry per core kind, as the NPU runs a MIX kernel: bisheng compiles it once
// for the cube and once for the vector core, and each AIC runs the cube binary, each AIV the
// vector one. `aic` runs on every AIC thread, `aiv` on every AIV thread of the launch.
void Launch(const LaunchConfig &cfg, const std::function<void()> &aic, const std::function<void()> &aiv,
            uint64_t abiStamp);

// What a kernel misuse or deadlock does. kAbort (the default, for C programs: CANN's runtime ends
// the process on an AI core exception too) prints the message and aborts. kRaise (the Python
// harness) records the message, stops every thread of the launch at its next API call or
// blocking point, frees their memories and makes Launch throw LaunchFault with the message;
// the process and the next launch are unaffected.
enum class FaultMode : int { kAbort = 0, kRaise = 1 };
void SetFaultMode(FaultMode mode);

struct LaunchFault : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Stops every running launch (Ctrl-C in the harness): each ends with LaunchFault.
void CancelLaunches();

// Per-core, per-pipe counters of the most recent Launch, as JSON text:
// {"kernel":..., "block_dim":..., "cores":[{"core":i,"sub":"aic|aiv0|aiv1",
//   "MTE2":{"bytes":..,"ops":..}, "MTE1":..., "M":{"ops":..,"macs":..}, "V":..., "MTE3":...,
//   "FIXP":..., "S":...}], "total": {...same pipes summed...}}
std::string LastLaunchCountersJson();

// Seconds a blocked core may wait before the launch is reported as hung (a deadlock where
// every live core is blocked is reported at once). Env ASCEND_EMU_DEADLOCK_TIMEOUT_S, default 60.
double DeadlockTimeoutSeconds();

}  // namespace emu

extern "C" {
// C exports of the above for the harness: mode 0 abort, 1 raise.
void ascendc_emu_set_fault_mode(int mode);
void ascendc_emu_cancel_launches(void);
// The message of the last launch that ended with a fault ("" after a clean launch).
const char *ascendc_emu_last_fault_message(void);
// Progress of the running (or last) launch: blocks whose sub-cores all ended, and blockDim.
void ascendc_emu_launch_progress(uint64_t *done, uint64_t *total);
}
