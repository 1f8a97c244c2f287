// The blocking cross-core primitives of a launch: CrossCoreSetFlag / CrossCoreWaitFlag (modes
// 0, 1, 2), SyncAll and IBSet / IBWait, with deadlock detection (every live core blocked, or no
// progress within ASCEND_EMU_DEADLOCK_TIMEOUT_S) and their parts of the timeline model and the
// hazard checker.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "emu/core.h"
#include "emu/launch.h"
#include "emu/race.h"
#include "emu/soc.h"
#include "emu/timing.h"
#include "launch_shared.h"

namespace emu {

#define t_ctx t_currentCore

namespace {

// A kernel's pipe_t value by its name (kernel_sync.h).
const char *PipeTName(int pipeT)
{
    switch (pipeT) {
        case 0:
            return "PIPE_S";
        case 1:
            return "PIPE_V";
        case 2:
            return "PIPE_M";
        case 3:
            return "PIPE_MTE1";
        case 4:
            return "PIPE_MTE2";
        case 5:
            return "PIPE_MTE3";
        case 6:
            return "PIPE_ALL";
        case 10:
            return "PIPE_FIX";
        default:
            return "PIPE_?";
    }
}

// A wave slot's core by name (aic<block> / aiv<block>.<sub>).
std::string SlotName(const LaunchShared &s, int slot)
{
    const int block = s.firstBlock + slot / 3;
    return slot % 3 == 0 ? "aic" + std::to_string(block)
                         : "aiv" + std::to_string(block) + "." + std::to_string(slot % 3 - 1);
}

void ReportStuck(LaunchShared &s, const char *why)
{
    std::string report = std::string("[ascendc-emu] deadlock in kernel ") + (t_ctx ? t_ctx->kernel : "?") + ": " + why;
    for (auto &w : s.waiters)
        if (w.ctx != nullptr && w.blocked) {
            const CoreCtx &c = *w.ctx;
            char line[320];
            std::snprintf(line, sizeof line, "\n[ascendc-emu]   %s%d%s waits in %s", c.kind == kAic ? "aic" : "aiv",
                          c.block, c.kind == kAic ? "" : (c.sub ? ".1" : ".0"), w.what.c_str());
            report += line;
            if (w.word != nullptr) {
                // the note explains the other of the two values the calls write, not any other
                const int32_t held = __atomic_load_n(w.word, __ATOMIC_ACQUIRE);
                std::snprintf(line, sizeof line, " (it holds %d%s)", held,
                              held == 0 || held == 1 ? w.wordNote.c_str() : ": neither 0 nor 1, written by no call");
                report += line;
            }
        }
    if (Raising() && t_ctx != nullptr) RaiseOnCore(report);
    std::fprintf(stderr, "%s\n", report.c_str());
    std::fflush(stderr);
    std::abort();
}

// Blocks the current core until ready() holds. Caller holds the lock `lk` on s.mu.
void WaitLocked(std::unique_lock<std::mutex> &lk, const std::string &what, std::function<bool()> ready,
                const int32_t *word = nullptr, const std::string &wordNote = std::string())
{
    LaunchShared &s = *t_ctx->shared;
    if (ready()) return;
    auto &me = s.waiters[Slot(*t_ctx)];
    me.blocked = true;
    me.ready = std::move(ready);
    me.what = what;
    me.word = word;
    me.wordNote = wordNote;
    ++s.blocked;
    CheckAllBlockedLocked(s);
    // Waits in slices so that a stopped launch (a fault elsewhere, a cancel) ends promptly.
    const auto limit = std::chrono::duration<double>(DeadlockTimeoutSeconds());
    const auto start = std::chrono::steady_clock::now();
    while (me.blocked) {
        if (s.stop->stop.load()) throw CoreStopped{};
        s.cv.wait_for(lk, std::chrono::milliseconds(50));
        // A condition on GM (IBSet / IBWait) may also be met by a plain write of another core.
        if (me.blocked && me.ready()) {
            me.blocked = false;
            --s.blocked;
        }
        if (me.blocked && !s.stop->stop.load() && std::chrono::steady_clock::now() - start > limit)
            ReportStuck(s, "no progress within ASCEND_EMU_DEADLOCK_TIMEOUT_S");
    }
}

int &Counter(LaunchShared &s, int slot, int flag) { return s.counter[slot * kCrossFlags + flag]; }

// The timeline model's name of flag `flag` of wave slot `slot` (global over the launch's waves).
int TimingCounter(const LaunchShared &s, int slot, int flag) { return (s.firstBlock * 3 + slot) * kCrossFlags + flag; }

// One more set of `flag` for core `slot`; the timeline model learns which set ids release it.
void Bump(LaunchShared &s, int slot, int flag, const char *api, const std::vector<uint64_t> &ids,
          const RaceClock &clock, const std::string &from)
{
    int &c = Counter(s, slot, flag);
    if (++c > 15)
        Fail(api, "flag %d of the target core has more than 15 unconsumed sets (the hardware counter is 4 bits)", flag);
    TimeCrossBump(TimingCounter(s, slot, flag), ids.data(), static_cast<int>(ids.size()));
    if (g_raceCheck) {
        s.raceCounter[slot * kCrossFlags + flag].push_back(clock);
        s.raceCounterFrom[slot * kCrossFlags + flag].push_back(from);
    }
}

// Records a group set by core `slot` and reports whether the group's set is now complete: each
// member core must have its own unmatched set (two sets by one AIV are not one set by each);
// completing consumes one set of every member. `members(fn)` calls fn(slot) for each member.
// The completed set is released by the member sets consumed (*ids, for the timeline model) and
// publishes the join of their clocks (*clock, for the hazard checker).
template <typename Members>
bool GroupSetLocked(LaunchShared &s, int mode, int slot, int flag, uint64_t setId, std::vector<uint64_t> *ids,
                    RaceClock *clock, const char *pipeName, Members members)
{
    std::vector<int> &pending = s.pending[mode];
    std::vector<std::deque<uint64_t>> &pendingIds = s.pendingIds[mode];
    ++pending[slot * kCrossFlags + flag];
    pendingIds[slot * kCrossFlags + flag].push_back(setId);
    if (g_raceCheck) {
        s.racePending[mode][slot * kCrossFlags + flag].push_back(*clock);
        s.racePendingFrom[mode][slot * kCrossFlags + flag].push_back(pipeName);
    }
    bool complete = true;
    members([&](int m) { complete = complete && pending[m * kCrossFlags + flag] > 0; });
    if (complete) {
        ids->clear();
        members([&](int m) {
            --pending[m * kCrossFlags + flag];
            auto &q = pendingIds[m * kCrossFlags + flag];
            ids->push_back(q.front());
            q.pop_front();
        });
        if (g_raceCheck) {
            clock->reset();
            members([&](int m) {
                auto &q = s.racePending[mode][m * kCrossFlags + flag];
                *clock = RaceGmJoin(*clock, q.front());
                q.pop_front();
                s.racePendingFrom[mode][m * kCrossFlags + flag].pop_front();
            });
        }
    }
    return complete;
}

}  // namespace

namespace launch_internal {

// Marks every blocked waiter whose condition now holds as runnable. Caller holds s.mu.
void WakeLocked(LaunchShared &s)
{
    for (auto &w : s.waiters)
        if (w.blocked && w.ready()) {
            w.blocked = false;
            --s.blocked;
        }
    s.cv.notify_all();
}

void CheckAllBlockedLocked(LaunchShared &s)
{
    if (s.alive == 0 || s.blocked != s.alive) return;
    // A condition on GM (IBSet / IBWait) may have been met by a plain write of another core
    // since its waiter last looked: such a waiter is not stuck.
    WakeLocked(s);
    if (s.blocked == s.alive) {
        std::string why = "every live core is blocked and none can release the others";
        if (s.stop->blocks > uint64_t(s.firstBlock) + uint64_t(s.blocks))
            why += " (blocks from " + std::to_string(s.firstBlock + s.blocks) +
                   " on run in a later wave here: a wait on one of them cannot end; on the device a core that "
                   "frees up may start it)";
        ReportStuck(s, why.c_str());
    }
}

// Under the hazard checker, a cross-core set no wait consumed (or a group set some members never
// made) when every core of the wave has ended fails the launch: on the hardware the flag counter
// stays set into the next kernel.
void CheckCrossFlagsWaited(LaunchShared &s, LaunchStop &stop, const char *kernel)
{
    static const char *kModes[] = {"mode 0 (every core of a kind)", "mode 1 (the AIVs of an AI core)",
                                   "mode 2 (AIC <-> its AIVs)"};
    std::string problem;
    for (size_t i = 0; i < s.counter.size() && problem.empty(); ++i)
        if (s.counter[i] > 0) {
            problem = SlotName(s, static_cast<int>(i / kCrossFlags)) + " never consumed " +
                      std::to_string(s.counter[i]) + " CrossCoreSetFlag(flagId " + std::to_string(i % kCrossFlags) +
                      ") with CrossCoreWaitFlag; the first was set by " + s.raceCounterFrom[i].front();
        }
    for (int m = 0; m < 3 && problem.empty(); ++m)
        for (size_t i = 0; i < s.pending[m].size() && problem.empty(); ++i)
            if (s.pending[m][i] > 0)
                problem = SlotName(s, static_cast<int>(i / kCrossFlags)) + " made a group CrossCoreSetFlag<" +
                          std::to_string(m) + ", " + s.racePendingFrom[m][i].front() + ">(flagId " +
                          std::to_string(i % kCrossFlags) + ") in " + kModes[m] +
                          " that the other members never completed, so no core could wait for it";
    if (problem.empty()) return;
    const std::string line = std::string("[ascendc-emu] end of kernel ") + kernel + ": " + problem +
                             " (on the hardware the flag counter stays set into the next kernel)";
    if (Raising()) {
        StopLaunch(stop, line);
        return;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace launch_internal

double DeadlockTimeoutSeconds()
{
    const char *e = std::getenv("ASCEND_EMU_DEADLOCK_TIMEOUT_S");
    const double v = e ? std::atof(e) : 0.0;
    return v > 0 ? v : 60.0;
}

void CrossCoreSet(int mode, int flagId) { CrossCoreSet(mode, flagId, 6 /* PIPE_ALL */); }

void CrossCoreSet(int mode, int flagId, int pipeT)
{
    const char *api = "CrossCoreSetFlag";
    CoreCtx &c = Ctx();
    LaunchShared &s = *c.shared;
    if (flagId < 0 || flagId >= kCrossFlags) Fail(api, "flagId %d is outside [0, 15]", flagId);
    if (!(s.hasAic && s.aivPerBlock > 0) && mode != 0)
        Fail(api, "mode %d needs a MIX kernel (KERNEL_TYPE_MIX_AIC_1_2/1_1); this launch has only %s cores", mode,
             s.hasAic ? "AIC" : "AIV");
    const uint64_t setId = TimeCrossSet(pipeT);
    RaceClock clock = g_raceCheck ? RaceGmPublish(pipeT) : nullptr;
    std::unique_lock<std::mutex> lk(s.mu);
    const int b = c.block - s.firstBlock;
    const int me = Slot(c);
    const auto sameKind = [&](auto fn) {  // mode 0: every core of my kind in the launch
        for (int bb = 0; bb < s.blocks; ++bb) {
            if (c.kind == kAic)
                fn(bb * 3);
            else
                for (int v = 0; v < s.aivPerBlock; ++v) fn(bb * 3 + 1 + v);
        }
    };
    const auto blockAivs = [&](auto fn) {  // modes 1 and 2: the AIVs of my AI core
        for (int v = 0; v < s.aivPerBlock; ++v) fn(b * 3 + 1 + v);
    };
    std::vector<uint64_t> ids{setId};
    const char *pipeName = PipeTName(pipeT);
    std::string from;
    if (g_raceCheck)
        from = std::string(CoreName()) + " (CrossCoreSetFlag<" + std::to_string(mode) + ", " + pipeName + ">)";
    const auto bump = [&](int slot) { Bump(s, slot, flagId, api, ids, clock, from); };
    if (mode == 0) {
        if (GroupSetLocked(s, 0, me, flagId, setId, &ids, &clock, pipeName, sameKind)) sameKind(bump);
    } else if (mode == 1) {
        if (c.kind != kAiv) Fail(api, "mode 1 synchronises the AIVs of one AI core; called on an AIC");
        if (GroupSetLocked(s, 1, me, flagId, setId, &ids, &clock, pipeName, blockAivs)) blockAivs(bump);
    } else if (mode == 2) {
        if (c.kind == kAic)
            blockAivs(bump);
        else if (GroupSetLocked(s, 2, me, flagId, setId, &ids, &clock, pipeName, blockAivs))
            bump(b * 3);
    } else {
        Fail(api, "modeId %d is not supported on Atlas A2 (modes 0, 1, 2)", mode);
    }
    WakeLocked(s);
}

void CrossCoreWait(int flagId) { CrossCoreWait(flagId, 0 /* PIPE_S */); }

void CrossCoreWait(int flagId, int pipeT)
{
    CoreCtx &c = Ctx();
    LaunchShared &s = *c.shared;
    if (flagId < 0 || flagId >= kCrossFlags) Fail("CrossCoreWaitFlag", "flagId %d is outside [0, 15]", flagId);
    std::unique_lock<std::mutex> lk(s.mu);
    int *cnt = &Counter(s, Slot(c), flagId);
    char what[64];
    std::snprintf(what, sizeof what, "CrossCoreWaitFlag(flagId %d)", flagId);
    WaitLocked(lk, what, [cnt] { return *cnt > 0; });
    --*cnt;
    const int counter = TimingCounter(s, Slot(c), flagId);
    RaceClock clock;
    if (g_raceCheck) {
        auto &q = s.raceCounter[Slot(c) * kCrossFlags + flagId];
        clock = std::move(q.front());
        q.pop_front();
        s.raceCounterFrom[Slot(c) * kCrossFlags + flagId].pop_front();
    }
    lk.unlock();
    TimeCrossWait(pipeT, counter);
    if (g_raceCheck) RaceGmAcquire(clock, pipeT);
}

void SyncAllCores(bool aivOnly)
{
    CoreCtx &c = Ctx();
    LaunchShared &s = *c.shared;
    const int group = aivOnly ? c.kind : 0;
    const int members = aivOnly ? (c.kind == kAic ? s.blocks : s.blocks * s.aivPerBlock)
                                : s.blocks * (s.aivPerBlock + (s.hasAic ? 1 : 0));
    if (c.blockDim > s.blocks)
        Fail("SyncAll", "blockDim %d exceeds the %d cores that can run at once on %s", c.blockDim, s.blocks,
             CurrentSoc().name);
    std::unique_lock<std::mutex> lk(s.mu);
    const int gen = s.barGen[group];
    // The timeline model's name of this barrier: wave, group and generation.
    const uint64_t id = (static_cast<uint64_t>(s.firstBlock * 3 + group) << 32) | static_cast<uint32_t>(gen);
    TimeSyncArrive(id, members);
    if (g_raceCheck) RaceGmArrive(&s.raceBar[group]);
    if (++s.barArrived[group] == members) {
        s.barArrived[group] = 0;
        ++s.barGen[group];
        s.raceBarDone[group] = std::move(s.raceBar[group]);
        s.raceBar[group] = nullptr;
        const RaceClock done = s.raceBarDone[group];
        WakeLocked(s);
        lk.unlock();
        TimeSyncRelease(id);
        if (g_raceCheck) RaceGmRelease(done);
        return;
    }
    int *g = &s.barGen[group];
    WaitLocked(lk, aivOnly ? "SyncAll<true>" : "SyncAll<false>", [g, gen] { return *g != gen; });
    const RaceClock done = s.raceBarDone[group];  // the next barrier of the group needs this core too
    lk.unlock();
    TimeSyncRelease(id);
    if (g_raceCheck) RaceGmRelease(done);
}

void InterBlockSync(bool set, bool aivOnly, const int32_t *gm, uint64_t gmElems, int32_t *ub, uint64_t ubElems,
                    int ubBuf, int32_t blockIdx, int32_t eventID)
{
    const char *api = set ? "IBSet" : "IBWait";
    CoreCtx &c = Ctx();
    if (c.kind == kAic) return;  // Atlas A2: only the vector cores take part
    // What the real implementation indexes (int32 arithmetic there; no kernel comes near 2^31).
    const int64_t blockNum = static_cast<int64_t>(c.blockDim) * (aivOnly ? 1 : 2);
    const int64_t offset = blockNum * 8 * eventID + static_cast<int64_t>(blockIdx) * 8;
    if (blockIdx < 0 || eventID < 0) Fail(api, "blockIdx %d and eventID %d must not be negative", blockIdx, eventID);
    if (gmElems != 0 && static_cast<uint64_t>(offset) + 8 > gmElems)
        Fail(api,
             "the slot of blockIdx %d, eventID %d is gmWorkspace[%lld, +8) (blockNum %lld%s), outside gmWorkspace's "
             "%llu int32 elements",
             blockIdx, eventID, (long long)offset, (long long)blockNum, aivOnly ? "" : ", GetBlockNum() x 2",
             (unsigned long long)gmElems);
    int32_t *slot = const_cast<int32_t *>(gm) + offset;
    char operand[96];
    std::snprintf(operand, sizeof operand, "gmWorkspace slot of blockIdx %d, eventID %d", blockIdx, eventID);
    CheckGm(api, operand, slot, 32);
    if (static_cast<Buf>(ubBuf) != Buf::UB) Fail(api, "ubWorkspace must be a UB tensor (VECIN/VECOUT/VECCALC)");
    if (ubElems < 8)
        Fail(api, "ubWorkspace holds %llu int32; the poll copies a 32-byte block (8 int32)",
             (unsigned long long)ubElems);
    CheckLocal(api, "ubWorkspace", Buf::UB, ub, 32);
    if (LocalOffset(Buf::UB, ub) % 32 != 0)
        Fail(api, "ubWorkspace address UB+%llu is not 32-byte aligned: the poll is a DataCopy of a 32-byte block",
             (unsigned long long)LocalOffset(Buf::UB, ub));
    if (c.tpipe == nullptr) Fail(api, "needs a TPipe: it takes its MTE2_S / S_MTE3 event ids from GetTPipePtr()");

    // The Atlas A2 sequence: PipeBarrier<PIPE_ALL>; poll (DataCopy GM->UB, MTE2 -> S, scalar read)
    // until slot[0] is 0 (IBSet) / 1 (IBWait); scalar write of 1 / 0, S -> MTE3, DataCopy UB->GM;
    // PipeBarrier<PIPE_ALL>.
    static const char kMte2ToS = 0, kSToMte3 = 0;  // the hand-over keys of the two flags (timeline model)
    const int32_t want = set ? 0 : 1;
    RaceBarrierAll();
    LaunchShared &s = *c.shared;
    std::unique_lock<std::mutex> lk(s.mu);
    char what[160];
    std::snprintf(what, sizeof what, "%s(blockIdx %d, eventID %d) for its gmWorkspace slot %p to hold %d", api,
                  blockIdx, eventID, static_cast<void *>(slot), want);
    WaitLocked(
        lk, what, [slot, want] { return __atomic_load_n(slot, __ATOMIC_ACQUIRE) == want; }, slot,
        set ? ": the slot's last IBSet was not IBWait-ed" : ": no IBSet of the slot");
    // The write that made the slot ready: the last call's write if it wrote the value waited for
    // (else the host or a plain kernel write did, after it: no ordering and no hand-over to time).
    LaunchStop::SlotWrite before;
    auto it = s.stop->slotWrites.find(slot);
    const bool handOver = it != s.stop->slotWrites.end() && it->second.value == want;
    if (handOver) before = it->second;
    const bool timed = handOver && g_timing;
    if (timed) TimeSlotHold(before.timeId, api, eventID);
    TimeGmRead(Pipe::MTE2, slot, 1, 32, 32, set ? "IBSet poll" : "IBWait poll");
    Count(Pipe::MTE2, 32);
    std::memcpy(ub, slot, 32);
    TimeSignal(Pipe::MTE2, &kMte2ToS, "SetFlag");
    TimeAcquire(Pipe::S, &kMte2ToS, "WaitFlag");
    Count(Pipe::S, 4);  // GetValue(0)
    Count(Pipe::S, 4);  // SetValue(0, 1 - want)
    ub[0] = 1 - want;
    TimeSignal(Pipe::S, &kSToMte3, "SetFlag");
    TimeAcquire(Pipe::MTE3, &kSToMte3, "WaitFlag");
    TimeGmWrite(Pipe::MTE3, slot, 1, 32, 32, false, set ? "IBSet write" : "IBWait write");
    Count(Pipe::MTE3, 32);
    if (g_raceCheck) RaceGmAcquire(before.clock, 0 /* PIPE_S: every later instruction */);
    LaunchStop::SlotWrite mine;
    mine.timeId = TimeSlotId();
    mine.value = 1 - want;
    if (g_raceCheck) mine.clock = RaceGmPublish(6 /* PIPE_ALL */);
    s.stop->slotWrites[slot] = mine;
    __atomic_store_n(slot, 1 - want, __ATOMIC_RELEASE);
    WakeLocked(s);
    lk.unlock();
    TimeSlotWrite(mine.timeId);
    RaceBarrierAll();
}

}  // namespace emu
