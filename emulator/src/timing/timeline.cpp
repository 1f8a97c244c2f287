// The per-core timeline (see emu/timing.h): in-order issue by the scalar unit, one clock per
// pipe, and exactly the dependencies the hardware enforces (flags, queue hand-overs, barriers,
// cross-core flags, SyncAll). Costs come from emu/cost_table.h, GM hit/miss from l2_model.
#include <algorithm>
#include <cmath>

#include "emu/core.h"
#include "emu/cost_table.h"
#include "emu/race.h"
#include "emu/timing.h"
#include "l2_model.h"

namespace emu {

bool g_timing = true;
bool g_timingOnly = false;

namespace {

constexpr int kS = static_cast<int>(Pipe::S);

inline CoreClock &Clk() { return Ctx().clock; }

void Record(CoreClock &c, int pipe, double start, double end, const char *name) {
    if (c.trace == nullptr || end <= start) return;
    auto &v = *c.trace;
    // Merge back-to-back runs of the same API on the same pipe (keeps traces small).
    for (auto it = v.rbegin(); it != v.rend() && it - v.rbegin() < 8; ++it)
        if (it->pipe == pipe) {
            if (it->name == name && start - it->end < 0.5) {
                it->end = end;
                return;
            }
            break;
        }
    if (v.size() >= CoreClock::kMaxTraceSpans) {  // keeps a trace of a long launch loadable
        c.traceFull = true;
        return;
    }
    v.push_back(TraceSpan{start, end, name, static_cast<int8_t>(pipe)});
}

// The scalar unit spends `cycles` (issuing an instruction or a scalar access).
inline void Scalar(CoreClock &c, double cycles, const char *name) {
    Record(c, kS, c.scalar, c.scalar + cycles, name);
    c.scalar += cycles;
    c.busy[kS] += cycles;
}

inline void Run(CoreClock &c, int pi, double cycles, const char *name) {
    Scalar(c, Costs().issue, "issue");
    if (pi == kS) {
        Scalar(c, cycles, name);
        return;
    }
    const double start = std::max(c.scalar, c.pipeFree[pi]);
    c.pipeFree[pi] = start + cycles;
    c.busy[pi] += cycles;
    Record(c, pi, start, start + cycles, name);
}

// The time everything issued so far to pipe p has finished (S: the issue clock).
inline double DoneOf(const CoreClock &c, int p) { return p == kS ? c.scalar : std::max(c.pipeFree[p], c.scalar); }

// Pipe p starts nothing before t (a wait executes in the waiting pipe; S waits stall issue).
inline void Hold(CoreClock &c, int p, double t) {
    if (p == kS) c.scalar = std::max(c.scalar, t);
    else c.pipeFree[p] = std::max(c.pipeFree[p], t);
}

// pipe_t (kernel_sync.h) -> emu::Pipe; -1 for PIPE_ALL.
int FromPipeT(int pipeT) {
    switch (pipeT) {
        case 0: return kS;
        case 1: case 9: return static_cast<int>(Pipe::V);
        case 2: return static_cast<int>(Pipe::M);
        case 3: return static_cast<int>(Pipe::MTE1);
        case 4: return static_cast<int>(Pipe::MTE2);
        case 5: return static_cast<int>(Pipe::MTE3);
        case 10: return static_cast<int>(Pipe::FIXP);
        default: return -1;
    }
}

}  // namespace

double CoreClock::End() const {
    double t = scalar;
    for (double f : pipeFree) t = std::max(t, f);
    return t;
}

void TimeOp(Pipe p, double cycles, const char *name) {
    if (!g_timing) return;
    Run(Clk(), static_cast<int>(p), cycles, name);
}

void TimeVector(VClass cls, int widestElemBytes, uint64_t repeats, const char *name) {
    if (!g_timing) return;
    const CostTable &t = Costs();
    const int k = static_cast<int>(cls);
    const double lanes = 256.0 / widestElemBytes;
    const double perRepeat = t.vecElemScale[k] != 0 ? lanes / t.vecCyclesPerRepeat[k] : t.vecCyclesPerRepeat[k];
    Run(Clk(), static_cast<int>(Pipe::V), t.vecHead + static_cast<double>(repeats) * perRepeat, name);
}

void TimeGmRead(Pipe p, const void *gm, uint64_t count, uint64_t burst, uint64_t pitch, const char *name) {
    TimeGmRead2D(p, gm, 1, count, 0, pitch, burst, name);
}

void TimeGmRead2D(Pipe p, const void *gm, uint64_t groups, uint64_t rows, uint64_t groupPitch, uint64_t rowPitch,
                  uint64_t burst, const char *name) {
    if (!g_timing || groups == 0 || rows == 0 || burst == 0) return;
    const CostTable &t = Costs();
    CoreClock &c = Clk();
    uint64_t miss = 0;
    const auto *base = static_cast<const uint8_t *>(gm);
    for (uint64_t g = 0; g < groups; ++g)
        for (uint64_t i = 0; i < rows; ++i) miss += L2Read(base + g * groupPitch + i * rowPitch, burst);
    const uint64_t bytes = groups * rows * burst;
    const uint64_t hit = bytes - miss;
    // A burst shorter than the DMA granule still moves the whole granule.
    const double scale = std::ceil(static_cast<double>(burst) / t.burstAlign) * t.burstAlign / static_cast<double>(burst);
    c.hbmBytes += miss;
    c.l2ReadBytes += bytes;
    Run(c, static_cast<int>(p), t.dmaHead + scale * (miss / t.hbmReadBytes + hit / t.l2ReadBytes), name);
}

void TimeGmWrite(Pipe p, void *gm, uint64_t count, uint64_t burst, uint64_t pitch, bool atomic, const char *name) {
    if (!g_timing || count == 0 || burst == 0) return;
    const CostTable &t = Costs();
    CoreClock &c = Clk();
    auto *base = static_cast<uint8_t *>(gm);
    for (uint64_t i = 0; i < count; ++i) L2Write(base + i * pitch, burst);
    const uint64_t bytes = count * burst;
    const double scale = std::ceil(static_cast<double>(burst) / t.burstAlign) * t.burstAlign / static_cast<double>(burst);
    c.l2WriteBytes += bytes;
    Run(c, static_cast<int>(p), t.dmaHead + scale * bytes / t.l2WriteBytes * (atomic ? t.atomicFactor : 1.0), name);
}

void TimeFixpipe(void *gm, uint64_t count, uint64_t burst, uint64_t pitch, uint64_t elems, int quantClass, const char *name) {
    if (!g_timing) return;
    const CostTable &t = Costs();
    CoreClock &c = Clk();
    double cycles = elems / (quantClass != 0 ? t.fixpCastElems : t.fixpNoCastElems);
    if (gm != nullptr) {  // into GM: the write lands in L2 at the core's L2 write rate
        auto *base = static_cast<uint8_t *>(gm);
        for (uint64_t i = 0; i < count; ++i) L2Write(base + i * pitch, burst);
        c.l2WriteBytes += count * burst;
        cycles = std::max(cycles, static_cast<double>(count * burst) / t.fixpL2WriteBytes *
                                      (Ctx().atomicOp != 0 ? t.atomicFactor : 1.0));
    }
    Run(c, static_cast<int>(Pipe::FIXP), t.fixpHead + cycles, name);
}

void TimeMmad(uint32_t m, uint32_t n, uint32_t k, int dtypeClass) {
    if (!g_timing) return;
    const CostTable &t = Costs();
    const double macs = dtypeClass == 1 ? t.macsInt8 : dtypeClass == 2 ? t.macsFp32 : t.macsFp16;
    const double kPerCycle = macs / 256.0;  // the cube is 16 x 16 x (macs / 256) per cycle
    const double fractals = std::ceil(m / 16.0) * std::ceil(n / 16.0) * std::ceil(k / kPerCycle);
    Run(Clk(), static_cast<int>(Pipe::M), t.mmadHead + fractals, "Mmad");
}

void TimeLoadData(bool toL0B, uint64_t bytes, const char *name) {
    if (!g_timing) return;
    const CostTable &t = Costs();
    Run(Clk(), static_cast<int>(Pipe::MTE1), t.mte1Head + bytes / (toL0B ? t.l0bBytes : t.l0aBytes), name);
}

void TimeLocalCopy(Pipe p, uint64_t bytes, const char *name) {
    if (!g_timing) return;
    const CostTable &t = Costs();
    Run(Clk(), static_cast<int>(p), t.dmaHead + bytes / t.localCopyBytes, name);
}

void TimeScalarAccess(bool gm) {
    if (!g_timing || t_currentCore == nullptr) return;
    Scalar(Clk(), gm ? Costs().scalarGm : Costs().scalarLocal, gm ? "GlobalTensor scalar" : "LocalTensor scalar");
}

namespace {
void PushFlag(CoreClock &c, int event, int id, double t) {
    uint8_t &n = c.flagCount[event][id];
    uint8_t &h = c.flagHead[event][id];
    if (n == CoreClock::kFifo) {  // more pending sets than the FIFO keeps: the newest absorbs
        double &last = c.flagT[event][id][(h + n - 1) % CoreClock::kFifo];
        last = std::max(last, t);
        return;
    }
    c.flagT[event][id][(h + n) % CoreClock::kFifo] = t;
    ++n;
}
}  // namespace

void TimePresetFlag(int event, int id) {
    if (!g_timing) return;
    PushFlag(Clk(), event, id, Clk().scalar);
}

void TimeFlagSet(int event, int id) {
    if (!g_timing) return;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "SetFlag");
    Pipe from, to;
    EventPipes(event, &from, &to);
    (void)to;
    PushFlag(c, event, id, DoneOf(c, static_cast<int>(from)));
}

void TimeFlagWait(int event, int id) {
    if (!g_timing) return;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "WaitFlag");
    Pipe from, to;
    EventPipes(event, &from, &to);
    uint8_t &n = c.flagCount[event][id];
    uint8_t &h = c.flagHead[event][id];
    if (n == 0) return;  // the functional check reports a wait without a set
    const double t = c.flagT[event][id][h];
    h = (h + 1) % CoreClock::kFifo;
    --n;
    Hold(c, static_cast<int>(to), t);
}

double TimeSignal(Pipe from) {
    if (!g_timing) return 0;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "TQue signal");
    return DoneOf(c, static_cast<int>(from));
}

void TimeAcquire(Pipe to, double t) {
    if (!g_timing) return;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "TQue acquire");
    Hold(c, static_cast<int>(to), t);
}

void TimeBarrierAll() {
    if (!g_timing) return;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "PipeBarrier");
    const double t = c.End();
    c.scalar = t;
    for (double &f : c.pipeFree) f = std::max(f, t);
}

double TimeCrossSet(int pipeT) {
    if (!g_timing) return 0;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "CrossCoreSetFlag");
    const int p = FromPipeT(pipeT);
    return (p < 0 ? c.End() : DoneOf(c, p)) + Costs().crossFlag;
}

void TimeCrossWait(int pipeT, double t) {
    if (!g_timing) return;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "CrossCoreWaitFlag");
    const int p = FromPipeT(pipeT);
    if (p >= 0) {
        Hold(c, p, t);
        return;
    }
    c.scalar = std::max(c.scalar, t);
    for (double &f : c.pipeFree) f = std::max(f, t);
}

void TraceCrossFlow(int from, int flag, double t) {
    CoreClock &c = Clk();
    if (!g_timing || c.trace == nullptr || c.trace->size() >= CoreClock::kMaxTraceSpans) return;
    // From the set's completion on the setter (t carries the flag latency) to the release here.
    c.trace->push_back(TraceSpan{t - Costs().crossFlag, std::max(c.scalar, t), "CrossCoreFlag", kFlowPipe, from,
                                 static_cast<int8_t>(flag)});
}

double TimeSyncArrive() {
    if (!g_timing) return 0;
    CoreClock &c = Clk();
    Scalar(c, Costs().issue, "SyncAll");
    return c.End();
}

void TimeSyncRelease(double t) {
    if (!g_timing) return;
    CoreClock &c = Clk();
    const double r = t + Costs().syncAll;
    Record(c, kS, c.scalar, r, "SyncAll wait");
    c.scalar = std::max(c.scalar, r);
    for (double &f : c.pipeFree) f = std::max(f, r);
}

void TimingBeginCore(double origin) {
    CoreClock &c = Clk();
    std::vector<TraceSpan> *trace = c.trace;
    c = CoreClock{};
    c.trace = trace;
    if (trace != nullptr) trace->clear();
    c.origin = c.scalar = origin;
    for (double &f : c.pipeFree) f = origin;
}

}  // namespace emu
