// The launcher: runs blockDim AI cores as threads (1 cube + 2 vector sub-cores each in a MIX
// 1:2 launch), gives every thread its core context and local memories, implements the blocking
// cross-core primitives with deadlock detection, and collects the per-pipe counters.
#include "emu/launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include "emu/abi_stamp.h"
#include "emu/core.h"
#include "emu/device_memory.h"
#include "emu/race.h"
#include "foreign_headers.h"
#include "launch_counters.h"
#include "emu/soc.h"
#include "emu/timing.h"
#include "scalar_divide.h"
#include "timing/launch_timing.h"

namespace emu {

thread_local CoreCtx *t_currentCore = nullptr;
#define t_ctx t_currentCore

// How one launch ends early: the first fault's message, or a cancel from the host.
struct LaunchStop {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> threadsDone{0};
    uint64_t threadsPerBlock = 1, blocks = 0;
    std::mutex mu;
    std::string message;
    // IBSet / IBWait: per GM slot, the last write a call made (the id of its timeline record, the
    // clock it published to the hazard checker). Launch-wide, as the slots are; guarded by the
    // running wave's LaunchShared::mu (waves run one at a time).
    struct SlotWrite {
        uint64_t timeId = 0;
        RaceClock clock;
        int32_t value = -1;  // what the call wrote (IBSet 1, IBWait 0)
    };
    std::unordered_map<const void *, SlotWrite> slotWrites;
};

// One wave of cores running together, and everything they block on.
struct LaunchShared {
    std::mutex mu;
    std::condition_variable cv;
    int blocks = 0;       // AI cores in this wave
    int firstBlock = 0;   // block index of the wave's first core
    int aivPerBlock = 0;  // 0, 1 or 2
    bool hasAic = false;
    int alive = 0, blocked = 0;
    struct Waiter {
        bool blocked = false;
        std::function<bool()> ready;
        std::string what;
        // IBSet / IBWait: the slot word the wait is on and what its value means, so that a
        // deadlock report names the value the slot holds when it is reported.
        const int32_t *word = nullptr;
        std::string wordNote;
        CoreCtx *ctx = nullptr;
    };
    std::vector<Waiter> waiters;  // by thread slot: block * 3 + (0 aic | 1 aiv0 | 2 aiv1)
    std::vector<int> counter;     // cross-core flag counters, [slot][flag]
    std::vector<int> pending[3];  // per mode 0/1/2: a core's group sets not yet matched, [slot][flag]
    int barArrived[3] = {}, barGen[3] = {};
    // Timeline model: the ids of a core's unmatched group sets (emu/timing.h).
    std::vector<std::deque<uint64_t>> pendingIds[3];
    // Hazard checker (emu/race.h, GM part): the clocks the pending sets of each flag counter
    // published, [slot][flag], consumed by the waits in order; per mode, the clocks of a core's
    // unmatched group sets; per SyncAll group, the barrier being joined and the last complete one.
    std::vector<std::deque<RaceClock>> raceCounter;
    std::vector<std::deque<RaceClock>> racePending[3];
    // Who made each pending set (for the message about a set never waited), parallel to the above.
    std::vector<std::deque<std::string>> raceCounterFrom;
    std::vector<std::deque<std::string>> racePendingFrom[3];
    RaceClock raceBar[3], raceBarDone[3];
    LaunchStop *stop = nullptr;
};

namespace {

thread_local char t_name[32];
std::atomic<int> g_divideFaults{0};  // integer divisions by zero in the current launch (scalar_divide.h)

// Thrown through a core's kernel code to end its part of a stopped launch; caught by the launcher.
struct CoreStopped {};

std::atomic<int> g_faultMode{static_cast<int>(FaultMode::kAbort)};
std::mutex g_runningMu;
std::set<LaunchStop *> g_running;
LaunchStop *g_progress = nullptr;  // the running or last launch, for ascendc_emu_launch_progress
uint64_t g_lastDone = 0, g_lastTotal = 0;
std::string g_lastFault;

bool Raising() { return g_faultMode.load() == static_cast<int>(FaultMode::kRaise); }

// Records `message` as the launch's fault (the first one wins) and stops every core of it.
void StopLaunch(LaunchStop &st, const std::string &message)
{
    {
        std::lock_guard<std::mutex> lock(st.mu);
        if (st.message.empty()) st.message = message;
    }
    st.stop.store(true);
}

// A misuse on a core thread in kRaise mode: stop the launch and unwind this core's kernel code.
// Not while this thread already unwinds (a throw would end the process): then abort as kAbort.
[[noreturn]] void RaiseOnCore(const std::string &message)
{
    StopLaunch(*t_ctx->shared->stop, message);
    t_ctx->shared->cv.notify_all();
    if (std::uncaught_exceptions() == 0) throw CoreStopped{};
    std::fprintf(stderr, "%s\n", message.c_str());
    std::abort();
}

int Slot(const CoreCtx &c) { return (c.block - c.shared->firstBlock) * 3 + (c.kind == kAic ? 0 : 1 + c.sub); }

const char *PipeName(int p)
{
    static const char *names[] = {"MTE2", "MTE1", "M", "V", "MTE3", "FIXP", "S"};
    return names[p];
}

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

// A core that ends with a SetFlag no WaitFlag consumed leaves the flag set into the next kernel
// on the hardware: a warning, and a failed launch under the hazard checker.
void CheckFlagsWaited(const CoreCtx &c)
{
    for (int e = 0; e < kHardEventCount; ++e)
        for (int id = 0; id < kEventIds; ++id) {
            if (c.flags[e][id] <= 0) continue;
            Pipe from, to;
            EventPipes(e, &from, &to);
            // HardEvent names the fixpipe FIX (M_FIX), the counters FIXP.
            const auto name = [](Pipe p) { return p == Pipe::FIXP ? "FIX" : PipeName(static_cast<int>(p)); };
            const char *f = name(from), *t = name(to);
            if (g_raceCheck)
                Fail("end of kernel",
                     "SetFlag<HardEvent::%s_%s>(%d) was never waited: pipe %s never ran WaitFlag<HardEvent::%s_%s>(%d) "
                     "for pipe %s (on the hardware the flag stays set into the next kernel)",
                     f, t, id, t, f, t, id, f);
            std::fprintf(stderr,
                         "[ascendc-emu] warning: %s of kernel %s ended with SetFlag<HardEvent::%s_%s>(%d) never waited "
                         "(event %d)\n",
                         CoreName(), c.kernel, f, t, id, e);
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

void RunWave(const LaunchConfig &cfg, const std::function<void()> &body, int first, int count,
             std::vector<CoreCtx> &allCtx, const std::vector<double> &origin, LaunchStop &stop)
{
    const SocSpec &soc = CurrentSoc();
    LaunchShared s;
    s.stop = &stop;
    s.blocks = count;
    s.firstBlock = first;
    s.hasAic = cfg.mix != CoreMix::AIV_ONLY;
    s.aivPerBlock = cfg.mix == CoreMix::AIC_ONLY ? 0 : (cfg.mix == CoreMix::MIX_AIC_1_2 ? 2 : 1);
    s.waiters.resize(count * 3);
    s.counter.assign(count * 3 * kCrossFlags, 0);
    for (auto &p : s.pending) p.assign(count * 3 * kCrossFlags, 0);
    for (auto &p : s.pendingIds) p.assign(count * 3 * kCrossFlags, {});
    if (g_raceCheck) {
        s.raceCounter.assign(count * 3 * kCrossFlags, {});
        for (auto &p : s.racePending) p.assign(count * 3 * kCrossFlags, {});
        s.raceCounterFrom.assign(count * 3 * kCrossFlags, {});
        for (auto &p : s.racePendingFrom) p.assign(count * 3 * kCrossFlags, {});
    }

    std::vector<CoreCtx *> ctxs;
    for (int b = first; b < first + count; ++b) {
        if (s.hasAic) ctxs.push_back(&allCtx[b * 3]);
        for (int v = 0; v < s.aivPerBlock; ++v) ctxs.push_back(&allCtx[b * 3 + 1 + v]);
    }
    const bool mix = cfg.mix == CoreMix::MIX_AIC_1_2 || cfg.mix == CoreMix::MIX_AIC_1_1;
    for (CoreCtx *c : ctxs) {
        c->kernel = cfg.name;
        c->blockDim = static_cast<int>(cfg.blockDim);
        c->tilingKey = cfg.tilingKey;
        c->userWorkspaceOffset = cfg.userWorkspaceOffset;
        c->shared = &s;
        c->stop = &stop.stop;
        c->taskRation = (c->kind == kAiv && cfg.mix == CoreMix::MIX_AIC_1_2) ? 2 : 1;
        c->subBlockNum = c->taskRation;
        (void)mix;
        s.waiters[Slot(*c)].ctx = c;
    }
    s.alive = static_cast<int>(ctxs.size());

    auto run = [&](CoreCtx *c) {
        t_ctx = c;
        std::vector<uint8_t *> owned;
        auto alloc = [&](Buf b, uint64_t bytes) {
            auto *p = static_cast<uint8_t *>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
            std::memset(p, 0xff, bytes);  // uninitialised local memory reads as NaN / -1
            c->mem[static_cast<int>(b)] = p;
            c->memSize[static_cast<int>(b)] = bytes;
            owned.push_back(p);
        };
        if (c->kind == kAiv) {
            alloc(Buf::UB, soc.ubBytes);
        } else {
            alloc(Buf::L1, soc.l1Bytes);
            alloc(Buf::L0A, soc.l0aBytes);
            alloc(Buf::L0B, soc.l0bBytes);
            c->sparseIndex = static_cast<uint8_t *>(std::calloc(soc.l0bBytes / 4, 1));
            owned.push_back(c->sparseIndex);
            alloc(Buf::L0C, soc.l0cBytes);
            alloc(Buf::BT, soc.btBytes);
            alloc(Buf::FB, soc.fbBytes);
        }
        bool stopped = false;
        try {
            TimingBeginCore(origin[c->block - first]);
            body();
        } catch (const CoreStopped &) {
            stopped = true;
        } catch (const std::exception &e) {
            if (!Raising()) throw;
            StopLaunch(stop,
                       std::string("[ascendc-emu] kernel ") + c->kernel + " on " + CoreName() + " threw " + e.what());
            stopped = true;
        }
        g_divideFaults += TakeScalarDivideFaults();
        TimingEndCore();
        if (!stopped) {
            try {
                RaceGmFlushRefs();
                CheckFlagsWaited(*c);
            } catch (const CoreStopped &) {
            }
        }
        RaceFree(*c);
        for (uint8_t *p : owned) std::free(p);
        for (auto &m : c->mem) m = nullptr;
        try {
            std::unique_lock<std::mutex> lk(s.mu);
            --s.alive;
            s.waiters[Slot(*c)].ctx = nullptr;
            WakeLocked(s);
            if (!stop.stop.load()) CheckAllBlockedLocked(s);
        } catch (const CoreStopped &) {
        }
        ++stop.threadsDone;
        t_ctx = nullptr;
    };
    std::vector<std::thread> threads;
    threads.reserve(ctxs.size());
    for (CoreCtx *c : ctxs) threads.emplace_back(run, c);
    for (auto &t : threads) t.join();
    if (g_raceCheck && !stop.stop.load()) CheckCrossFlagsWaited(s, stop, cfg.name);
    for (CoreCtx *c : ctxs) {
        c->shared = nullptr;
        c->stop = nullptr;
    }
}

}  // namespace

void SetFaultMode(FaultMode mode) { g_faultMode.store(static_cast<int>(mode)); }

void CancelLaunches()
{
    std::lock_guard<std::mutex> lock(g_runningMu);
    for (LaunchStop *st : g_running) StopLaunch(*st, "[ascendc-emu] launch cancelled by the host");
}

void StopPoint()
{
    if (std::uncaught_exceptions() == 0) throw CoreStopped{};
}

void NoCoreContext()
{
    std::fprintf(stderr,
                 "[ascendc-emu] a kernel API was called outside a kernel launch (use ICPU_RUN_KF or emu::Launch)\n");
    std::abort();
}

const char *CoreName()
{
    if (t_ctx == nullptr) return "host";
    if (t_ctx->kind == kAic)
        std::snprintf(t_name, sizeof t_name, "aic%d", t_ctx->block);
    else
        std::snprintf(t_name, sizeof t_name, "aiv%d.%d", t_ctx->block, t_ctx->sub);
    return t_name;
}

void Fail(const char *api, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char line[1400];
    std::snprintf(line, sizeof line, "[ascendc-emu] %s on %s of kernel %s: %s", api, CoreName(),
                  t_ctx ? t_ctx->kernel : "-", msg);
    if (Raising() && t_ctx != nullptr && t_ctx->shared != nullptr) RaiseOnCore(line);
    std::fprintf(stderr, "%s\n", line);
    std::fflush(stderr);
    std::abort();
}

void CheckGm(const char *api, const char *operand, const void *p, uint64_t bytes)
{
    if (bytes == 0) return;
    if (!DeviceFind(p, bytes, nullptr)) {
        DeviceAllocation a;
        if (DeviceFind(p, 1, &a))
            Fail(api,
                 "%s GM range [%p, +%llu bytes) runs %llu bytes past the end of its allocation (base %p, %zu usable "
                 "bytes)",
                 operand, p, (unsigned long long)bytes,
                 (unsigned long long)(reinterpret_cast<uintptr_t>(p) + bytes - a.base - a.usable),
                 reinterpret_cast<void *>(a.base), a.usable);
        Fail(api, "%s GM address %p (+%llu bytes) is not inside any device allocation", operand, p,
             (unsigned long long)bytes);
    }
}

uint64_t LocalOffset(Buf b, const void *p)
{
    return static_cast<uint64_t>(static_cast<const uint8_t *>(p) - Ctx().mem[static_cast<int>(b)]);
}

void CheckLocal(const char *api, const char *operand, Buf b, const void *p, uint64_t bytes)
{
    CoreCtx &c = Ctx();
    const uint8_t *base = c.mem[static_cast<int>(b)];
    const uint64_t size = c.memSize[static_cast<int>(b)];
    if (base == nullptr) Fail(api, "%s is in %s, which this core type does not have", operand, BufName(b));
    const uint8_t *q = static_cast<const uint8_t *>(p);
    if (q < base || q > base + size || bytes > static_cast<uint64_t>(base + size - q))
        Fail(api, "%s range [%s+%lld, +%llu bytes) is outside %s (%llu bytes)", operand, BufName(b),
             (long long)(q - base), (unsigned long long)bytes, BufName(b), (unsigned long long)size);
}

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

namespace {
// A launch refused before any core starts: a LaunchFault in kRaise mode, else message and abort.
[[noreturn]] void RefuseLaunch(const char *line)
{
    if (Raising()) {
        std::lock_guard<std::mutex> lock(g_runningMu);
        g_lastFault = line;
        throw LaunchFault(line);
    }
    std::fprintf(stderr, "%s\n", line);
    std::abort();
}
}  // namespace

std::string ForeignHeadersMessage(const std::string &launch, const char *subject, uint64_t stamp)
{
    char line[512];
    if (stamp == 0)
        std::snprintf(line, sizeof line,
                      "[ascendc-emu] launch of %s: %s was built against emulator headers older than this runtime "
                      "(they carry no ABI stamp); rebuild it against the include/ of the prefix whose lib64 it "
                      "runs with",
                      launch.c_str(), subject);
    else
        std::snprintf(line, sizeof line,
                      "[ascendc-emu] launch of %s: %s was built against other emulator headers (ABI stamp %016llx, "
                      "this runtime %016llx); rebuild it against the include/ of the prefix whose lib64 it runs with",
                      launch.c_str(), subject, static_cast<unsigned long long>(stamp),
                      static_cast<unsigned long long>(ASCEND_EMU_ABI_STAMP));
    return line;
}

void Launch(const LaunchConfig &cfg, const std::function<void()> &body, uint64_t abiStamp)
{
    if (abiStamp != ASCEND_EMU_ABI_STAMP)
        RefuseLaunch(ForeignHeadersMessage(cfg.name, "the calling code", abiStamp).c_str());
    char line[256];
    const SocSpec &soc = CurrentSoc();
    if (cfg.blockDim == 0 || cfg.blockDim > 65535) {
        std::snprintf(line, sizeof line, "[ascendc-emu] launch of %s: blockDim %u is outside [1, 65535]", cfg.name,
                      cfg.blockDim);
        RefuseLaunch(line);
    }
    const char *race = std::getenv("ASCEND_EMU_RACECHECK");
    g_raceCheck = race != nullptr && race[0] == '1';
    if (g_raceCheck) RaceGmBeginLaunch(cfg.blockDim);
    TimingBeginLaunch();
    InstallScalarDivideHandler();
    g_divideFaults = 0;
    const int perWave = static_cast<int>(cfg.mix == CoreMix::AIV_ONLY ? soc.aivCores : soc.aicCores);
    std::vector<CoreCtx> ctx(cfg.blockDim * 3);
    for (uint32_t b = 0; b < cfg.blockDim; ++b)
        for (int k = 0; k < 3; ++k) {
            CoreCtx &c = ctx[b * 3 + k];
            c.block = static_cast<int>(b);
            c.kind = k == 0 ? kAic : kAiv;
            c.sub = k == 0 ? 0 : k - 1;
        }
    LaunchTiming timing(cfg, perWave, ctx);
    LaunchStop stop;
    stop.blocks = cfg.blockDim;
    stop.threadsPerBlock = (cfg.mix == CoreMix::AIV_ONLY ? 0 : 1) +
                           (cfg.mix == CoreMix::AIC_ONLY ? 0 : (cfg.mix == CoreMix::MIX_AIC_1_2 ? 2 : 1));
    {
        std::lock_guard<std::mutex> lock(g_runningMu);
        g_running.insert(&stop);
        g_progress = &stop;
        g_lastFault.clear();
    }
    // More blocks than physical cores run in waves, as the hardware schedules them; in the model
    // each block starts on the physical core that is free first.
    for (int first = 0; first < static_cast<int>(cfg.blockDim) && !stop.stop.load(); first += perWave) {
        const int count = std::min(perWave, static_cast<int>(cfg.blockDim) - first);
        RunWave(cfg, body, first, count, ctx, timing.Origins(first, count), stop);
        timing.WaveDone(first, count);
    }
    if (g_raceCheck) RaceGmEndLaunch();
    {
        std::lock_guard<std::mutex> lock(g_runningMu);
        g_running.erase(&stop);
        g_lastDone = stop.threadsDone.load() / stop.threadsPerBlock;
        g_lastTotal = stop.blocks;
        g_progress = nullptr;
        if (stop.stop.load()) {
            g_lastFault = stop.message;
            throw LaunchFault(stop.message);
        }
    }
    timing.Finish();
    AppendProfileLine();
    if (g_divideFaults > 0)
        std::fprintf(
            stderr,
            "[ascendc-emu] warning: kernel %s divided an integer by zero %d time(s); the NPU's scalar unit does "
            "not trap, the emulator took quotient 0 and remainder = dividend\n",
            cfg.name, g_divideFaults.load());

    RecordLaunchCounters(cfg, ctx);
}

void Launch(const LaunchConfig &cfg, const std::function<void()> &aic, const std::function<void()> &aiv,
            uint64_t abiStamp)
{
    Launch(cfg, [&] { (Ctx().kind == kAic ? aic : aiv)(); }, abiStamp);
}

// What code built against headers older than the ABI stamp calls (same names, no stamp): kept so
// that such a binary still loads and its launch is refused with a message instead of crashing.
void Launch(const LaunchConfig &cfg, const std::function<void()> &body);
void Launch(const LaunchConfig &cfg, const std::function<void()> &body) { Launch(cfg, body, uint64_t{0}); }
void Launch(const LaunchConfig &cfg, const std::function<void()> &aic, const std::function<void()> &aiv);
void Launch(const LaunchConfig &cfg, const std::function<void()> &aic, const std::function<void()> &aiv)
{
    Launch(cfg, aic, aiv, uint64_t{0});
}

}  // namespace emu

extern "C" void ascendc_emu_set_fault_mode(int mode)
{
    emu::SetFaultMode(mode == 1 ? emu::FaultMode::kRaise : emu::FaultMode::kAbort);
}

extern "C" void ascendc_emu_cancel_launches(void) { emu::CancelLaunches(); }

extern "C" const char *ascendc_emu_last_fault_message(void)
{
    static thread_local std::string copy;
    std::lock_guard<std::mutex> lock(emu::g_runningMu);
    copy = emu::g_lastFault;
    return copy.c_str();
}

extern "C" void ascendc_emu_launch_progress(uint64_t *done, uint64_t *total)
{
    std::lock_guard<std::mutex> lock(emu::g_runningMu);
    const emu::LaunchStop *st = emu::g_progress;
    if (done != nullptr) *done = st ? st->threadsDone.load() / st->threadsPerBlock : emu::g_lastDone;
    if (total != nullptr) *total = st ? st->blocks : emu::g_lastTotal;
}
