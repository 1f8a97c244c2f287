// The replay of the timeline model (see replay.h): per-core clocks (in-order issue by the scalar
// unit into bounded per-pipe queues, one clock per pipe, exactly the dependencies the hardware
// enforces) run over the cores' logs; GM accesses go to the shared L2 in modelled-time order.
#include "replay.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <memory>
#include <queue>

#include "emu/core.h"
#include "emu/cost_table.h"
#include "bandwidth.h"
#include "emu/race.h"
#include "l2_model.h"

namespace emu {
namespace {

constexpr int kS = static_cast<int>(Pipe::S);
constexpr uint64_t kCoreMask = (uint64_t{1} << 18) - 1;  // cross-core set ids: sequence << 18 | core

enum class State : uint8_t { Idle, Starved, AtL2, Parked, Ended };

struct Core {
    TimingLog *log = nullptr;
    CoreClock clock;
    State state = State::Idle;
    uint64_t consumed = 0;
    TimingRecord *cur = nullptr;  // the chunk holding record `consumed` (null: fetch it)
    std::vector<uint64_t> token;  // Parked on a cross-core wait: the set ids it needs (else empty)
    bool visiting = false;
};

struct Barrier {
    int arrived = 0, members = 0;
    double latest = 0;
};

struct HeapEntry {
    double key;
    int core;
    bool operator<(const HeapEntry &o) const { return key != o.key ? key > o.key : core > o.core; }  // min-heap
};

std::mutex g_mu;  // the replay: one thread at a time
std::vector<Core> g_cores;
std::vector<int> g_wave, g_starved, g_parked;
std::priority_queue<HeapEntry> g_heap;
std::unordered_map<uint64_t, double> g_setTime;  // cross-core set / slot write id -> its time, once replayed
std::unordered_map<uint64_t, Barrier> g_barriers;
std::atomic<uint64_t> g_nextId{0};
std::mutex g_tokenMu;                                      // the tokens are written by the core threads
std::vector<std::vector<std::vector<uint64_t>>> g_tokens;  // per counter, in bump order
std::vector<uint32_t> g_tokenRead;                         // per counter: tokens the replay consumed
bool g_keep = false;                                       // keep the logs for another replay
bool g_borrow = false;                                     // reading kept chunks: never free them
std::vector<std::vector<TimingRecord *>> g_kept;           // per core: its whole log, in order
std::vector<uint64_t> g_keptRecords;                       // per core: records in it
uint32_t g_depth[kTimedPipes] = {};                        // issue-queue depth per pipe
BandwidthLedger g_hbm, g_l2;                               // device-wide bandwidth over time

void Record(CoreClock &c, int pipe, double start, double end, const char *name)
{
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
void Scalar(CoreClock &c, double cycles, const char *name)
{
    Record(c, kS, c.scalar, c.scalar + cycles, name);
    c.scalar += cycles;
    c.busy[kS] += cycles;
}

// The issue of an instruction into pipe pi: the scalar unit spends `issue` cycles, then waits
// while the pipe's queue holds `depth` instructions that have not started. Returns the
// instruction's earliest start.
double Issue(CoreClock &c, int pi)
{
    Scalar(c, Costs().issue, "issue");
    const uint32_t n = c.issued[pi], depth = g_depth[pi];
    if (n >= depth) {
        const double slot = c.queued[pi][(n - depth) % kMaxQueueDepth];
        if (slot > c.scalar) {
            Record(c, kS, c.scalar, slot, "issue queue full");
            c.scalar = slot;
        }
    }
    return std::max(c.scalar, c.pipeFree[pi]);
}

// When the next instruction issued to pi would start (the replay's order key for GM accesses).
double NextStart(const CoreClock &c, int pi)
{
    double s = c.scalar + Costs().issue;
    const uint32_t n = c.issued[pi], depth = g_depth[pi];
    if (n >= depth) s = std::max(s, c.queued[pi][(n - depth) % kMaxQueueDepth]);
    return std::max(s, c.pipeFree[pi]);
}

void Run(CoreClock &c, int pi, double cycles, const char *name)
{
    if (pi == kS) {
        Scalar(c, Costs().issue, "issue");
        Scalar(c, cycles, name);
        return;
    }
    const double start = Issue(c, pi);
    c.queued[pi][c.issued[pi] % kMaxQueueDepth] = start;
    c.recent[pi][c.issued[pi] % kRecent][0] = start;
    c.recent[pi][c.issued[pi] % kRecent][1] = start + cycles;
    ++c.issued[pi];
    c.pipeFree[pi] = start + cycles;
    c.busy[pi] += cycles;
    Record(c, pi, start, start + cycles, name);
}

// The time everything issued so far to pipe p has finished (S: the issue clock).
double DoneOf(const CoreClock &c, int p) { return p == kS ? c.scalar : std::max(c.pipeFree[p], c.scalar); }

// Pipe p starts nothing before t (a wait executes in the waiting pipe; S waits stall issue).
void Hold(CoreClock &c, int p, double t)
{
    if (p == kS)
        c.scalar = std::max(c.scalar, t);
    else
        c.pipeFree[p] = std::max(c.pipeFree[p], t);
}

void HoldAll(CoreClock &c, double t)
{
    c.scalar = std::max(c.scalar, t);
    for (double &f : c.pipeFree) f = std::max(f, t);
}

void PushFlag(CoreClock &c, int event, int id, double t)
{
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

// The bytes a burst of `len` bytes at GM address `addr` moves: the DMA cuts it at 512 B
// boundaries and moves each piece as one aligned 128, 256 or 512 B transfer, the smallest that
// covers it (the cost table's dma_min_transfer is the smallest).
uint64_t MovedBytes(uint64_t addr, uint64_t len)
{
    const uint64_t line = kDmaLine, minimum = std::max<uint64_t>(1, static_cast<uint64_t>(Costs().dmaMinTransfer));
    auto piece = [&](uint64_t s, uint64_t e) {  // [s, e) inside one line
        uint64_t size = minimum;
        while (size < line && s / size != (e - 1) / size) size *= 2;
        return std::min(size, line);
    };
    const uint64_t end = addr + len, firstEnd = std::min(end, (addr / line + 1) * line);
    if (firstEnd == end) return piece(addr, end);
    const uint64_t lastStart = std::max(firstEnd, (end - 1) / line * line);
    return piece(addr, firstEnd) + (lastStart - firstEnd) + piece(lastStart, end);
}

// Moved over useful bytes of the bursts of r (contiguous rows are one burst).
double BurstScale(const TimingRecord &r)
{
    const uint64_t burst = r.burst;
    if (burst == 0) return 1.0;
    const bool rowsJoin = r.rows <= 1 || r.rowPitch == burst;
    const uint64_t len = rowsJoin ? burst * std::max<uint32_t>(r.rows, 1) : burst;
    const uint32_t runs = rowsJoin ? 1 : r.rows;
    uint64_t moved = 0;
    for (uint32_t g = 0; g < std::max<uint32_t>(r.groups, 1); ++g)
        for (uint32_t i = 0; i < runs; ++i) moved += MovedBytes(r.addr + g * r.groupPitch + i * r.rowPitch, len);
    const double useful = static_cast<double>(std::max<uint32_t>(r.groups, 1)) * runs * len;
    return static_cast<double>(moved) / useful;
}

double HeadCycles(Head h)
{
    const CostTable &t = Costs();
    switch (h) {
        case Head::Mmad:
            return t.mmadHead;
        case Head::Mte1:
            return t.mte1Head;
        case Head::Fixp:
            return t.fixpHead;
        case Head::Vec:
            return t.vecHead;
        case Head::Dma:
            return t.dmaHead;
        case Head::None:
            break;
    }
    return 0;
}

bool IsGmAccess(const TimingRecord &r)
{
    return r.kind == RecKind::GmRead || r.kind == RecKind::GmWrite || r.kind == RecKind::Fixpipe;
}

// The fixed cost of a GM DMA: its start, plus a cost per row when it converts ND to NZ.
double DmaHead(const TimingRecord &r)
{
    const CostTable &t = Costs();
    return t.dmaHead + (r.a ? static_cast<double>(r.groups) * r.rows * t.nd2nzRowCycles : 0.0);
}

// The cycles of a GM transfer of record r on core c: `head` to start, then `transfer` cycles
// moving `l2Bytes` through the L2, `hbmBytes` of them from HBM, unless the device's bandwidth
// in the windows it spans is taken by earlier transfers (bandwidth.h).
double Shared(CoreClock &c, const TimingRecord &r, double head, double transfer, double l2Bytes, double hbmBytes)
{
    if (transfer <= 0) return head;
    const double from = NextStart(c, r.pipe) + head, alone = from + transfer;
    const double l2End = g_l2.Take(from, l2Bytes, l2Bytes / transfer);
    const double hbmEnd = g_hbm.Take(from, hbmBytes, hbmBytes / transfer);
    const double end = std::max({alone, l2End, hbmEnd});
    if (end > alone) c.bandwidthWait[hbmEnd >= l2End ? 0 : 1][r.pipe] += end - alone;
    return head + (end - from);
}

// The GM access of record r (the L2 sees it now).
void ApplyGm(CoreClock &c, const TimingRecord &r)
{
    const CostTable &t = Costs();
    const auto *base = reinterpret_cast<const uint8_t *>(r.addr);
    const uint64_t bytes = static_cast<uint64_t>(r.groups) * r.rows * r.burst;
    const double scale = BurstScale(r);
    if (r.kind == RecKind::GmRead) {
        uint64_t miss = 0, lines = 0;
        for (uint32_t g = 0; g < r.groups; ++g)
            for (uint32_t i = 0; i < r.rows; ++i)
                miss += L2Read(base + g * r.groupPitch + i * r.rowPitch, r.burst, &lines);
        const uint64_t hit = bytes - miss;
        c.hbmBytes += miss;
        c.l2ReadBytes += bytes;
        const double transfer = scale * (miss / t.hbmReadBytes + hit / t.l2ReadBytes);
        // HBM delivers whole lines: the first reader of a line pays for all of it.
        Run(c, r.pipe, Shared(c, r, DmaHead(r), transfer, scale * bytes, static_cast<double>(lines)), r.name);
        return;
    }
    for (uint32_t i = 0; i < r.rows; ++i) L2Write(base + i * r.rowPitch, r.burst);
    c.l2WriteBytes += bytes;
    const double atomic = r.b ? t.atomicFactor : 1.0;
    if (r.kind == RecKind::GmWrite) {
        const double transfer = scale * bytes / t.l2WriteBytes * atomic;
        Run(c, r.pipe, Shared(c, r, DmaHead(r), transfer, scale * bytes, 0), r.name);
        return;
    }
    // A Fixpipe converts while it writes: its L2 share is taken over the whole of its time.
    const double transfer = std::max(r.cycles, scale * bytes / t.fixpL2WriteBytes * atomic);
    Run(c, r.pipe, Shared(c, r, t.fixpHead, transfer, scale * bytes, 0), r.name);
}

// The token of the wait on `counter` (it exists: the launcher matched the wait before the core
// logged it); true with its time when every set in it was replayed.
bool TokenReady(Core &core, int counter, double *t)
{
    if (core.token.empty()) {
        std::lock_guard<std::mutex> lock(g_tokenMu);
        core.token = g_tokens[counter][g_tokenRead[counter]];
    }
    double latest = 0;
    for (uint64_t id : core.token) {
        auto it = g_setTime.find(id);
        if (it == g_setTime.end()) return false;
        latest = std::max(latest, it->second);
    }
    *t = latest;
    return true;
}

// The set of a token whose time releases the wait (the latest one).
uint64_t LatestSet(const std::vector<uint64_t> &token)
{
    uint64_t best = token.front();
    for (uint64_t id : token)
        if (g_setTime[id] > g_setTime[best]) best = id;
    return best;
}

// For the trace: the flag set by the sub-core in set id `set` (ReplayNextSetId: its low bits)
// at `from` released this core's wait at `to` (`name`: "CrossCoreFlag", or the waiting IBSet /
// IBWait with `flag` its eventID).
void RecordFlow(CoreClock &c, uint64_t set, int flag, double from, double to, const char *name = "CrossCoreFlag")
{
    if (c.trace == nullptr || c.trace->size() >= CoreClock::kMaxTraceSpans) return;
    c.trace->push_back(
        TraceSpan{from, to, name, kFlowPipe, static_cast<int32_t>(set & kCoreMask), static_cast<int8_t>(flag)});
}

void PopToken(Core &core, int counter)
{
    core.token.clear();
    ++g_tokenRead[counter];
}

// Applies record r to core c. False: r waits for another core's set or arrival (not applied).
bool Apply(Core &core, const TimingRecord &r)
{
    CoreClock &c = core.clock;
    const CostTable &t = Costs();
    switch (r.kind) {
        case RecKind::Begin:
            c.origin = c.scalar = r.cycles;
            for (double &f : c.pipeFree) f = r.cycles;
            return true;
        case RecKind::Op:
            Run(c, r.pipe, r.cycles + HeadCycles(static_cast<Head>(r.a)), r.name);
            return true;
        case RecKind::Scalar:
            Scalar(c, r.b ? t.scalarGm : t.scalarLocal, r.name);
            return true;
        case RecKind::GmRead:
        case RecKind::GmWrite:
        case RecKind::Fixpipe:
            ApplyGm(c, r);
            return true;
        case RecKind::FlagSet: {
            Scalar(c, t.issue, "SetFlag");
            Pipe from, to;
            EventPipes(r.a, &from, &to);
            PushFlag(c, r.a, r.b, DoneOf(c, static_cast<int>(from)));
            return true;
        }
        case RecKind::FlagWait: {
            Scalar(c, t.issue, "WaitFlag");
            Pipe from, to;
            EventPipes(r.a, &from, &to);
            uint8_t &n = c.flagCount[r.a][r.b];
            uint8_t &h = c.flagHead[r.a][r.b];
            if (n == 0) return true;  // the functional check reports a wait without a set
            const double when = c.flagT[r.a][r.b][h];
            h = (h + 1) % CoreClock::kFifo;
            --n;
            Hold(c, static_cast<int>(to), when);
            return true;
        }
        case RecKind::FlagPreset:
            PushFlag(c, r.a, r.b, c.scalar);
            return true;
        case RecKind::Signal:
            Scalar(c, t.issue, r.name != nullptr ? r.name : "TQue signal");
            c.handOver[reinterpret_cast<const void *>(r.addr)] = DoneOf(c, r.pipe);
            return true;
        case RecKind::Acquire: {
            Scalar(c, t.issue, r.name != nullptr ? r.name : "TQue acquire");
            auto it = c.handOver.find(reinterpret_cast<const void *>(r.addr));
            if (it != c.handOver.end()) Hold(c, r.pipe, it->second);
            return true;
        }
        case RecKind::Barrier: {
            Scalar(c, t.issue, "PipeBarrier");
            HoldAll(c, c.End());
            return true;
        }
        case RecKind::UnitWait: {  // pipe a waits for the first of `rows` shares of instruction addr on pipe b
            const int from = r.b;
            if (r.addr == 0 || c.issued[from] - r.addr >= kRecent) return true;  // none, or long done
            const double *x = c.recent[from][(r.addr - 1) % kRecent];
            Hold(c, r.pipe, x[0] + (x[1] - x[0]) / std::max<uint32_t>(r.rows, 1));
            return true;
        }
        case RecKind::UnitFinish: {  // the last instruction on pipe r.pipe ends a share after instruction addr on b
            const int p = r.pipe, from = r.b;
            if (r.addr == 0 || c.issued[p] == 0 || c.issued[from] - r.addr >= kRecent) return true;
            double *mine = c.recent[p][(c.issued[p] - 1) % kRecent];
            const double end =
                c.recent[from][(r.addr - 1) % kRecent][1] + (mine[1] - mine[0]) / std::max<uint32_t>(r.rows, 1);
            if (end > mine[1]) {
                c.busy[p] += end - mine[1];
                mine[1] = end;
                c.pipeFree[p] = std::max(c.pipeFree[p], end);
            }
            return true;
        }
        case RecKind::CrossSet: {
            Scalar(c, t.issue, "CrossCoreSetFlag");
            const int p = PipeOfPipeT(r.pipe);
            g_setTime[r.addr] = (p < 0 ? c.End() : DoneOf(c, p)) + t.crossFlag;
            return true;
        }
        case RecKind::CrossWait: {
            double when;
            if (!TokenReady(core, static_cast<int>(r.addr), &when)) return false;
            const uint64_t releaser = LatestSet(core.token);
            PopToken(core, static_cast<int>(r.addr));
            Scalar(c, t.issue, "CrossCoreWaitFlag");
            const int p = PipeOfPipeT(r.pipe);
            if (p >= 0)
                Hold(c, p, when);
            else
                HoldAll(c, when);
            RecordFlow(c, releaser, static_cast<int>(r.addr) % kCrossFlags, when - t.crossFlag,
                       std::max(c.scalar, when));
            return true;
        }
        case RecKind::SyncArrive: {
            Scalar(c, t.issue, "SyncAll");
            Barrier &b = g_barriers[r.addr];
            b.members = static_cast<int>(r.rows);
            b.latest = std::max(b.latest, c.End());
            ++b.arrived;
            return true;
        }
        case RecKind::SyncRelease: {
            auto it = g_barriers.find(r.addr);
            if (it == g_barriers.end() || it->second.arrived < it->second.members) return false;
            const double when = it->second.latest + t.syncAll;
            Record(c, kS, c.scalar, when, "SyncAll wait");
            HoldAll(c, when);
            return true;
        }
        case RecKind::SlotWrite:  // no instruction of its own: the write is the GmWrite before it
            g_setTime[r.addr] = DoneOf(c, r.pipe);
            return true;
        case RecKind::SlotHold: {
            // The poll that sees the slot ready reads it after the write that made it so.
            auto it = g_setTime.find(r.addr);
            if (it == g_setTime.end()) {
                core.token.assign(1, r.addr);  // parked on the writing core (WaitsOnStarved)
                return false;
            }
            core.token.clear();
            Hold(c, r.pipe, it->second);
            RecordFlow(c, r.addr, static_cast<int>(r.rows), it->second, std::max(c.scalar, it->second), r.name);
            return true;
        }
        case RecKind::End:
            return true;
    }
    return true;
}

bool Available(const Core &c) { return c.log->published.load(std::memory_order_acquire) > c.consumed; }

const TimingRecord &Peek(Core &c)
{
    if (c.cur == nullptr) {
        std::lock_guard<std::mutex> lock(c.log->mu);
        c.cur = c.log->chunks.front();
    }
    return c.cur[c.consumed % TimingLog::kChunk];
}

void Consume(Core &c)
{
    if (++c.consumed % TimingLog::kChunk == 0) {
        std::lock_guard<std::mutex> lock(c.log->mu);
        if (g_keep)
            g_kept[c.log->index].push_back(c.log->chunks.front());
        else if (!g_borrow)
            delete[] c.log->chunks.front();
        c.log->chunks.pop_front();
        c.cur = nullptr;
    }
}

void Unpark();

// Runs core i over its records until a GM access (queued in the heap by its start), a wait on
// another core, its end, or the end of what its thread has written so far.
void Advance(int i)
{
    Core &core = g_cores[i];
    while (Available(core)) {
        const TimingRecord &r = Peek(core);
        if (IsGmAccess(r) && (r.kind != RecKind::Fixpipe || r.addr != 0)) {
            const int pipe = r.pipe;
            core.state = State::AtL2;
            g_heap.push({NextStart(core.clock, pipe), i});
            return;
        }
        if (!Apply(core, r)) {
            core.state = State::Parked;
            g_parked.push_back(i);
            return;
        }
        const RecKind kind = r.kind;
        Consume(core);
        if (kind == RecKind::End) {
            core.state = State::Ended;
            return;
        }
        if (kind == RecKind::CrossSet || kind == RecKind::SyncArrive || kind == RecKind::SlotWrite) Unpark();
    }
    core.state = State::Starved;
    g_starved.push_back(i);
}

// Cores waiting on a set or an arrival that was just replayed try again.
void Unpark()
{
    std::vector<int> parked;
    parked.swap(g_parked);
    for (int i : parked) Advance(i);
}

// Whether parked core i may be released by a core whose log is still being written.
bool WaitsOnStarved(int i)
{
    Core &core = g_cores[i];
    if (core.state == State::Starved) return true;
    if (core.state != State::Parked || core.visiting) return false;
    if (core.token.empty()) return true;  // a SyncAll: conservatively, any starved member
    core.visiting = true;
    bool starved = false;
    for (uint64_t id : core.token)
        if (!starved && g_setTime.find(id) == g_setTime.end())
            starved = WaitsOnStarved(static_cast<int>(id & kCoreMask));
    core.visiting = false;
    return starved;
}

// The next GM access (key, core) may go only if no core still writing its log could produce an
// earlier one: its future accesses start after its scalar clock, and so do those of cores it
// would release.
bool MayGo(double key)
{
    for (int i : g_starved)
        if (g_cores[i].clock.scalar <= key) return false;
    if (g_starved.empty()) return true;
    for (int i : g_parked)
        if (g_cores[i].clock.scalar <= key && WaitsOnStarved(i)) return false;
    return true;
}

// Replays as far as the logs written so far determine.
void Run()
{
    for (;;) {
        std::vector<int> starved;
        starved.swap(g_starved);
        for (int i : starved) {
            if (g_cores[i].state != State::Starved) continue;
            if (Available(g_cores[i]))
                Advance(i);
            else
                g_starved.push_back(i);
        }
        if (g_heap.empty()) return;
        const HeapEntry top = g_heap.top();
        if (!MayGo(top.key)) return;
        g_heap.pop();
        Core &core = g_cores[top.core];
        Apply(core, Peek(core));
        Consume(core);
        Advance(top.core);
    }
}

}  // namespace

double CoreClock::End() const
{
    double t = scalar;
    for (double f : pipeFree) t = std::max(t, f);
    return t;
}

// The replay's state at the start of a launch (the tokens and kept logs are the caller's).
void Reset(int cores, std::vector<std::vector<TraceSpan>> *traces)
{
    const CostTable &t = Costs();
    for (int p = 0; p < kTimedPipes; ++p) {
        const bool cube = p == static_cast<int>(Pipe::MTE1) || p == static_cast<int>(Pipe::M);
        const double d = cube ? t.cubeQueueDepth : t.issueQueueDepth;
        g_depth[p] = static_cast<uint32_t>(std::min<double>(std::max<double>(d, 1), kMaxQueueDepth));
    }
    g_cores.clear();
    g_cores.resize(cores);
    for (int i = 0; i < cores; ++i)
        if (traces != nullptr && static_cast<int>(traces->size()) > i) g_cores[i].clock.trace = &(*traces)[i];
    g_wave.clear();
    g_starved.clear();
    g_parked.clear();
    g_heap = {};
    g_setTime.clear();
    g_barriers.clear();
    g_tokenRead.assign(static_cast<size_t>(cores) * kCrossFlags, 0);
    L2Reset(t.l2LineBytes, t.l2Capacity);
    g_hbm.Reset(t.hbmBytesPerSec / t.clockHz, t.bandwidthWindow);
    g_l2.Reset(t.l2BytesPerSec / t.clockHz, t.bandwidthWindow);
}

void FreeKept()
{
    for (auto &v : g_kept)
        for (TimingRecord *c : v) delete[] c;
    g_kept.clear();
    g_keptRecords.clear();
}

void ReplayBeginLaunch(int cores, std::vector<std::vector<TraceSpan>> *traces, bool keep)
{
    std::lock_guard<std::mutex> lock(g_mu);
    FreeKept();
    g_keep = keep;
    if (keep) {
        g_kept.resize(cores);
        g_keptRecords.assign(cores, 0);
    }
    g_nextId = 0;
    {
        std::lock_guard<std::mutex> tl(g_tokenMu);
        g_tokens.assign(static_cast<size_t>(cores) * kCrossFlags, {});
    }
    Reset(cores, traces);
}

void ReplayBeginWave(const std::vector<TimingLog *> &logs)
{
    std::lock_guard<std::mutex> lock(g_mu);
    g_wave.clear();
    g_starved.clear();
    for (TimingLog *l : logs) {
        Core &c = g_cores[l->index];
        c.log = l;
        c.state = State::Starved;
        g_wave.push_back(l->index);
        g_starved.push_back(l->index);
    }
}

void ReplayPoll()
{
    std::unique_lock<std::mutex> lock(g_mu, std::try_to_lock);
    if (lock.owns_lock() && !g_wave.empty()) Run();
}

bool ReplayFinishWave()
{
    std::lock_guard<std::mutex> lock(g_mu);
    Run();
    bool done = true;
    for (int i : g_wave) done = done && g_cores[i].state == State::Ended;
    if (g_keep)
        for (int i : g_wave) {  // the rest of the log (at most the chunk being read) joins the kept part
            TimingLog &l = *g_cores[i].log;
            std::lock_guard<std::mutex> ll(l.mu);
            for (TimingRecord *c : l.chunks) g_kept[i].push_back(c);
            g_keptRecords[i] = l.written;
            l.chunks.clear();
            l.tail = nullptr;
        }
    g_wave.clear();
    g_starved.clear();
    g_parked.clear();
    g_heap = {};
    return done;
}

const CoreClock &ReplayClock(int index) { return g_cores[index].clock; }

double ReplayBandwidthDelayCycles(bool hbm) { return (hbm ? g_hbm : g_l2).DelayCycles(); }

uint64_t ReplayNextSetId(int core) { return g_nextId.fetch_add(1) << 18 | static_cast<uint64_t>(core); }

void ReplayPushToken(int counter, const uint64_t *ids, int count)
{
    std::lock_guard<std::mutex> lock(g_tokenMu);
    g_tokens[counter].emplace_back(ids, ids + count);
}

bool ReplayAgain()
{
    if (!g_keep) return false;
    std::vector<std::unique_ptr<TimingLog>> logs;
    std::vector<TimingLog *> wave;
    for (size_t i = 0; i < g_kept.size(); ++i) {
        if (g_keptRecords[i] == 0) continue;
        logs.emplace_back(new TimingLog);
        TimingLog &l = *logs.back();
        l.index = static_cast<int>(i);
        l.chunks.assign(g_kept[i].begin(), g_kept[i].end());
        l.written = g_keptRecords[i];
        l.published = l.written;
        wave.push_back(&l);
    }
    g_keep = false;
    g_borrow = true;  // this pass reads the kept chunks without taking them
    Reset(static_cast<int>(g_kept.size()), nullptr);
    ReplayBeginWave(wave);
    const bool done = ReplayFinishWave();
    for (auto &l : logs) l->chunks.clear();
    g_borrow = false;
    g_keep = true;
    return done;
}

void ReplayEndLaunch()
{
    std::lock_guard<std::mutex> lock(g_mu);
    FreeKept();
    g_keep = false;
}

void ReplayDropLog(TimingLog &log)
{
    std::lock_guard<std::mutex> lock(log.mu);
    for (TimingRecord *c : log.chunks) delete[] c;
    log.chunks.clear();
    log.tail = nullptr;
}

}  // namespace emu
