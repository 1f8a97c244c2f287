// Device-wide bandwidth shared over time. HBM and the L2 serve every core of the device, so a
// phase in which many cores stream at their own DMA rate can ask for more than the device
// delivers. The replay charges each GM transfer to a ledger of fixed time windows: a window
// holds at most the device's bytes per cycle times its length, a transfer takes what is left in
// the windows it spans (at most its own rate) and ends later when the windows are full. The
// transfers come in the replay's order (modelled start time), so earlier ones are served first.
// Only the replay (one thread at a time) calls it.
#pragma once
#include <cstdint>
#include <deque>

namespace emu {

class BandwidthLedger {
public:
    // `bytesPerCycle` device-wide; `windowCycles` <= 0 turns the ledger off (transfers run at
    // their own rate; the launch-wide floors still apply).
    void Reset(double bytesPerCycle, double windowCycles);
    // A transfer of `bytes` that moves at `rate` bytes per cycle from `start` on, alone: returns
    // its end once the windows it needs are shared with the transfers charged before it.
    double Take(double start, double bytes, double rate);
    // Cycles transfers ended later than at their own rate, summed over the launch.
    double DelayCycles() const { return delay_; }

private:
    double &Used(int64_t window);

    double room_ = 0;    // bytes per window
    double window_ = 0;  // cycles
    int64_t base_ = 0;   // the window of used_.front()
    std::deque<double> used_;
    double delay_ = 0;
};

}  // namespace emu
