// The timeline model: every kernel API call is an instruction issued in program order by the
// core's scalar unit into one pipe's issue queue; it starts when the pipe is free and its
// hardware dependencies are met and lasts what the cost table (emu/cost_table.h) says. The
// clocks are model cycles of the selected SoC, never host time.
//
// The core threads only record what they issue (a log per core); the clocks run in a separate,
// deterministic pass over those logs (emulator/src/timing/replay.cpp) that takes the cores' GM
// accesses to the shared L2 in modelled-time order, so the modelled time of a launch depends on
// the program alone, never on how the host schedules its threads. Not a CANN header.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace emu {

enum class Pipe : int;
struct TimingRecord;

// One span of a pipe for the Chrome-trace timeline (only kept when a trace is requested).
// A span with pipe kFlowPipe is a cross-core flag instead: set on sub-core `from` at `start`,
// the wait it released on this sub-core done at `end` (a flow arrow in the trace).
constexpr int8_t kFlowPipe = -1;
struct TraceSpan {
    double start, end;  // cycles since launch start
    const char *name;   // the API
    int8_t pipe;
    int32_t from = -1;  // flows: the setting sub-core, block * 3 + (0 aic | 1 aiv0 | 2 aiv1)
    int8_t flag = -1;   // flows: the flag id
};

// Per core: its log of timed instructions, written by the core's thread and read by the replay
// in chunks (the replay frees the chunks it has consumed).
struct TimingLog {
    static constexpr uint32_t kChunk = 4096;  // records per chunk
    std::mutex mu;                            // guards `chunks` (not the records)
    std::deque<TimingRecord *> chunks;        // not yet consumed, oldest first
    TimingRecord *tail = nullptr;             // the chunk the core thread writes into
    std::atomic<uint64_t> published{0};       // records the replay may read
    uint64_t written = 0;                     // records written by the core thread
    uint64_t issued[7] = {};                  // instructions issued per pipe (TimeLastIssued)
    int index = -1;                           // global core index (block * 3 + 0 aic | 1 aiv0 | 2 aiv1)
};

// Whether the model runs for this launch (env ASCEND_EMU_TIMING=0 turns it off) and whether the
// data work is skipped (env ASCEND_EMU_TIMING_ONLY=1: cube, vector and Fixpipe arithmetic and
// LoadData become no-ops; GM<->local DataCopy and the 16-bit bitwise ops And/Or/Not still move
// and compute data so addresses, block tables, indices and mask tests read by the kernel stay
// right; results are garbage).
extern bool g_timing;
extern bool g_timingOnly;
inline bool TimingOnly() { return g_timingOnly; }

// An instruction of `cycles` on pipe p (issued by the scalar unit, in order in its pipe).
void TimeOp(Pipe p, double cycles, const char *name);
// Vector instruction classes of the cost table.
enum class VClass : int {
    Simple,
    Transcendental,
    Reduce,
    BlockReduce,
    Cast,
    CompareSelect,
    Brcb,
    Gather,
    Sort32,
    MrgSort,
    Count
};
void TimeVector(VClass c, int widestElemBytes, uint64_t repeats, const char *name);
// DMA from GM into UB/L1 (MTE2): `count` bursts of `burst` bytes, `pitch` bytes apart.
void TimeGmRead(Pipe p, const void *gm, uint64_t count, uint64_t burst, uint64_t pitch, const char *name);
// An Nd2Nz copy (ND in GM to NZ in L1) of `groups` x `rows` rows of `burst` bytes (ndNum matrices).
void TimeGmRead2D(Pipe p, const void *gm, uint64_t groups, uint64_t rows, uint64_t groupPitch, uint64_t rowPitch,
                  uint64_t burst, const char *name);
// DMA from UB/L1 to GM (MTE3) or a Fixpipe GM write of `elems` converted elements; writes land in L2.
void TimeGmWrite(Pipe p, void *gm, uint64_t count, uint64_t burst, uint64_t pitch, bool atomic, const char *name);
void TimeFixpipe(void *gm, uint64_t count, uint64_t burst, uint64_t pitch, uint64_t elems, int quantClass,
                 const char *name);
void TimeMmad(uint32_t m, uint32_t n, uint32_t k, int dtypeClass);
void TimeLoadData(bool toL0B, uint64_t bytes, const char *name);
void TimeLocalCopy(Pipe p, uint64_t bytes, const char *name);
void TimeScalarAccess(bool gm);
// Dependencies: HardEvent set/wait, TQue hand-overs, PipeBarrier<PIPE_ALL>.
void TimeFlagSet(int event, int id);
void TimeFlagWait(int event, int id);
void TimePresetFlag(int event, int id);  // a set already done at the current time, free of issue cost
// A hand-over through `key` (a per-core object such as a queue slot): the signal records when
// pipe `from` is done with everything issued so far; an acquire makes pipe `to` start nothing
// before the latest signal through the same key. `name` names the issue in the trace (default
// "TQue signal" / "TQue acquire").
void TimeSignal(Pipe from, const void *key, const char *name = nullptr);
void TimeAcquire(Pipe to, const void *key, const char *name = nullptr);
void TimeBarrierAll();
// Block-wise hand-offs inside a core (unitFlag: Mmad -> Fixpipe through L0C). An instruction is
// named by the handle TimeLastIssued returns right after it was timed (handles of one pipe grow
// in issue order, so the latest of several is the largest). TimeUnitWait: pipe `to` starts
// nothing before the first of `blocks` equal shares of instruction `handle` on pipe `from` is
// done. TimeUnitFinish: the instruction last issued to `p` (`blocks` shares) ends no earlier
// than one of its shares after instruction `handle` on pipe `from` ends.
uint64_t TimeLastIssued(Pipe p);
void TimeUnitWait(Pipe to, Pipe from, uint64_t handle, uint64_t blocks);
void TimeUnitFinish(Pipe p, uint64_t blocks, Pipe from, uint64_t handle);
// Cross-core flags. A set is logged with a launch-unique id (returned); the launcher matches
// sets to waits exactly as the flag counters do and hands each wait a token: the set ids whose
// latest time (the set's pipe done + cross_flag) releases it. `counter` = core index * 16 + flag.
uint64_t TimeCrossSet(int pipeT);
void TimeCrossBump(int counter, const uint64_t *setIds, int count);
void TimeCrossWait(int pipeT, int counter);
// SyncAll: the arrival (all pipes drained) and the release of barrier `id` (launch-unique) of
// `members` cores: the latest arrival + sync_all.
void TimeSyncArrive(uint64_t id, int members);
void TimeSyncRelease(uint64_t id);

// IBSet / IBWait: TimeSlotId names a call's slot write (launch-unique), TimeSlotWrite publishes
// it (the call's MTE3 write of the slot is done) and TimeSlotHold(id) makes the call's next poll
// read start no earlier than write `id` (the write that made the slot ready) is done.
uint64_t TimeSlotId();
void TimeSlotWrite(uint64_t id);
// `waiter` is the waiting call ("IBSet" / "IBWait") and its eventID, for the trace's flow arrow.
void TimeSlotHold(uint64_t id, const char *waiter, int eventID);

// Launch-level: start of a core's log (origin = its block's start in cycles) and its end.
void TimingBeginLaunch();
void TimingBeginCore(double origin);
void TimingEndCore();
std::string LastLaunchProfileJson();
// The Chrome-trace JSON of the last launch ("" unless ASCEND_EMU_TRACE=<path> or SetTracePath).
void SetTracePath(const char *path);

}  // namespace emu
