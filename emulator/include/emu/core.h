// The emulated AI core as seen from the kernel-side headers: per-thread core context (identity,
// local memories, hidden registers, counters), misuse reporting, GM/local bounds checks and
// the cross-core primitives. Not a CANN header; kernels never include it directly.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "emu/launch.h"
#include "emu/timing.h"

namespace emu {

enum class Pipe : int { MTE2 = 0, MTE1, M, V, MTE3, FIXP, S, COUNT };
// A kernel's pipe_t value (kernel_sync.h) as a Pipe index; -1 for PIPE_ALL or a pipe A2 has no
// row for.
inline int PipeOfPipeT(int pipeT)
{
    switch (pipeT) {
        case 0:
            return static_cast<int>(Pipe::S);
        case 1:
        case 9:
            return static_cast<int>(Pipe::V);
        case 2:
            return static_cast<int>(Pipe::M);
        case 3:
            return static_cast<int>(Pipe::MTE1);
        case 4:
            return static_cast<int>(Pipe::MTE2);
        case 5:
            return static_cast<int>(Pipe::MTE3);
        case 10:
            return static_cast<int>(Pipe::FIXP);
        default:
            return -1;
    }
}
// Physical buffers of arch 2201 (asc-devkit `impl/basic_api/utils/kernel_utils_constants.h`, arch 2201).
enum class Buf : int { GM = 0, UB, L1, L0A, L0B, L0C, BT, FB, COUNT };
inline const char *BufName(Buf b)
{
    static const char *names[] = {"GM", "UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return names[static_cast<int>(b)];
}
enum CoreKind : int { kMix = 0, kAic = 1, kAiv = 2 };  // AscendC::MIX / AIC / AIV values

struct PipeCounter {
    uint64_t bytes = 0;  // bytes moved (DMA pipes) or bytes read+written (V)
    uint64_t ops = 0;    // instructions issued (vector: repeats)
    uint64_t macs = 0;   // cube multiply-accumulates (M pipe only)
};

constexpr int kHardEventCount = 35;  // AscendC::HardEvent::MAX
constexpr int kEventIds = 8;         // QUE_MAX_EVENT on arch 2201
constexpr int kCrossFlags = 16;

struct LaunchShared;

struct CoreCtx {
    const char *kernel = "kernel";
    int block = 0;    // AI core index
    int sub = 0;      // 0 for AIC; 0/1 for AIV
    int kind = kAiv;  // kAic or kAiv
    int blockDim = 1;
    int taskRation = 1;  // GetTaskRation()
    int subBlockNum = 1;
    uint64_t tilingKey = 0;
    uint64_t userWorkspaceOffset = 0;
    uint8_t *mem[static_cast<int>(Buf::COUNT)] = {};
    uint64_t memSize[static_cast<int>(Buf::COUNT)] = {};
    PipeCounter counters[static_cast<int>(Pipe::COUNT)];
    // Per physical buffer, the highest byte offset handed out in this launch (TPipe::InitBuffer,
    // LocalTensor's address constructor): the core's peak use, reported with the counters.
    uint64_t peak[static_cast<int>(Buf::COUNT)] = {};
    // Hidden registers.
    bool maskCounterMode = false;
    uint64_t maskHigh = ~0ull, maskLow = ~0ull;
    uint64_t cmpMask[2] = {0, 0};
    int atomicOp = 0;       // 0 none, 1 add, 2 max, 3 min
    int atomicDtype = 0;    // emu::DType of the atomic element type
    uint64_t padValue = 0;  // SetPadValue bits
    bool padValueSet = false;
    float deqScale = 1.0f;
    // Cube configuration: the feature map of SetFmatrix (left/right), the LoadData 3D pad
    // value, the Fixpipe quantisation parameters of SetFixPipeConfig (an FB address).
    uint16_t fmapH[2] = {}, fmapW[2] = {};
    uint8_t fmapPad[2][4] = {};
    uint64_t load3dPad = 0;
    const void *fixQuant = nullptr;
    void *unitFlags = nullptr;  // L0C unit flags of Mmad/Fixpipe unitFlag (emulator/src/kernel/race.cpp)
    // The 2-bit indices LoadDataWithSparse loads beside L0B: the byte for L0B bytes 4i..4i+3 at i.
    uint8_t *sparseIndex = nullptr;
    // SetFlag/WaitFlag balance per (HardEvent, id).
    int flags[kHardEventCount][kEventIds] = {};
    void *tpipe = nullptr;  // GetTPipePtr()
    // Hazard checker state (emu/race.h), only used with ASCEND_EMU_RACECHECK=1.
    uint64_t raceNow = 0;
    uint64_t raceVc[static_cast<int>(Pipe::COUNT)][static_cast<int>(Pipe::COUNT)] = {};
    uint64_t raceFlags[kHardEventCount][kEventIds][static_cast<int>(Pipe::COUNT)] = {};
    void *raceShadow[static_cast<int>(Buf::COUNT)] = {};
    // What this core knows of the other cores' clocks (a RaceClock's vector, emulator/src/kernel/race_gm.cpp).
    void *raceRemote = nullptr;
    LaunchShared *shared = nullptr;
    const std::atomic<bool> *stop = nullptr;  // set when the launch is to end (fault, cancel)
    TimingLog timeline;                       // what this core issued, for the timeline model (emu/timing.h)
};

// The current core of this thread (set by the launcher); inline because every API reads it.
extern thread_local CoreCtx *t_currentCore;
[[noreturn]] void NoCoreContext();
inline CoreCtx &Ctx()
{
    CoreCtx *c = t_currentCore;
    if (c == nullptr) NoCoreContext();
    return *c;
}
// "aic0", "aiv3.1" (AI core 3, vector sub-core 1): names the current core in messages.
const char *CoreName();

// Misuse: "[ascendc-emu] <api> on <core> of kernel <k>: <message>"; aborts, or in FaultMode
// kRaise stops the launch (emu/launch.h).
[[noreturn]] void Fail(const char *api, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Checks that [p, p + bytes) lies inside one live device allocation.
void CheckGm(const char *api, const char *operand, const void *p, uint64_t bytes);
// Checks that [p, p + bytes) lies inside buffer `b` of the current core.
void CheckLocal(const char *api, const char *operand, Buf b, const void *p, uint64_t bytes);
// Byte offset of p inside buffer b of the current core (p must be inside).
uint64_t LocalOffset(Buf b, const void *p);

// Records that bytes [0, end) of buffer b are in use on the current core (CoreCtx::peak), if it has b.
inline void NoteLocalUse(Buf b, uint64_t end)
{
    CoreCtx &c = Ctx();
    if (c.mem[static_cast<int>(b)] == nullptr) return;  // not this core type's buffer (the API is a no-op there)
    uint64_t &peak = c.peak[static_cast<int>(b)];
    if (end > peak) peak = end;
}

// Appends "peak":{"UB":...} for the buffers of core kind `kind` (AIV: UB; AIC: L1, L0A, L0B,
// L0C, BT, FB; kMix, a launch: all of them).
void AppendPeakJson(std::string &out, const uint64_t *peak, int kind);

// Ends this core's part of a launch that is being stopped (unless it is already unwinding).
void StopPoint();

inline void Count(Pipe p, uint64_t bytes, uint64_t ops = 1)
{
    CoreCtx &ctx = Ctx();
    // Every counted instruction is a point where a stopped launch ends (Ctrl-C, another core's fault).
    if (ctx.stop != nullptr && ctx.stop->load(std::memory_order_relaxed)) StopPoint();
    PipeCounter &c = ctx.counters[static_cast<int>(p)];
    c.bytes += bytes;
    c.ops += ops;
    if (p == Pipe::S) TimeScalarAccess(false);
}
// A scalar GlobalTensor access: counted like a local one, timed as a trip through the data cache.
inline void CountScalarGm(uint64_t bytes)
{
    PipeCounter &c = Ctx().counters[static_cast<int>(Pipe::S)];
    c.bytes += bytes;
    c.ops += 1;
    TimeScalarAccess(true);
}

// Cross-core flags (CrossCoreSetFlag/WaitFlag modes 0, 1, 2) and the hard SyncAll barrier.
void CrossCoreSet(int mode, int flagId);
void CrossCoreWait(int flagId);
// The same with the pipe_t of the template argument (the timeline model times the set on it).
void CrossCoreSet(int mode, int flagId, int pipeT);
void CrossCoreWait(int flagId, int pipeT);
void SyncAllCores(bool aivOnly);
// IBSet (set) / IBWait (!set) of kernel_sync.h: the slot of `blockIdx` and `eventID` in the int32
// workspace at `gm` (`gmElems` elements, 0: unknown), polled through `ubElems` int32 at `ub` in
// buffer `ubBuf` (a Buf).
void InterBlockSync(bool set, bool aivOnly, const int32_t *gm, uint64_t gmElems, int32_t *ub, uint64_t ubElems,
                    int ubBuf, int32_t blockIdx, int32_t eventID);

}  // namespace emu
