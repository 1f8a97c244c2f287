// The device L2 as the timeline model sees it, shared by every core of a launch: a GM read of a
// line nobody touched yet in this launch comes from HBM; a later read hits L2 when fewer than
// `capacity` bytes of other lines were brought into L2 since the line's last touch (LRU by
// reuse distance in inserted lines, no sets or ways), else it comes from HBM again. Writes land in L2 and make their lines resident (their
// write-back to HBM is not counted). The L2 starts cold at every launch.
#pragma once
#include <cstdint>

namespace emu {

// perCore (env ASCEND_EMU_L2=per_core): which core pays a miss no longer depends on the order
// the host threads run in: every core's own first touch of a line is a miss for it (it errs
// towards misses for data cores share); the HBM bytes stay the device-wide count.
void L2Reset(double lineBytes, double capacityBytes, bool perCore);
// Returns the bytes of [p, p + bytes) that come from HBM.
uint64_t L2Read(const void *p, uint64_t bytes);
void L2Write(const void *p, uint64_t bytes);
uint64_t L2TouchedBytes();
// Bytes the L2 read from HBM in this launch: whole lines (deterministic, unlike which core paid).
uint64_t L2HbmReadBytes();

}  // namespace emu
