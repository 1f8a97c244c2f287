// Optional hazard checker (env ASCEND_EMU_RACECHECK=1): the emulator executes every
// instruction at issue, so a kernel that forgets a SetFlag/WaitFlag still computes the right
// numbers here. With the checker on, each core keeps a vector clock per pipe and, per 32-byte
// block of every local buffer, the last writer and the last reader per pipe; an access by pipe
// Y to data another pipe X wrote (or read, for a write) without an ordering X -> Y in between
// (SetFlag/WaitFlag<X_Y>, a TQue hand-over, PipeBarrier<PIPE_ALL>) aborts with a message.
// Scalar (S) reads are synchronous on the hardware and never race; scalar writes need S_X.
#pragma once
#include <cstdint>

#include "emu/core.h"
#include "emu/timing.h"

namespace emu {

extern bool g_raceCheck;  // set per launch from ASCEND_EMU_RACECHECK

struct RaceSnap {
    uint64_t vc[static_cast<int>(Pipe::COUNT)] = {};
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

}  // namespace emu
