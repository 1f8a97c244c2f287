// The optional hazard checker (see emu/race.h).
#include "emu/race.h"

#include <cstring>

namespace emu {

bool g_raceCheck = false;

namespace {

constexpr int kPipes = static_cast<int>(Pipe::COUNT);

struct BlockRec {
    uint64_t wtime;
    uint64_t rtime[kPipes];
    int8_t wpipe;  // -1: never written inside this launch
};

const char *PipeName(int p)
{
    static const char *n[] = {"MTE2", "MTE1", "M", "V", "MTE3", "FIX", "S"};
    return n[p];
}

// Source and destination pipe of each HardEvent (X_Y: pipe Y waits for pipe X), in enum order.
const Pipe kEventPipes[][2] = {
    {Pipe::MTE2, Pipe::MTE1}, {Pipe::MTE1, Pipe::MTE2}, {Pipe::MTE1, Pipe::M},    {Pipe::M, Pipe::MTE1},
    {Pipe::MTE2, Pipe::V},    {Pipe::V, Pipe::MTE2},    {Pipe::MTE3, Pipe::V},    {Pipe::V, Pipe::MTE3},
    {Pipe::M, Pipe::V},       {Pipe::V, Pipe::M},       {Pipe::V, Pipe::V},       {Pipe::MTE3, Pipe::MTE1},
    {Pipe::MTE1, Pipe::MTE3}, {Pipe::MTE1, Pipe::V},    {Pipe::MTE2, Pipe::M},    {Pipe::M, Pipe::MTE2},
    {Pipe::V, Pipe::MTE1},    {Pipe::M, Pipe::FIXP},    {Pipe::FIXP, Pipe::M},    {Pipe::MTE3, Pipe::MTE2},
    {Pipe::MTE2, Pipe::MTE3}, {Pipe::S, Pipe::V},       {Pipe::V, Pipe::S},       {Pipe::S, Pipe::MTE2},
    {Pipe::MTE2, Pipe::S},    {Pipe::S, Pipe::MTE3},    {Pipe::MTE3, Pipe::S},    {Pipe::MTE2, Pipe::FIXP},
    {Pipe::FIXP, Pipe::MTE2}, {Pipe::FIXP, Pipe::S},    {Pipe::M, Pipe::S},       {Pipe::FIXP, Pipe::MTE3},
    {Pipe::MTE1, Pipe::FIXP}, {Pipe::FIXP, Pipe::MTE1}, {Pipe::FIXP, Pipe::FIXP},
};

BlockRec *Shadow(CoreCtx &c, Buf b)
{
    void *&s = c.raceShadow[static_cast<int>(b)];
    if (s == nullptr) {
        const uint64_t blocks = (c.memSize[static_cast<int>(b)] + 31) / 32;
        auto *recs = new BlockRec[blocks];
        for (uint64_t i = 0; i < blocks; ++i) {
            std::memset(&recs[i], 0, sizeof(BlockRec));
            recs[i].wpipe = -1;
        }
        s = recs;
    }
    return static_cast<BlockRec *>(s);
}

}  // namespace

void RaceAccess(const char *api, Pipe p, Buf b, const void *ptr, uint64_t bytes, bool write)
{
    CoreCtx &c = Ctx();
    if (bytes == 0 || c.mem[static_cast<int>(b)] == nullptr) return;
    const int pi = static_cast<int>(p);
    const uint64_t t = ++c.raceNow;
    c.raceVc[pi][pi] = t;
    BlockRec *recs = Shadow(c, b);
    const uint64_t off = LocalOffset(b, ptr);
    const uint64_t first = off / 32, last = (off + bytes - 1) / 32;
    for (uint64_t k = first; k <= last; ++k) {
        BlockRec &r = recs[k];
        if (r.wpipe >= 0 && r.wpipe != pi && r.wtime > c.raceVc[pi][r.wpipe])
            Fail(api,
                 "pipe %s %s %s+%llu, which pipe %s wrote without an ordering %s -> %s in between "
                 "(SetFlag/WaitFlag<HardEvent::%s_%s>, a TQue EnQue/DeQue or PipeBarrier<PIPE_ALL>)",
                 PipeName(pi), write ? "overwrites" : "reads", BufName(b), (unsigned long long)(k * 32),
                 PipeName(r.wpipe), PipeName(r.wpipe), PipeName(pi), PipeName(r.wpipe), PipeName(pi));
        if (write)
            for (int q = 0; q < kPipes; ++q)
                if (q != pi && q != static_cast<int>(Pipe::S) && r.rtime[q] > c.raceVc[pi][q])
                    Fail(api,
                         "pipe %s overwrites %s+%llu while pipe %s may still read it: no ordering %s -> %s in between "
                         "(SetFlag/WaitFlag<HardEvent::%s_%s>, TQue FreeTensor/AllocTensor or PipeBarrier<PIPE_ALL>)",
                         PipeName(pi), BufName(b), (unsigned long long)(k * 32), PipeName(q), PipeName(q), PipeName(pi),
                         PipeName(q), PipeName(pi));
        if (write) {
            r.wpipe = static_cast<int8_t>(pi);
            r.wtime = t;
        } else {
            r.rtime[pi] = t;
        }
    }
}

void EventPipes(int event, Pipe *from, Pipe *to)
{
    *from = kEventPipes[event][0];
    *to = kEventPipes[event][1];
}

void RaceSignalVc(Pipe from, RaceSnap *slot)
{
    CoreCtx &c = Ctx();
    std::memcpy(slot->vc, c.raceVc[static_cast<int>(from)], sizeof slot->vc);
    slot->vc[static_cast<int>(from)] = c.raceVc[static_cast<int>(from)][static_cast<int>(from)];
    slot->remote = RaceGmView(from);
}

void RaceAcquireVc(Pipe to, const RaceSnap *slot)
{
    RaceGmFlushRefs();
    uint64_t *row = Ctx().raceVc[static_cast<int>(to)];
    for (int q = 0; q < kPipes; ++q) row[q] = slot->vc[q] > row[q] ? slot->vc[q] : row[q];
    RaceGmLearn(to, slot->remote);
}

void RaceJoinPipes()
{
    CoreCtx &c = Ctx();
    uint64_t all[kPipes] = {};
    for (int p = 0; p < kPipes; ++p)
        for (int q = 0; q < kPipes; ++q) all[q] = c.raceVc[p][q] > all[q] ? c.raceVc[p][q] : all[q];
    for (int p = 0; p < kPipes; ++p) std::memcpy(c.raceVc[p], all, sizeof all);
    RaceGmBarrierAll();
}

void RaceBarrierAll()
{
    TimeBarrierAll();
    if (!g_raceCheck) return;
    RaceGmFlushRefs();
    RaceJoinPipes();
}

void RaceFlagSet(int event, int id)
{
    TimeFlagSet(event, id);
    if (!g_raceCheck) return;
    CoreCtx &c = Ctx();
    const int from = static_cast<int>(kEventPipes[event][0]);
    std::memcpy(c.raceFlags[event][id], c.raceVc[from], sizeof c.raceFlags[event][id]);
    RaceGmFlagSet(event, id, kEventPipes[event][0]);
}

void RaceFlagWait(int event, int id)
{
    TimeFlagWait(event, id);
    if (!g_raceCheck) return;
    RaceGmFlushRefs();
    CoreCtx &c = Ctx();
    uint64_t *row = c.raceVc[static_cast<int>(kEventPipes[event][1])];
    for (int q = 0; q < kPipes; ++q) row[q] = c.raceFlags[event][id][q] > row[q] ? c.raceFlags[event][id][q] : row[q];
    RaceGmFlagWait(event, id, kEventPipes[event][1]);
}

namespace {
constexpr uint64_t kUnitBlock = 512;
struct UnitBlock {
    bool set = false;     // the unit flag: the block holds a finished Mmad result
    RaceSnap snap;        // the hazard checker's clock of the instruction that last changed the flag
    uint64_t handle = 0;  // that instruction in the timeline model (TimeLastIssued) ...
    uint64_t blocks = 0;  // ... and how many blocks it covered
};
struct UnitFlags {
    UnitBlock block[256];             // L0C of arch 2201 (128 KiB) in 512-byte blocks
    uint64_t handle = 0, blocks = 0;  // the latest instruction the current one waits for
};
UnitFlags &Units()
{
    CoreCtx &c = Ctx();
    if (c.unitFlags == nullptr) c.unitFlags = new UnitFlags;
    return *static_cast<UnitFlags *>(c.unitFlags);
}
template <class F> void ForBlocks(const L0cRange *r, int n, F f)
{
    for (int i = 0; i < n; ++i)
        for (uint64_t b = r[i].begin / kUnitBlock; b * kUnitBlock < r[i].end && b < 256; ++b) f(b);
}
}  // namespace

void UnitFlagBegin(const char *api, bool fixpipe, uint8_t uf, const L0cRange *r, int n)
{
    if (uf != 2 && uf != 3) return;
    UnitFlags &u = Units();
    const Pipe me = fixpipe ? Pipe::FIXP : Pipe::M;
    u.handle = u.blocks = 0;
    ForBlocks(r, n, [&](uint64_t b) {
        UnitBlock &k = u.block[b];
        if (fixpipe && !k.set)
            Fail(api,
                 "unitFlag %u: L0C+%llu holds no result of a Mmad with unitFlag 3, so the hardware would wait here "
                 "for a later Mmad (out-of-program-order execution is not modelled)",
                 uf, (unsigned long long)(b * kUnitBlock));
        if (!fixpipe && k.set)
            Fail(api,
                 "unitFlag %u: L0C+%llu still holds a Mmad result no Fixpipe with unitFlag 3 has read out, so the "
                 "hardware would wait here for a later Fixpipe (reset the flags with a Fixpipe of the whole tile)",
                 uf, (unsigned long long)(b * kUnitBlock));
        if (g_raceCheck) RaceAcquireVc(me, &k.snap);
        if (k.handle > u.handle) {  // handles of one pipe grow in issue order: the latest covers the rest
            u.handle = k.handle;
            u.blocks = k.blocks;
        }
    });
    // The instruction may start once the first block of the one it waits for is done.
    if (u.handle != 0) TimeUnitWait(me, fixpipe ? Pipe::M : Pipe::FIXP, u.handle, u.blocks);
}

void UnitFlagEnd(bool fixpipe, uint8_t uf, const L0cRange *r, int n)
{
    if (uf != 2 && uf != 3) return;
    UnitFlags &u = Units();
    const Pipe me = fixpipe ? Pipe::FIXP : Pipe::M;
    uint64_t blocks = 0;
    ForBlocks(r, n, [&](uint64_t) { ++blocks; });
    // A Fixpipe streaming behind a Mmad ends no earlier than one of its blocks after the Mmad.
    if (fixpipe && u.handle != 0) TimeUnitFinish(me, blocks, Pipe::M, u.handle);
    if (uf != 3) return;
    RaceSnap snap;
    if (g_raceCheck) RaceSignalVc(me, &snap);
    const uint64_t handle = TimeLastIssued(me);
    ForBlocks(r, n, [&](uint64_t b) {
        UnitBlock &k = u.block[b];
        k.set = !fixpipe;
        k.snap = snap;
        k.handle = handle;
        k.blocks = blocks;
    });
}

void RaceFree(CoreCtx &c)
{
    for (void *&s : c.raceShadow) {
        delete[] static_cast<BlockRec *>(s);
        s = nullptr;
    }
    delete static_cast<UnitFlags *>(c.unitFlags);
    c.unitFlags = nullptr;
    RaceGmFree(c);
}

}  // namespace emu
