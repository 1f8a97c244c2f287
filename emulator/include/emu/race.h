// Optional hazard checker (env ASCEND_EMU_RACECHECK=1): the emulator executes every
// instruction at issue, so a kernel that forgets a SetFlag/WaitFlag still computes the right
// numbers here. With the checker on, each core keeps a vector clock per pipe and, per 32-byte
// block of every local buffer, the last writer and the last reader per pipe; an access by pipe
// Y to data another pipe X wrote (or read, for a write) without an ordering X -> Y in between
// (SetFlag/WaitFlag<X_Y>, a TQue hand-over, PipeBarrier<PIPE_ALL>) aborts with a message.
// Scalar (S) reads are synchronous on the hardware and never race; scalar writes need S_X.
//
// Global memory (race_gm.cpp) is checked across cores and inside one core. Every (core, pipe)
// of the launch is a clock of one launch-wide happens-before order: inside a core the per-pipe
// clocks above order it; across cores only CrossCoreSetFlag -> the CrossCoreWaitFlag that
// consumes that set (each flag counter keeps a FIFO of the clocks its pending sets published)
// and SyncAll do. A set publishes what its pipe (and the scalar unit that issued it) had done
// or waited for. What a core learns of the others is kept per pipe, as the core's own pipe
// clocks are: a wait on PIPE_S (or a SyncAll) blocks the scalar unit, so every later instruction
// of every pipe follows it; a wait on pipe X holds only pipe X, and the other pipes learn it
// through the local orderings (SetFlag/WaitFlag, TQue hand-overs, PipeBarrier<PIPE_ALL>, unit
// flags), which carry the per-pipe view with the per-pipe clock. The shadow of GM is
// kept only where the launch touches it: per 4 KiB page runs of bytes with one record each,
// split where an access begins or ends and merged back when equal (cores writing neighbouring
// bytes do not race). A record holds the last
// plain write, the reads since it (one per clock while concurrent, FastTrack-style) and the
// atomic writes (SetAtomicAdd/Max/Min) since it. Concurrent atomic writes do not race; any
// other pair of accesses of which at least one writes must be ordered: MTE3 writing GM that
// MTE2 of the same core reads later needs MTE3_MTE2 as on the hardware; another core needs a
// cross-core flag or SyncAll. GM accesses: DataCopy / DataCopyPad GM<->UB/L1 (MTE2 reads,
// MTE3 writes), Nd2Nz and LoadData from GM (MTE2), Fixpipe to GM (FIX), GlobalTensor
// GetValue/SetValue and operator() (S; a read through its reference, a write when assigned).
// The shadow lives for one launch.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "emu/core.h"
#include "emu/timing.h"

namespace emu {

extern bool g_raceCheck;  // set per launch from ASCEND_EMU_RACECHECK

// What one pipe has learnt of other cores' clocks (race_gm.cpp): a clock over every (core, pipe)
// of the launch, shared and never changed once published (null: nothing yet).
using RaceClock = std::shared_ptr<std::vector<uint64_t>>;

struct RaceSnap {
    uint64_t vc[static_cast<int>(Pipe::COUNT)] = {};
    RaceClock remote;  // the signalling pipe's view of the other cores
};

void RaceAccess(const char *api, Pipe p, Buf b, const void *ptr, uint64_t bytes, bool write);
void RaceSignalVc(Pipe from, RaceSnap *slot);
void RaceAcquireVc(Pipe to, const RaceSnap *slot);
// The producer / consumer side of a TQue hand-over; also a dependency of the timeline model
// (keyed by the slot).
inline void RaceSignal(Pipe from, RaceSnap *slot)
{
    TimeSignal(from, slot);
    if (g_raceCheck) RaceSignalVc(from, slot);
}
inline void RaceAcquire(Pipe to, const RaceSnap *slot)
{
    TimeAcquire(to, slot);
    if (g_raceCheck) RaceAcquireVc(to, slot);
}
// These three also drive the timeline model (emu/timing.h), checker on or off.
void RaceBarrierAll();
void RaceJoinPipes();  // the checker's part of PipeBarrier<PIPE_ALL>: every pipe learns what any pipe knows
void RaceFlagSet(int event, int id);   // SetFlag<event>(id)
void RaceFlagWait(int event, int id);  // WaitFlag<event>(id)
// Source and destination pipe of a HardEvent (X_Y: pipe Y waits for pipe X).
void EventPipes(int event, Pipe *from, Pipe *to);
void RaceFree(CoreCtx &c);  // end of a core's run

// The unit flags of L0C (Mmad / Fixpipe with unitFlag 2 or 3): one per 512-byte block, set by a
// Mmad with unitFlag 3 when it is done, cleared by a Fixpipe with unitFlag 3. A unit-flag Mmad
// writes only blocks that are clear and a unit-flag Fixpipe reads only blocks that are set, so
// the pair orders M -> FIX and FIX -> M block by block, for the hazard checker and the timeline
// model (a Fixpipe starts once the first fractal is done, not after the whole Mmad). `ranges`
// are byte ranges [begin, end) of L0C; Begin runs before the instruction is timed, End after.
struct L0cRange {
    uint64_t begin, end;
};
void UnitFlagBegin(const char *api, bool fixpipe, uint8_t unitFlag, const L0cRange *ranges, int count);
void UnitFlagEnd(bool fixpipe, uint8_t unitFlag, const L0cRange *ranges, int count);

inline void RaceRead(const char *api, Pipe p, int b, const void *ptr, uint64_t bytes)
{
    if (g_raceCheck) RaceAccess(api, p, static_cast<Buf>(b), ptr, bytes, false);
}
inline void RaceWrite(const char *api, Pipe p, int b, const void *ptr, uint64_t bytes)
{
    if (g_raceCheck) RaceAccess(api, p, static_cast<Buf>(b), ptr, bytes, true);
}

// Global memory (race_gm.cpp).
void RaceGmBeginLaunch(uint32_t blockDim);  // clears the GM shadow
void RaceGmEndLaunch();
// `count` rows of `bytes` bytes, `pitch` apart from `gm`; a write honours the core's atomic mode.
void RaceGmAccess(const char *api, Pipe p, const void *gm, uint64_t count, uint64_t bytes, uint64_t pitch, bool write);
inline void RaceGm(const char *api, Pipe p, const void *gm, uint64_t count, uint64_t bytes, uint64_t pitch, bool write)
{
    if (g_raceCheck) RaceGmAccess(api, p, gm, count, bytes, pitch, write);
}
// GlobalTensor::operator(): a scalar read of the element now, and a scalar write at the core's
// next checker event if the element changed through the reference meanwhile.
void RaceGmElementRef(void *gm, uint64_t bytes);
void RaceGmFlushRefs();  // that check now (before an ordering changes what the scalar unit knows)
// What CrossCoreSetFlag on pipe_t `pipeT` publishes (PIPE_ALL: every pipe of the core).
RaceClock RaceGmPublish(int pipeT);
RaceClock RaceGmJoin(const RaceClock &a, const RaceClock &b);  // either may be null; a or b when it covers the other
// A wait on pipe_t `pipeT` consumed a set of `clock` (PIPE_S: every pipe of the core learns it).
void RaceGmAcquire(const RaceClock &clock, int pipeT);
// The per-pipe views follow the local orderings (race.cpp): pipe `to` is now ordered after `view`.
RaceClock RaceGmView(Pipe p);
void RaceGmLearn(Pipe to, const RaceClock &view);
void RaceGmBarrierAll();                           // every pipe learns what any pipe knows
void RaceGmFlagSet(int event, int id, Pipe from);  // SetFlag / WaitFlag carry the view too
void RaceGmFlagWait(int event, int id, Pipe to);
// SyncAll: the arrival joins everything the core did into `barrier`; the release acquires it.
void RaceGmArrive(RaceClock *barrier);
void RaceGmRelease(const RaceClock &barrier);
void RaceGmFree(CoreCtx &c);  // end of a core's run

}  // namespace emu
