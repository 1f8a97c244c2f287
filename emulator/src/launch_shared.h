// What the launcher (launch.cpp) and the blocking cross-core primitives (cross_core_sync.cpp)
// share: a launch's stop state, one wave's shared state, and the waiting and fault helpers.
// Internal to the emulator library.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "emu/core.h"
#include "emu/race.h"

namespace emu {

// How one launch ends early: the first fault's message, or a cancel from the host.
struct LaunchStop {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> threadsDone{0};
    uint64_t threadsPerBlock = 1, blocks = 0;
    std::mutex mu;
    std::string message;
    // IBSet / IBWait: per GM slot, the last write a call made (the id of its timeline record, the
    // clock it published to the hazard checker). Launch-wide, as the slots are; guarded by the
    // running wave's LaunchShared::mu (waves run one at a time).
    struct SlotWrite {
        uint64_t timeId = 0;
        RaceClock clock;
        int32_t value = -1;  // what the call wrote (IBSet 1, IBWait 0)
    };
    std::unordered_map<const void *, SlotWrite> slotWrites;
};

// One wave of cores running together, and everything they block on.
struct LaunchShared {
    std::mutex mu;
    std::condition_variable cv;
    int blocks = 0;       // AI cores in this wave
    int firstBlock = 0;   // block index of the wave's first core
    int aivPerBlock = 0;  // 0, 1 or 2
    bool hasAic = false;
    int alive = 0, blocked = 0;
    struct Waiter {
        bool blocked = false;
        std::function<bool()> ready;
        std::string what;
        // IBSet / IBWait: the slot word the wait is on and what its value means, so that a
        // deadlock report names the value the slot holds when it is reported.
        const int32_t *word = nullptr;
        std::string wordNote;
        CoreCtx *ctx = nullptr;
    };
    std::vector<Waiter> waiters;  // by thread slot: block * 3 + (0 aic | 1 aiv0 | 2 aiv1)
    std::vector<int> counter;     // cross-core flag counters, [slot][flag]
    std::vector<int> pending[3];  // per mode 0/1/2: a core's group sets not yet matched, [slot][flag]
    int barArrived[3] = {}, barGen[3] = {};
    // Timeline model: the ids of a core's unmatched group sets (emu/timing.h).
    std::vector<std::deque<uint64_t>> pendingIds[3];
    // Hazard checker (emu/race.h, GM part): the clocks the pending sets of each flag counter
    // published, [slot][flag], consumed by the waits in order; per mode, the clocks of a core's
    // unmatched group sets; per SyncAll group, the barrier being joined and the last complete one.
    std::vector<std::deque<RaceClock>> raceCounter;
    std::vector<std::deque<RaceClock>> racePending[3];
    // Who made each pending set (for the message about a set never waited), parallel to the above.
    std::vector<std::deque<std::string>> raceCounterFrom;
    std::vector<std::deque<std::string>> racePendingFrom[3];
    RaceClock raceBar[3], raceBarDone[3];
    LaunchStop *stop = nullptr;
};

// Internal to the launcher: its own namespace, so that no program the emulator is compiled into
// can clash with these names in namespace emu.
namespace launch_internal {

// Thrown through a core's kernel code to end its part of a stopped launch; caught by the launcher.
struct CoreStopped {};

// Whether misuses raise a LaunchFault in the host (kRaise) instead of aborting.
bool Raising();
// Records `message` as the launch's fault (the first one wins) and stops every core of it.
void StopLaunch(LaunchStop &st, const std::string &message);
// A misuse on a core thread in kRaise mode: stop the launch and unwind this core's kernel code.
[[noreturn]] void RaiseOnCore(const std::string &message);

// A core's thread slot in its wave: block * 3 + (0 aic | 1 aiv0 | 2 aiv1).
inline int Slot(const CoreCtx &c) { return (c.block - c.shared->firstBlock) * 3 + (c.kind == kAic ? 0 : 1 + c.sub); }

// Marks every blocked waiter whose condition now holds as runnable. Caller holds s.mu.
void WakeLocked(LaunchShared &s);
// Reports a deadlock when every live core of the wave is blocked. Caller holds s.mu.
void CheckAllBlockedLocked(LaunchShared &s);
// Under the hazard checker, fails the launch if a cross-core set was never consumed.
void CheckCrossFlagsWaited(LaunchShared &s, LaunchStop &stop, const char *kernel);

}  // namespace launch_internal

using namespace launch_internal;

}  // namespace emu
