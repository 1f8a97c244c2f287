// The device L2 as the timeline model sees it: a first-touch set of lines shared by every core
// of a launch. A GM read of a line nobody touched yet in this launch comes from HBM; later reads
// hit L2 while the touched bytes fit in its capacity (beyond it, reuse hits only in the ratio
// capacity / touched bytes: no set associativity or replacement order is modelled).
// Writes land in L2 and make their lines resident. The L2 starts cold at every launch.
#pragma once
#include <cstdint>

namespace emu {

void L2Reset(double lineBytes, double capacityBytes);
// Returns the bytes of [p, p + bytes) that come from HBM.
uint64_t L2Read(const void *p, uint64_t bytes);
void L2Write(const void *p, uint64_t bytes);
uint64_t L2TouchedBytes();
// Bytes the L2 read from HBM in this launch: whole lines (deterministic, unlike which core paid).
uint64_t L2HbmReadBytes();

}  // namespace emu
