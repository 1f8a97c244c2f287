// Launch-level side of the timeline model: block start times across waves, and at the end the
// profile (task duration, per-core/per-pipe busy time and ratios, bound pipe, HBM/L2 bytes) and
// the optional Chrome-trace file. Used by launch.cpp only.
#pragma once
#include <string>
#include <vector>

#include "emu/core.h"
#include "emu/launch.h"

namespace emu {

class LaunchTiming {
public:
    LaunchTiming(const LaunchConfig &cfg, int physicalCores, std::vector<CoreCtx> &ctx);
    ~LaunchTiming();
    // Start times (cycles) of blocks first .. first + count - 1 (the wave's replay starts).
    const std::vector<double> &Origins(int first, int count);
    // The wave's threads are done: its replay runs to the end.
    void WaveDone(int first, int count);
    void Finish();

private:
    const LaunchConfig &cfg_;
    std::vector<CoreCtx> &ctx_;
    std::vector<double> physFree_;
    std::vector<int> physOf_;
    std::vector<double> origins_;
    std::vector<std::vector<TraceSpan>> traces_;
    int aivPerBlock_;
    bool hasAic_;
    bool complete_ = true;               // every wave replayed to its end (not so for a stopped launch)
    std::vector<std::string> altPaths_;  // ASCEND_EMU_COSTS_ALT
    bool Active(int k) const { return k == 0 ? hasAic_ : k <= aivPerBlock_; }
    double TaskUs(double *criticalUs, double *hbmFloorUs, double *l2FloorUs) const;
    void WriteTrace();
};

}  // namespace emu
