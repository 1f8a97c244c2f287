// Launch-level side of the timeline model: block start times across waves, and at the end the
// profile (task duration, per-core/per-pipe busy time and ratios, bound pipe, HBM/L2 bytes) and
// the optional Chrome-trace file. Used by launch.cpp only.
#pragma once
#include <vector>

#include "emu/core.h"
#include "emu/launch.h"

namespace emu {

class LaunchTiming {
public:
    LaunchTiming(const LaunchConfig &cfg, int physicalCores, std::vector<CoreCtx> &ctx);
    // Start times (cycles) of blocks first .. first + count - 1.
    const std::vector<double> &Origins(int first, int count);
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
};

}  // namespace emu
