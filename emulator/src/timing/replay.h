// The deterministic pass of the timeline model (see emu/timing.h): the core threads write
// TimingRecords into their TimingLog; the replay runs every core's clocks over its log and takes
// the GM accesses of all cores to the shared L2 one at a time, the one that starts earliest in
// modelled time first (ties: the lower core index). Cross-core flags, SyncAll and IBSet/IBWait
// release a core once the sets / arrivals / slot writes they depend on have been replayed.
//
// The replay runs while the kernel executes (whichever core thread fills a chunk of its log
// advances it) and finishes when the wave's threads are done. It only takes the next L2 access
// when no core whose log is still being written could produce an earlier one (its future
// accesses start no earlier than its scalar clock), so the order - and every modelled time - is
// the same as if all logs were complete before the replay began.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "emu/timing.h"

namespace emu {

enum class RecKind : uint8_t {
    Begin,
    Op,
    Scalar,
    GmRead,
    GmWrite,
    Fixpipe,
    FlagSet,
    FlagWait,
    FlagPreset,
    Signal,
    Acquire,
    Barrier,
    UnitWait,
    UnitFinish,
    CrossSet,
    CrossWait,
    SyncArrive,
    SyncRelease,
    SlotWrite,  // IBSet / IBWait: the call's slot write (id in addr) is done when its pipe is
    SlotHold,   // the pipe starts nothing before slot write `addr` is done
    End
};

// The fixed start cost an Op record adds in the replay (the cost table's *_head entries).
enum class Head : uint8_t { None, Mmad, Mte1, Fixp, Vec, Dma };

struct TimingRecord {
    RecKind kind;
    int8_t pipe;
    uint8_t a, b;      // HardEvent and id; Op: Head; GmRead: 1 for Nd2Nz; Scalar: 1 for GM; GM writes: atomic
    uint32_t groups;   // GM: bursts are groups x rows
    const char *name;  // the API (trace)
    double cycles;     // Op: cost without its head; Begin: origin; Fixpipe: conversion cycles
    uint64_t addr;     // GM address; hand-over key; set, barrier or counter id
    uint64_t rowPitch, groupPitch;
    uint32_t rows, burst;
};

constexpr int kTimedPipes = 7;  // MTE2, MTE1, M, V, MTE3, FIXP, S (emu::Pipe order)
constexpr int kMaxQueueDepth = 64;
constexpr uint64_t kDmaLine = 512;  // a DMA moves at most 512 B per transfer ([HWC], cost_table.cpp)
constexpr int kRecent = 1024;       // (start, end) of the last instructions per pipe, for TimeUnitWait/Finish

// The clocks of one sub-core.
struct CoreClock {
    double origin = 0;                                // start of this block (waves start later)
    double scalar = 0;                                // next issue time of the scalar unit
    double pipeFree[kTimedPipes] = {};                // pipe p is free from this time on
    double busy[kTimedPipes] = {};                    // cycles pipe p was occupied
    double queued[kTimedPipes][kMaxQueueDepth] = {};  // start times of the last instructions per pipe (ring)
    uint32_t issued[kTimedPipes] = {};
    double recent[kTimedPipes][kRecent][2] = {};  // by issue number % kRecent
    static constexpr int kFifo = 4;               // pending sets kept per event and id (more: the newest absorbs)
    double flagT[35][8][kFifo] = {};
    uint8_t flagHead[35][8] = {}, flagCount[35][8] = {};
    std::unordered_map<const void *, double> handOver;  // TimeSignal key -> time
    uint64_t hbmBytes = 0, l2ReadBytes = 0, l2WriteBytes = 0;
    double bandwidthWait[2][kTimedPipes] = {};  // [HBM, L2][pipe]: cycles its transfers waited for the device's share
    std::vector<TraceSpan> *trace = nullptr;
    bool traceFull = false;  // the trace of this core reached kMaxTraceSpans; later spans dropped
    static constexpr size_t kMaxTraceSpans = 100000;
    double End() const;  // the time everything issued so far has finished
};

// Launch: `cores` global core slots; traces[i] (may be null) receives core i's spans. With
// `keep`, the logs are kept for ReplayAgain (a launch of one wave).
void ReplayBeginLaunch(int cores, std::vector<std::vector<TraceSpan>> *traces, bool keep);
// The logs of a wave's cores (each log's index set); their Begin records carry the origins.
void ReplayBeginWave(const std::vector<TimingLog *> &logs);
// Advances the replay as far as the logs written so far determine it (never blocks on a core).
void ReplayPoll();
// All of the wave's logs are complete: replays them to the end. False if a core is still
// waiting for a flag (a launch that was stopped part-way).
bool ReplayFinishWave();
const CoreClock &ReplayClock(int index);
// Cycles the launch's transfers waited for the device's HBM (else L2) bandwidth, summed over all
// transfers (bandwidth.h).
double ReplayBandwidthDelayCycles(bool hbm);
// Replays the kept logs of the launch again from the start under the cost table in force
// (OverrideCosts); ReplayClock then reports this pass. False without kept logs.
bool ReplayAgain();
// Frees the kept logs.
void ReplayEndLaunch();
// A launch-unique id for a cross-core set by core `core` (the id names the core).
uint64_t ReplayNextSetId(int core);
// The token of a cross-core wait on `counter`: the set ids that release it (FIFO per counter).
void ReplayPushToken(int counter, const uint64_t *ids, int count);
// Frees the chunks of a log (end of launch).
void ReplayDropLog(TimingLog &log);

}  // namespace emu
