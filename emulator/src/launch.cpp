// The launcher: runs blockDim AI cores as threads (1 cube + 2 vector sub-cores each in a MIX
// 1:2 launch), gives every thread its core context and local memories, stops a launch on its
// first fault, and collects the per-pipe counters. The blocking cross-core primitives and their
// deadlock detection are in cross_core_sync.cpp.
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
#include "launch_shared.h"
#include "emu/soc.h"
#include "emu/timing.h"
#include "scalar_divide.h"
#include "timing/launch_timing.h"

namespace emu {

thread_local CoreCtx *t_currentCore = nullptr;
#define t_ctx t_currentCore

namespace {

thread_local char t_name[32];
std::atomic<int> g_divideFaults{0};  // integer divisions by zero in the current launch (scalar_divide.h)

std::atomic<int> g_faultMode{static_cast<int>(FaultMode::kAbort)};
std::mutex g_runningMu;
std::set<LaunchStop *> g_running;
LaunchStop *g_progress = nullptr;  // the running or last launch, for ascendc_emu_launch_progress
uint64_t g_lastDone = 0, g_lastTotal = 0;
std::string g_lastFault;

}  // namespace

namespace launch_internal {

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

}  // namespace launch_internal

namespace {

const char *PipeName(int p)
{
    static const char *names[] = {"MTE2", "MTE1", "M", "V", "MTE3", "FIXP", "S"};
    return names[p];
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
