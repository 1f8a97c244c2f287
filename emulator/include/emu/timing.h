// The timeline model: every kernel API call is an instruction issued in program order
// by the core's scalar unit into one pipe; it starts when the pipe is free and its hardware
// dependencies are met and lasts what the cost table (emu/cost_table.h) says. The clocks are
// model cycles of the selected SoC, never host time. Not a CANN header.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emu {

enum class Pipe : int;

// One span of a pipe for the Chrome-trace timeline (only kept when a trace is requested). A
// span with pipe kFlowPipe is a cross-core flag instead: set on core `from` at `start`, its wait
// released on this core at `end`.
constexpr int8_t kFlowPipe = -1;
struct TraceSpan {
    double start, end;  // cycles since launch start
    const char *name;   // the API
    int8_t pipe;
    int32_t from = -1;  // flows: the setting sub-core, block * 3 + (0 aic | 1 aiv0 | 2 aiv1)
    int8_t flag = -1;   // flows: the flag id
};

// Per core thread: the issue clock of the scalar unit, the time each pipe is free again, busy
// cycles per pipe, and the set times of pending SetFlag events (a FIFO per event and id).
struct CoreClock {
    static constexpr int kPipes = 7;
    static constexpr int kFifo = 4;  // pending sets kept per event and id (more: the newest absorbs)
    double origin = 0;              // start of this block (waves start later)
    double scalar = 0;              // next issue time of the scalar unit
    double pipeFree[kPipes] = {};   // pipe p is free from this time on
    double busy[kPipes] = {};       // cycles pipe p was occupied
    double flagT[35][8][kFifo] = {};
    uint8_t flagHead[35][8] = {}, flagCount[35][8] = {};
    uint64_t hbmBytes = 0, l2ReadBytes = 0, l2WriteBytes = 0;
    std::vector<TraceSpan> *trace = nullptr;
    bool traceFull = false;  // the trace of this core reached kMaxTraceSpans; later spans dropped
    static constexpr size_t kMaxTraceSpans = 100000;
    double End() const;  // the time everything issued so far has finished
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
enum class VClass : int { Simple, Transcendental, Reduce, BlockReduce, Cast, CompareSelect, Brcb, Gather, Sort32, MrgSort, Count };
void TimeVector(VClass c, int widestElemBytes, uint64_t repeats, const char *name);
// DMA from GM into UB/L1 (MTE2): `count` bursts of `burst` bytes, `pitch` bytes apart.
void TimeGmRead(Pipe p, const void *gm, uint64_t count, uint64_t burst, uint64_t pitch, const char *name);
// The same for `groups` x `rows` bursts (Nd2Nz with ndNum matrices).
void TimeGmRead2D(Pipe p, const void *gm, uint64_t groups, uint64_t rows, uint64_t groupPitch, uint64_t rowPitch,
                  uint64_t burst, const char *name);
// DMA from UB/L1 to GM (MTE3) or a Fixpipe GM write of `elems` converted elements; writes land in L2.
void TimeGmWrite(Pipe p, void *gm, uint64_t count, uint64_t burst, uint64_t pitch, bool atomic, const char *name);
void TimeFixpipe(void *gm, uint64_t count, uint64_t burst, uint64_t pitch, uint64_t elems, int quantClass, const char *name);
void TimeMmad(uint32_t m, uint32_t n, uint32_t k, int dtypeClass);
void TimeLoadData(bool toL0B, uint64_t bytes, const char *name);
void TimeLocalCopy(Pipe p, uint64_t bytes, const char *name);
void TimeScalarAccess(bool gm);
// Dependencies: HardEvent set/wait, TQue hand-overs, PipeBarrier<PIPE_ALL>.
void TimeFlagSet(int event, int id);
void TimeFlagWait(int event, int id);
void TimePresetFlag(int event, int id);  // a set already done at the current time, free of issue cost
double TimeSignal(Pipe from);              // returns the time the producer's pipe is done
void TimeAcquire(Pipe to, double t);       // pipe `to` starts nothing before t
void TimeBarrierAll();
// Cross-core flags: the set returns its time (the set's pipe done + latency), the wait applies it.
// `pipe` is the pipe_t value of the template argument.
double TimeCrossSet(int pipeT);
void TimeCrossWait(int pipeT, double t);
// For the trace: the wait just timed consumed flag `flag` set by sub-core `from` (block*3+kind).
void TraceCrossFlow(int from, int flag, double t);
// SyncAll: arrival time of this core (all pipes drained), then the release time for everyone.
double TimeSyncArrive();
void TimeSyncRelease(double t);

// Launch-level: start of a block at `origin` cycles; profile JSON of the last launch.
void TimingBeginLaunch();
void TimingBeginCore(double origin);
std::string LastLaunchProfileJson();
// The Chrome-trace JSON of the last launch ("" unless ASCEND_EMU_TRACE=<path> or SetTracePath).
void SetTracePath(const char *path);

}  // namespace emu
