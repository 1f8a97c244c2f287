// The device L2 as the timeline model sees it, shared by every core of a launch: a GM read of a
// line nobody touched yet in this launch comes from HBM; a later read hits L2 when fewer than
// `capacity` bytes of other lines were brought into L2 since the line's last touch (LRU by
// reuse distance in inserted lines, no sets or ways), else it comes from HBM again. Writes land
// in L2 and make their lines resident (their write-back to HBM is not counted). The L2 starts
// cold at every launch. Only the replay (one thread at a time) calls it, in modelled-time order.
#pragma once
#include <cstdint>

namespace emu {

void L2Reset(double lineBytes, double capacityBytes);
// Returns the bytes of [p, p + bytes) that come from HBM; adds the whole lines the L2 reads from
// HBM for them to *hbmLineBytes.
uint64_t L2Read(const void *p, uint64_t bytes, uint64_t *hbmLineBytes);
void L2Write(const void *p, uint64_t bytes);
// Bytes the L2 read from HBM in this launch (whole lines).
uint64_t L2HbmReadBytes();

}  // namespace emu
