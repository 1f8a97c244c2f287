// The launch's counters JSON and profile line (launch_counters.cpp), written after a launch.
#pragma once
#include <vector>

#include "emu/core.h"
#include "emu/launch.h"

namespace emu {

// last_counters(): per core (in block order) and in total, the pipe counters and buffer peaks.
void RecordLaunchCounters(const LaunchConfig &cfg, const std::vector<CoreCtx> &ctx);
// ASCEND_EMU_PROFILE=<file>: appends the launch's modelled profile as one JSON line.
void AppendProfileLine();

}  // namespace emu
