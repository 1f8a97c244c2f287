// The hazard checker's global-memory part (see emu/race.h): a happens-before order over every
// (core, pipe) of a launch and a shadow of the GM the launch touches.
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "emu/device_memory.h"
#include "emu/race.h"

namespace emu {
namespace {

constexpr int kPipes = static_cast<int>(Pipe::COUNT);
constexpr int kS = static_cast<int>(Pipe::S);
constexpr int kClockBits = 40;  // an epoch: (tid + 1) << 40 | clock; 0 is "none"
constexpr uint64_t kClockMask = (1ull << kClockBits) - 1;

const char *PipeLabel(int p)
{
    static const char *n[] = {"MTE2", "MTE1", "M", "V", "MTE3", "FIX", "S"};
    return n[p];
}

// A core's index in the launch: block * 3 + (0 AIC | 1 + vector sub-core); tid = slot * 7 + pipe.
int SlotOf(const CoreCtx &c) { return c.block * 3 + (c.kind == kAic ? 0 : 1 + c.sub); }

uint32_t g_tids = 0;  // clocks in this launch: blockDim * 3 * pipes

// What a core knows of the other cores, per pipe (its own entries too, after a round trip), and
// the view each pending local flag carries from its source pipe to its destination pipe.
struct Remote {
    RaceClock view[kPipes];
    RaceClock flag[kHardEventCount][kEventIds];
    // Elements GlobalTensor::operator() handed out as a writable reference, with the bytes they
    // held: a write through the reference shows as a change at the core's next checker event.
    struct Ref {
        uint8_t *gm;
        uint32_t bytes;
        uint8_t old[16];
    };
    std::vector<Ref> refs;
};

Remote &RemoteOf(CoreCtx &c)
{
    if (c.raceRemote == nullptr) c.raceRemote = new Remote;
    return *static_cast<Remote *>(c.raceRemote);
}

// The current access: its core, pipe, epoch and kind.
struct Cur {
    CoreCtx *c;
    int slot, pipe;
    uint64_t tid, epoch;
    bool write, atomic;
    const std::vector<uint64_t> *remote;  // the pipe's view; may be null: nothing learnt from other cores yet
};

// Whether the access of epoch e happened before the current one. `scalarReadExempt`: a scalar
// read of the same core is synchronous and never races with what the core does later (as in
// the local checker); it is not an ordering, so it is not used when pruning the records.
bool Before(const Cur &k, uint64_t e, bool scalarReadExempt)
{
    const uint64_t tid = (e >> kClockBits) - 1, t = e & kClockMask;
    if (tid == k.tid) return true;  // program order of one pipe
    if (static_cast<int>(tid / kPipes) == k.slot) {
        const int q = static_cast<int>(tid % kPipes);
        if (scalarReadExempt && q == kS) return true;
        if (t <= k.c->raceVc[k.pipe][q]) return true;
    }
    return k.remote != nullptr && t <= (*k.remote)[tid];
}

// The accesses to a range of GM since its last plain write. Most ranges hold one read or none:
// the first read is kept inline, further reads and atomic writes in `more`.
struct More {
    std::vector<uint64_t> r;  // reads after the inline one, none ordered before another
    std::vector<uint64_t> a;  // the atomic writes since the write, none ordered before another
};
struct Rec {
    uint64_t w = 0;              // the last plain write
    const char *wApi = nullptr;  // and its API, for the message
    uint64_t r = 0;              // a read since it (0: none)
    std::unique_ptr<More> more;
    Rec() = default;
    Rec(const Rec &o) : w(o.w), wApi(o.wApi), r(o.r), more(o.more ? new More(*o.more) : nullptr) {}
    Rec(Rec &&) = default;
    Rec &operator=(Rec &&) = default;
    bool operator==(const Rec &o) const
    {
        if (w != o.w || wApi != o.wApi || r != o.r) return false;
        const bool e = more == nullptr || (more->r.empty() && more->a.empty());
        const bool oe = o.more == nullptr || (o.more->r.empty() && o.more->a.empty());
        if (e || oe) return e == oe;
        return more->r == o.more->r && more->a == o.more->a;
    }
};

// The shadow of one 4 KiB page: runs of bytes that share one record, in address order, each
// up to the next one's begin (the first begins at 0); neighbours with equal records merge, so a
// page accessed whole is one run and strided rows cost a run per row, not a record per granule.
struct Run {
    uint32_t begin;
    Rec rec;
};
constexpr uint64_t kPage = 4096;

struct Shard {
    std::mutex mu;
    std::unordered_map<uint64_t, std::vector<Run>> pages;
};
constexpr int kShards = 64;
Shard g_shards[kShards];

std::string CoreLabel(uint64_t slot)
{
    char b[32];
    if (slot % 3 == 0)
        std::snprintf(b, sizeof b, "aic%llu", (unsigned long long)(slot / 3));
    else
        std::snprintf(b, sizeof b, "aiv%llu.%llu", (unsigned long long)(slot / 3), (unsigned long long)(slot % 3 - 1));
    return b;
}

[[noreturn]] void Report(const char *api, const Cur &k, uint64_t addr, uint64_t e, const char *earlierWhat,
                         const char *earlierApi = nullptr)
{
    char earlier[96];
    if (earlierApi != nullptr)
        std::snprintf(earlier, sizeof earlier, "%s (%s)", earlierWhat, earlierApi);
    else
        std::snprintf(earlier, sizeof earlier, "%s", earlierWhat);
    const uint64_t tid = (e >> kClockBits) - 1;
    const int q = static_cast<int>(tid % kPipes);
    const uint64_t slot = tid / kPipes;
    char where[160];
    DeviceAllocation a;
    if (DeviceFind(reinterpret_cast<const void *>(addr), 1, &a))
        std::snprintf(where, sizeof where, "GM %#llx (byte %llu of the %zu-byte allocation at %#llx)",
                      (unsigned long long)addr, (unsigned long long)(addr - a.base), a.requested,
                      (unsigned long long)a.base);
    else
        std::snprintf(where, sizeof where, "GM %#llx", (unsigned long long)addr);
    const char *what = k.atomic ? "atomically updates" : k.write ? "overwrites" : "reads";
    const std::string other = CoreLabel(slot);
    if (static_cast<int>(slot) == k.slot) {
        Fail(api,
             "pipe %s %s %s, which pipe %s %s without an ordering %s -> %s in between "
             "(SetFlag/WaitFlag<HardEvent::%s_%s>, PipeBarrier<PIPE_ALL> or a cross-core round trip)",
             PipeLabel(k.pipe), what, where, PipeLabel(q), earlier, PipeLabel(q), PipeLabel(k.pipe), PipeLabel(q),
             PipeLabel(k.pipe));
    }
    const bool earlierRead = std::strcmp(earlierWhat, "read") == 0;
    Fail(api,
         "pipe %s %s %s, which pipe %s of %s %s, with no cross-core ordering in between: %s must "
         "CrossCoreSetFlag on a pipe that is ordered after that access (%s, or one that waited for it) and this "
         "core CrossCoreWaitFlag that set before this access, or both take part in a SyncAll, or %s IBSet's a slot "
         "after "
         "that access that this core IBWait's before this access%s",
         PipeLabel(k.pipe), what, where, PipeLabel(q), other.c_str(), earlier, other.c_str(), PipeLabel(q),
         other.c_str(), earlierRead ? " (a 'consumed' flag back to the writer before it reuses the data)" : "");
}

// Checks the current access against one record and updates it.
void Apply(const char *api, const Cur &k, Rec &r, uint64_t addr)
{
    if (r.w != 0 && !Before(k, r.w, false)) Report(api, k, addr, r.w, "wrote", r.wApi);
    if (k.write) {
        if (r.r != 0 && !Before(k, r.r, true)) Report(api, k, addr, r.r, "read");
        if (r.more != nullptr)
            for (uint64_t e : r.more->r)
                if (!Before(k, e, true)) Report(api, k, addr, e, "read");
    }
    if (!k.atomic && r.more != nullptr)
        for (uint64_t e : r.more->a)
            if (!Before(k, e, false)) Report(api, k, addr, e, "updated atomically");
    auto prune = [&](std::vector<uint64_t> &set) {  // keeps only the epochs not ordered before this one
        size_t n = 0;
        for (uint64_t e : set)
            if (!Before(k, e, false)) set[n++] = e;
        set.resize(n);
    };
    if (k.atomic) {
        r.w = 0;
        r.r = 0;
        if (r.more == nullptr) r.more.reset(new More);
        r.more->r.clear();
        prune(r.more->a);
        r.more->a.push_back(k.epoch);
    } else if (k.write) {
        r.w = k.epoch;
        r.wApi = api;
        r.r = 0;
        r.more.reset();
    } else {
        if (r.more != nullptr) prune(r.more->r);
        if (r.r != 0 && Before(k, r.r, false)) {  // the inline read is ordered before: take its place
            r.r = 0;
            if (r.more != nullptr && !r.more->r.empty()) {
                r.r = r.more->r.back();
                r.more->r.pop_back();
            }
        }
        if (r.r == 0) {
            r.r = k.epoch;
        } else {
            if (r.more == nullptr) r.more.reset(new More);
            r.more->r.push_back(k.epoch);
        }
        if (r.more != nullptr && r.more->r.empty() && r.more->a.empty()) r.more.reset();
    }
}

// The bytes [lo, hi) of one page (offsets inside it; the page starts at `base`).
void Visit(const char *api, const Cur &k, std::vector<Run> &runs, uint64_t base, uint32_t lo, uint32_t hi)
{
    if (runs.empty()) runs.push_back(Run{0, Rec()});
    // The run holding lo, split there.
    size_t i = runs.size() - 1;
    while (runs[i].begin > lo) --i;
    if (runs[i].begin < lo) {
        runs.insert(runs.begin() + static_cast<long>(i) + 1, Run{lo, Rec(runs[i].rec)});
        ++i;
    }
    size_t j = i;
    for (; j < runs.size() && runs[j].begin < hi; ++j) {
        const uint32_t end = j + 1 < runs.size() ? runs[j + 1].begin : static_cast<uint32_t>(kPage);
        if (end > hi) runs.insert(runs.begin() + static_cast<long>(j) + 1, Run{hi, Rec(runs[j].rec)});
        Apply(api, k, runs[j].rec, base + runs[j].begin);
    }
    // Merge equal neighbours around the runs just updated: [i - 1, j].
    const size_t from = i > 0 ? i - 1 : 0, to = j < runs.size() ? j : runs.size() - 1;
    size_t out = from;
    for (size_t x = from + 1; x <= to; ++x) {
        if (runs[x].rec == runs[out].rec) continue;
        ++out;
        if (out != x) runs[out] = std::move(runs[x]);
    }
    if (out != to) runs.erase(runs.begin() + static_cast<long>(out) + 1, runs.begin() + static_cast<long>(to) + 1);
}

void Range(const char *api, const Cur &k, uint64_t lo, uint64_t hi)
{
    while (lo < hi) {
        const uint64_t page = lo / kPage, end = (page + 1) * kPage < hi ? (page + 1) * kPage : hi;
        Shard &s = g_shards[(page ^ (page >> 6)) % kShards];
        std::lock_guard<std::mutex> lock(s.mu);
        const uint64_t base = page * kPage;
        Visit(api, k, s.pages[page], base, static_cast<uint32_t>(lo - base), static_cast<uint32_t>(end - base));
        lo = end;
    }
}

void ClearShadow()
{
    for (Shard &s : g_shards) {
        std::lock_guard<std::mutex> lock(s.mu);
        s.pages.clear();
    }
}

}  // namespace

void RaceGmBeginLaunch(uint32_t blockDim)
{
    g_tids = blockDim * 3u * kPipes;
    ClearShadow();
}

void RaceGmEndLaunch() { ClearShadow(); }

namespace {
void Access(CoreCtx &c, const char *api, Pipe p, const void *gm, uint64_t count, uint64_t bytes, uint64_t pitch,
            bool write);

// The writes through references of GlobalTensor::operator() since the last checker event, as
// plain scalar writes at this point of the program (the hardware's scalar store may be anywhere
// between the two events; a write of the value the element already held is not seen).
void FlushRefs(CoreCtx &c)
{
    if (c.raceRemote == nullptr) return;
    std::vector<Remote::Ref> &refs = static_cast<Remote *>(c.raceRemote)->refs;
    if (refs.empty()) return;
    std::vector<Remote::Ref> todo;
    todo.swap(refs);
    for (const Remote::Ref &r : todo)
        if (std::memcmp(r.gm, r.old, r.bytes) != 0)
            Access(c, "GlobalTensor::operator() (a write through its reference)", Pipe::S, r.gm, 1, r.bytes, 0, true);
}
}  // namespace

void RaceGmFlushRefs()
{
    if (g_raceCheck) FlushRefs(Ctx());
}

void RaceGmElementRef(void *gm, uint64_t bytes)
{
    CoreCtx &c = Ctx();
    FlushRefs(c);
    Access(c, "GlobalTensor::operator()", Pipe::S, gm, 1, bytes, 0, false);
    if (bytes > sizeof(Remote::Ref::old)) return;  // a larger element: its reads only
    Remote::Ref r;
    r.gm = static_cast<uint8_t *>(gm);
    r.bytes = static_cast<uint32_t>(bytes);
    std::memcpy(r.old, gm, bytes);
    RemoteOf(c).refs.push_back(r);
}

void RaceGmAccess(const char *api, Pipe p, const void *gm, uint64_t count, uint64_t bytes, uint64_t pitch, bool write)
{
    CoreCtx &c = Ctx();
    FlushRefs(c);
    Access(c, api, p, gm, count, bytes, pitch, write);
}

namespace {
void Access(CoreCtx &c, const char *api, Pipe p, const void *gm, uint64_t count, uint64_t bytes, uint64_t pitch,
            bool write)
{
    if (count == 0 || bytes == 0) return;
    Cur k;
    k.c = &c;
    k.slot = SlotOf(c);
    k.pipe = static_cast<int>(p);
    k.tid = static_cast<uint64_t>(k.slot) * kPipes + k.pipe;
    const uint64_t t = ++c.raceNow;
    c.raceVc[k.pipe][k.pipe] = t;
    k.epoch = ((k.tid + 1) << kClockBits) | t;
    k.write = write;
    k.atomic = write && c.atomicOp != 0;
    const RaceClock &view = c.raceRemote != nullptr ? static_cast<Remote *>(c.raceRemote)->view[k.pipe] : RaceClock();
    k.remote = view.get();
    const uint64_t base = reinterpret_cast<uint64_t>(gm);
    if (pitch <= bytes) return Range(api, k, base, base + (count - 1) * pitch + bytes);  // contiguous (or overlapping)
    for (uint64_t i = 0; i < count; ++i) Range(api, k, base + i * pitch, base + i * pitch + bytes);
}
}  // namespace

RaceClock RaceGmJoin(const RaceClock &a, const RaceClock &b)
{
    if (a == nullptr || a == b) return b;
    if (b == nullptr) return a;
    // Views are shared and never changed: keep the one that covers the other, else a new join.
    bool aCovers = true, bCovers = true;
    const std::vector<uint64_t> &x = *a, &y = *b;
    for (size_t i = 0; i < x.size() && (aCovers || bCovers); ++i) {
        aCovers = aCovers && x[i] >= y[i];
        bCovers = bCovers && y[i] >= x[i];
    }
    if (aCovers) return a;
    if (bCovers) return b;
    auto j = std::make_shared<std::vector<uint64_t>>(x);
    for (size_t i = 0; i < j->size(); ++i) (*j)[i] = y[i] > (*j)[i] ? y[i] : (*j)[i];
    return j;
}

RaceClock RaceGmPublish(int pipeT)
{
    CoreCtx &c = Ctx();
    FlushRefs(c);
    Remote &r = RemoteOf(c);
    const int row = PipeOfPipeT(pipeT);
    // The set is queued on its pipe by the scalar unit: it follows what that pipe did or waited
    // for and what the scalar unit did before issuing it (PIPE_ALL: every pipe).
    RaceClock known;
    for (int p = 0; p < kPipes; ++p)
        if (row < 0 || p == row || p == kS) known = RaceGmJoin(known, r.view[p]);
    auto clock = known != nullptr ? std::make_shared<std::vector<uint64_t>>(*known)
                                  : std::make_shared<std::vector<uint64_t>>(g_tids, 0);
    uint64_t *own = clock->data() + static_cast<uint64_t>(SlotOf(c)) * kPipes;
    for (int p = 0; p < kPipes; ++p) {
        if (row >= 0 && p != row && p != kS) continue;
        for (int q = 0; q < kPipes; ++q) own[q] = c.raceVc[p][q] > own[q] ? c.raceVc[p][q] : own[q];
    }
    return clock;
}

void RaceGmAcquire(const RaceClock &clock, int pipeT)
{
    FlushRefs(Ctx());
    if (clock == nullptr) return;
    Remote &r = RemoteOf(Ctx());
    const int row = PipeOfPipeT(pipeT);
    // A wait on PIPE_S holds the scalar unit, which issues every later instruction of every pipe.
    // Pipes often share one view: join each distinct view once.
    RaceClock before[kPipes], after[kPipes];
    int n = 0;
    for (int p = 0; p < kPipes; ++p) {
        if (!(row < 0 || row == kS || p == row)) continue;
        int i = 0;
        while (i < n && before[i] != r.view[p]) ++i;
        if (i == n) {
            before[n] = r.view[p];
            after[n++] = RaceGmJoin(r.view[p], clock);
        }
        r.view[p] = after[i];
    }
}

RaceClock RaceGmView(Pipe p)
{
    CoreCtx &c = Ctx();
    if (c.raceRemote == nullptr) return nullptr;
    return static_cast<Remote *>(c.raceRemote)->view[static_cast<int>(p)];
}

void RaceGmLearn(Pipe to, const RaceClock &view)
{
    if (view == nullptr) return;
    RaceClock &v = RemoteOf(Ctx()).view[static_cast<int>(to)];
    v = RaceGmJoin(v, view);
}

void RaceGmBarrierAll()
{
    CoreCtx &c = Ctx();
    if (c.raceRemote == nullptr) return;
    Remote &r = *static_cast<Remote *>(c.raceRemote);
    RaceClock all;
    for (const RaceClock &v : r.view) all = RaceGmJoin(all, v);
    for (RaceClock &v : r.view) v = all;
}

void RaceGmFlagSet(int event, int id, Pipe from)
{
    CoreCtx &c = Ctx();
    if (c.raceRemote == nullptr) return;
    Remote &r = *static_cast<Remote *>(c.raceRemote);
    r.flag[event][id] = r.view[static_cast<int>(from)];
}

void RaceGmFlagWait(int event, int id, Pipe to)
{
    CoreCtx &c = Ctx();
    if (c.raceRemote == nullptr) return;
    Remote &r = *static_cast<Remote *>(c.raceRemote);
    RaceGmLearn(to, r.flag[event][id]);
}

void RaceGmArrive(RaceClock *barrier)
{
    const RaceClock mine = RaceGmPublish(6 /* PIPE_ALL */);
    if (*barrier == nullptr) {
        *barrier = mine;
        return;
    }
    std::vector<uint64_t> &b = **barrier;  // the barrier's own clock, not shared before it completes
    for (size_t i = 0; i < b.size(); ++i) b[i] = (*mine)[i] > b[i] ? (*mine)[i] : b[i];
}

void RaceGmRelease(const RaceClock &barrier)
{
    RaceGmAcquire(barrier, 0 /* PIPE_S: every pipe */);
    // Every pipe of the core took part in the barrier (as the timeline model has it): the pipes
    // are ordered among themselves as by PipeBarrier<PIPE_ALL>.
    RaceJoinPipes();
}

void RaceGmFree(CoreCtx &c)
{
    delete static_cast<Remote *>(c.raceRemote);
    c.raceRemote = nullptr;
}

}  // namespace emu
