// Device-wide bandwidth shared over time windows (see bandwidth.h).
#include "bandwidth.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace emu {
namespace {

// Windows kept behind the newest one. The replay takes transfers in start order per core but a
// core's pipes run apart by at most a few thousand cycles, so a transfer older than the kept
// history does not occur in practice; if one does, it runs at its own rate.
constexpr size_t kHistory = size_t{1} << 16;

}  // namespace

void BandwidthLedger::Reset(double bytesPerCycle, double windowCycles)
{
    window_ = windowCycles > 0 && bytesPerCycle > 0 ? windowCycles : 0;
    room_ = bytesPerCycle * window_;
    base_ = 0;
    used_.clear();
    delay_ = 0;
}

double &BandwidthLedger::Used(int64_t window)
{
    if (window - base_ >= static_cast<int64_t>(kHistory)) {  // keep the newest kHistory windows
        const int64_t newBase = window - static_cast<int64_t>(kHistory) + 1;
        const int64_t drop = std::min<int64_t>(newBase - base_, static_cast<int64_t>(used_.size()));
        used_.erase(used_.begin(), used_.begin() + drop);
        base_ = newBase;
    }
    while (static_cast<int64_t>(used_.size()) <= window - base_) used_.push_back(0.0);
    return used_[window - base_];
}

double BandwidthLedger::Take(double start, double bytes, double rate)
{
    if (bytes <= 0 || rate <= 0) return start;
    const double alone = start + bytes / rate;
    if (window_ <= 0) return alone;
    double t = start, left = bytes;
    for (int64_t w = static_cast<int64_t>(std::floor(start / window_));; ++w) {
        const double end = static_cast<double>(w + 1) * window_;
        const bool kept = w >= base_;
        double *used = kept ? &Used(w) : nullptr;
        const double room = kept ? std::max(0.0, room_ - *used) : std::numeric_limits<double>::infinity();
        const double moved = std::min({left, rate * (end - t), room});
        if (used != nullptr) *used += moved;
        left -= moved;
        if (left <= 0) {
            const double done = t + moved / rate;
            delay_ += std::max(0.0, done - alone);
            return std::max(done, alone);
        }
        t = end;
    }
}

}  // namespace emu
