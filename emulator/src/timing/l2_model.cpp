// The L2 of the timeline model (see l2_model.h): a clock counts the lines brought into L2
// (inserted) in this launch; per line the clock value at its last touch (0: never). A touch hits
// when fewer than `capacity` lines were inserted since the line's last touch - LRU with
// insertions as the measure of distance (hits of other lines do not age a line), no sets or
// ways. A working set that fits stays resident; a stream larger than L2 always misses. Positions
// live in one array per 2 MiB region of host addresses, found through a map (and the last region
// used), so a DMA costs one look-up per region it crosses.
#include "l2_model.h"

#include <algorithm>
#include <memory>
#include <unordered_map>

namespace emu {
namespace {

constexpr int kRegionShift = 21;  // 2 MiB regions

std::unordered_map<uint64_t, std::unique_ptr<uint32_t[]>> g_regions;
uint64_t g_clock = 1;     // lines inserted into L2 so far in this launch, + 1
uint64_t g_hbmLines = 0;  // lines the L2 read from HBM (first touch or after eviction)
int g_lineShift = 9;
uint64_t g_capacityLines = 1;
uint64_t g_lastRegion = ~0ull;
uint32_t *g_last = nullptr;

uint32_t *Region(uint64_t region)
{
    if (region == g_lastRegion) return g_last;
    auto &r = g_regions[region];
    if (!r) r.reset(new uint32_t[size_t{1} << (kRegionShift - g_lineShift)]());
    g_lastRegion = region;
    g_last = r.get();
    return g_last;
}

// Touches the lines of [p, p + bytes); returns the bytes that fell in lines not resident
// (*missedLines: how many such lines).
uint64_t Touch(const void *p, uint64_t bytes, bool read, uint64_t *missedLines)
{
    const uint64_t a = reinterpret_cast<uintptr_t>(p), e = a + bytes;
    const uint64_t lineBytes = uint64_t{1} << g_lineShift;
    const uint64_t first = a >> g_lineShift, last = (e - 1) >> g_lineShift;
    const uint64_t inRegionMask = (uint64_t{1} << (kRegionShift - g_lineShift)) - 1;
    uint64_t missBytes = 0;
    for (uint64_t line = first; line <= last; ++line) {
        uint32_t &slot = Region(line >> (kRegionShift - g_lineShift))[line & inRegionMask];
        const uint32_t prev = slot;
        const bool resident = prev != 0 && static_cast<uint32_t>(g_clock) - prev < g_capacityLines;
        if (!resident) {
            ++g_clock;
            if (read) ++g_hbmLines;
            ++*missedLines;
            const uint64_t lo = std::max(a, line << g_lineShift), hi = std::min(e, (line + 1) * lineBytes);
            missBytes += hi - lo;
        }
        slot = static_cast<uint32_t>(g_clock);
    }
    return missBytes;
}

}  // namespace

void L2Reset(double lineBytes, double capacityBytes)
{
    g_regions.clear();
    g_lastRegion = ~0ull;
    g_last = nullptr;
    g_clock = 1;
    g_hbmLines = 0;
    int shift = 5;
    while ((uint64_t{1} << (shift + 1)) <= static_cast<uint64_t>(lineBytes) && shift < 20) ++shift;
    g_lineShift = shift;
    g_capacityLines = static_cast<uint64_t>(capacityBytes) >> shift;
    if (g_capacityLines == 0) g_capacityLines = 1;
}

uint64_t L2Read(const void *p, uint64_t bytes, uint64_t *hbmLineBytes)
{
    uint64_t lines = 0;
    const uint64_t miss = bytes ? Touch(p, bytes, true, &lines) : 0;
    *hbmLineBytes += lines << g_lineShift;
    return miss;
}

void L2Write(const void *p, uint64_t bytes)
{
    uint64_t lines = 0;
    if (bytes) Touch(p, bytes, false, &lines);
}

uint64_t L2HbmReadBytes() { return g_hbmLines << g_lineShift; }

}  // namespace emu
