// The core threads' side of the timeline model (see emu/timing.h): every timed API call appends
// one record to the core's log, with the costs that do not depend on other cores already
// computed from the cost table; the replay (replay.cpp) runs the clocks.
#include <cmath>

#include "emu/core.h"
#include "emu/cost_table.h"
#include "replay.h"

namespace emu {

bool g_timing = true;
bool g_timingOnly = false;

namespace {

TimingRecord &Append(RecKind kind, int pipe = 0, const char *name = nullptr)
{
    TimingLog &l = Ctx().timeline;
    const uint64_t n = l.written;
    if (n % TimingLog::kChunk == 0) {
        auto *chunk = new TimingRecord[TimingLog::kChunk];
        std::lock_guard<std::mutex> lock(l.mu);
        l.chunks.push_back(chunk);
        l.tail = chunk;
    }
    TimingRecord &r = l.tail[n % TimingLog::kChunk];
    r = TimingRecord{};
    r.kind = kind;
    r.pipe = static_cast<int8_t>(pipe);
    r.name = name;
    return r;
}

// Makes the record appended last visible to the replay; a full chunk lets the replay advance.
void Publish()
{
    TimingLog &l = Ctx().timeline;
    l.published.store(++l.written, std::memory_order_release);
    if (l.written % TimingLog::kChunk == 0) ReplayPoll();
}

// Counts an instruction issued to pipe p (the handles of TimeLastIssued).
void Issued(Pipe p)
{
    if (p != Pipe::S) ++Ctx().timeline.issued[static_cast<int>(p)];
}

// An instruction of `cycles` plus the head cost `head` (added by the replay).
void Op(Pipe p, double cycles, const char *name, Head head = Head::None)
{
    Issued(p);
    TimingRecord &r = Append(RecKind::Op, static_cast<int>(p), name);
    r.cycles = cycles;
    r.a = static_cast<uint8_t>(head);
    Publish();
}

void Gm(RecKind kind, Pipe p, const void *gm, uint64_t groups, uint64_t rows, uint64_t groupPitch, uint64_t rowPitch,
        uint64_t burst, bool atomic, double cycles, const char *name, bool nd2nz = false)
{
    Issued(p);
    TimingRecord &r = Append(kind, static_cast<int>(p), name);
    r.addr = reinterpret_cast<uint64_t>(gm);
    r.groups = static_cast<uint32_t>(groups);
    r.rows = static_cast<uint32_t>(rows);
    r.groupPitch = groupPitch;
    r.rowPitch = rowPitch;
    r.burst = static_cast<uint32_t>(burst);
    r.a = nd2nz ? 1 : 0;
    r.b = atomic ? 1 : 0;
    r.cycles = cycles;
    Publish();
}

void Event(RecKind kind, int event, int id)
{
    TimingRecord &r = Append(kind);
    r.a = static_cast<uint8_t>(event);
    r.b = static_cast<uint8_t>(id);
    Publish();
}

}  // namespace

void TimeOp(Pipe p, double cycles, const char *name)
{
    if (g_timing) Op(p, cycles, name);
}

void TimeVector(VClass cls, int widestElemBytes, uint64_t repeats, const char *name)
{
    if (!g_timing) return;
    const CostTable &t = Costs();
    const int k = static_cast<int>(cls);
    const double lanes = 256.0 / widestElemBytes;
    const double perRepeat = t.vecElemScale[k] != 0 ? lanes / t.vecCyclesPerRepeat[k] : t.vecCyclesPerRepeat[k];
    Op(Pipe::V, static_cast<double>(repeats) * perRepeat, name, Head::Vec);
}

void TimeGmRead(Pipe p, const void *gm, uint64_t count, uint64_t burst, uint64_t pitch, const char *name)
{
    if (!g_timing || count == 0 || burst == 0) return;
    Gm(RecKind::GmRead, p, gm, 1, count, 0, pitch, burst, false, 0, name);
}

void TimeGmRead2D(Pipe p, const void *gm, uint64_t groups, uint64_t rows, uint64_t groupPitch, uint64_t rowPitch,
                  uint64_t burst, const char *name)
{
    if (!g_timing || groups == 0 || rows == 0 || burst == 0) return;
    Gm(RecKind::GmRead, p, gm, groups, rows, groupPitch, rowPitch, burst, false, 0, name, true);
}

void TimeGmWrite(Pipe p, void *gm, uint64_t count, uint64_t burst, uint64_t pitch, bool atomic, const char *name)
{
    if (!g_timing || count == 0 || burst == 0) return;
    Gm(RecKind::GmWrite, p, gm, 1, count, 0, pitch, burst, atomic, 0, name);
}

void TimeFixpipe(void *gm, uint64_t count, uint64_t burst, uint64_t pitch, uint64_t elems, int quantClass,
                 const char *name)
{
    if (!g_timing) return;
    const CostTable &t = Costs();
    const double cycles = elems / (quantClass != 0 ? t.fixpCastElems : t.fixpNoCastElems);
    if (gm == nullptr)
        Op(Pipe::FIXP, cycles, name, Head::Fixp);
    else
        Gm(RecKind::Fixpipe, Pipe::FIXP, gm, 1, count, 0, pitch, burst, Ctx().atomicOp != 0, cycles, name);
}

void TimeMmad(uint32_t m, uint32_t n, uint32_t k, int dtypeClass)
{
    if (!g_timing) return;
    const CostTable &t = Costs();
    const double macs = dtypeClass == 1 ? t.macsInt8 : dtypeClass == 2 ? t.macsFp32 : t.macsFp16;
    const double kPerCycle = macs / 256.0;  // the cube is 16 x 16 x (macs / 256) per cycle
    const double fractals = std::ceil(m / 16.0) * std::ceil(n / 16.0) * std::ceil(k / kPerCycle);
    Op(Pipe::M, fractals, "Mmad", Head::Mmad);
}

void TimeLoadData(bool toL0B, uint64_t bytes, const char *name)
{
    if (!g_timing) return;
    const CostTable &t = Costs();
    Op(Pipe::MTE1, bytes / (toL0B ? t.l0bBytes : t.l0aBytes), name, Head::Mte1);
}

void TimeLocalCopy(Pipe p, uint64_t bytes, const char *name)
{
    if (!g_timing) return;
    Op(p, bytes / Costs().localCopyBytes, name, Head::Dma);
}

void TimeScalarAccess(bool gm)
{
    if (!g_timing || t_currentCore == nullptr) return;
    Append(RecKind::Scalar, 0, gm ? "GlobalTensor scalar" : "LocalTensor scalar").b = gm ? 1 : 0;
    Publish();
}

void TimePresetFlag(int event, int id)
{
    if (g_timing) Event(RecKind::FlagPreset, event, id);
}

void TimeFlagSet(int event, int id)
{
    if (g_timing) Event(RecKind::FlagSet, event, id);
}

void TimeFlagWait(int event, int id)
{
    if (g_timing) Event(RecKind::FlagWait, event, id);
}

void TimeSignal(Pipe from, const void *key, const char *name)
{
    if (!g_timing) return;
    Append(RecKind::Signal, static_cast<int>(from), name).addr = reinterpret_cast<uint64_t>(key);
    Publish();
}

void TimeAcquire(Pipe to, const void *key, const char *name)
{
    if (!g_timing) return;
    Append(RecKind::Acquire, static_cast<int>(to), name).addr = reinterpret_cast<uint64_t>(key);
    Publish();
}

void TimeBarrierAll()
{
    if (!g_timing) return;
    Append(RecKind::Barrier);
    Publish();
}

// The core thread counts what it issued per pipe exactly as the replay does (Run: one per
// instruction on a pipe other than S), so a handle names the same instruction in both.
uint64_t TimeLastIssued(Pipe p) { return g_timing ? Ctx().timeline.issued[static_cast<int>(p)] : 0; }

void TimeUnitWait(Pipe to, Pipe from, uint64_t handle, uint64_t blocks)
{
    if (!g_timing) return;
    TimingRecord &r = Append(RecKind::UnitWait, static_cast<int>(to));
    r.b = static_cast<uint8_t>(from);
    r.addr = handle;
    r.rows = static_cast<uint32_t>(blocks);
    Publish();
}

void TimeUnitFinish(Pipe p, uint64_t blocks, Pipe from, uint64_t handle)
{
    if (!g_timing) return;
    TimingRecord &r = Append(RecKind::UnitFinish, static_cast<int>(p));
    r.b = static_cast<uint8_t>(from);
    r.addr = handle;
    r.rows = static_cast<uint32_t>(blocks);
    Publish();
}

uint64_t TimeCrossSet(int pipeT)
{
    if (!g_timing) return 0;
    TimingRecord &r = Append(RecKind::CrossSet, pipeT);
    r.addr = ReplayNextSetId(Ctx().timeline.index);
    const uint64_t id = r.addr;
    Publish();
    return id;
}

void TimeCrossBump(int counter, const uint64_t *setIds, int count)
{
    if (g_timing) ReplayPushToken(counter, setIds, count);
}

void TimeCrossWait(int pipeT, int counter)
{
    if (!g_timing) return;
    Append(RecKind::CrossWait, pipeT).addr = static_cast<uint64_t>(counter);
    Publish();
}

void TimeSyncArrive(uint64_t id, int members)
{
    if (!g_timing) return;
    TimingRecord &r = Append(RecKind::SyncArrive);
    r.addr = id;
    r.rows = static_cast<uint32_t>(members);
    Publish();
}

void TimeSyncRelease(uint64_t id)
{
    if (!g_timing) return;
    Append(RecKind::SyncRelease).addr = id;
    Publish();
}

uint64_t TimeSlotId() { return g_timing ? ReplayNextSetId(Ctx().timeline.index) : 0; }

void TimeSlotWrite(uint64_t id)
{
    if (!g_timing) return;
    Append(RecKind::SlotWrite, static_cast<int>(Pipe::MTE3)).addr = id;
    Publish();
}

void TimeSlotHold(uint64_t id, const char *waiter, int eventID)
{
    if (!g_timing) return;
    TimingRecord &r = Append(RecKind::SlotHold, static_cast<int>(Pipe::MTE2), waiter);
    r.addr = id;
    r.rows = static_cast<uint32_t>(eventID);
    Publish();
}

void TimingBeginCore(double origin)
{
    if (!g_timing) return;
    Append(RecKind::Begin).cycles = origin;
    Publish();
}

void TimingEndCore()
{
    if (!g_timing || t_currentCore == nullptr) return;
    Append(RecKind::End);
    Publish();
    ReplayPoll();
}

}  // namespace emu
