// The L2 of the timeline model (see l2_model.h): a clock counts the lines brought into L2
// (inserted) in this launch; per 512 B line the clock value at its last touch (0: never). A
// touch hits when fewer than `capacity` lines were inserted since the line's last touch — LRU
// with insertions as the measure of distance (hits of other lines do not age a line), no sets
// or ways. A working set that fits stays resident; a stream larger than L2 always misses. Positions live in
// one array of atomics per 2 MiB region of host addresses; the region map is guarded by a mutex
// and cached per thread, so a DMA costs one map look-up per region it crosses.
#include "l2_model.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace emu {
namespace {

constexpr int kRegionShift = 21;  // 2 MiB regions

struct Region {
    std::unique_ptr<std::atomic<uint32_t>[]> last;
};

std::mutex g_mu;
std::unordered_map<uint64_t, Region> g_regions;
std::atomic<uint64_t> g_clock{1};       // lines inserted into L2 so far in this launch, + 1
std::atomic<uint64_t> g_touchedLines{0};
std::atomic<uint64_t> g_hbmLines{0};    // lines the L2 read from HBM (first touch or after eviction)
std::atomic<uint64_t> g_generation{1};
bool g_perCore = false;  // ASCEND_EMU_L2=per_core: a core's own first touch is its miss
int g_lineShift = 9;
uint64_t g_capacityLines = 1;

thread_local uint64_t t_gen = 0, t_region = ~0ull;
thread_local std::atomic<uint32_t> *t_last = nullptr;
thread_local uint64_t t_seenGen = 0;
thread_local std::unordered_set<uint64_t> t_seen;  // per_core mode: lines this core touched

std::atomic<uint32_t> *Last(uint64_t region) {
    const uint64_t gen = g_generation.load(std::memory_order_relaxed);
    if (t_gen == gen && t_region == region) return t_last;
    std::lock_guard<std::mutex> lock(g_mu);
    Region &r = g_regions[region];
    if (!r.last) {
        const size_t lines = size_t{1} << (kRegionShift - g_lineShift);
        r.last.reset(new std::atomic<uint32_t>[lines]);
        for (size_t i = 0; i < lines; ++i) r.last[i].store(0, std::memory_order_relaxed);
    }
    t_gen = gen;
    t_region = region;
    t_last = r.last.get();
    return t_last;
}

// Touches the lines of [p, p + bytes); returns the bytes that fell in lines not resident.
uint64_t Touch(const void *p, uint64_t bytes, bool read) {
    const uint64_t a = reinterpret_cast<uintptr_t>(p), e = a + bytes;
    const uint64_t lineBytes = uint64_t{1} << g_lineShift;
    const uint64_t first = a >> g_lineShift, last = (e - 1) >> g_lineShift;
    uint64_t missBytes = 0, fresh = 0, fetched = 0;
    if (g_perCore && t_seenGen != g_generation.load(std::memory_order_relaxed)) {
        t_seen.clear();
        t_seenGen = g_generation.load(std::memory_order_relaxed);
    }
    for (uint64_t line = first; line <= last; ++line) {
        const uint64_t inRegion = line & ((uint64_t{1} << (kRegionShift - g_lineShift)) - 1);
        std::atomic<uint32_t> &slot = Last(line >> (kRegionShift - g_lineShift))[inRegion];
        const uint32_t prev = slot.load(std::memory_order_relaxed);
        uint32_t now = static_cast<uint32_t>(g_clock.load(std::memory_order_relaxed));
        const bool resident = prev != 0 && static_cast<uint32_t>(now - prev) < g_capacityLines;
        if (!resident) now = static_cast<uint32_t>(g_clock.fetch_add(1, std::memory_order_relaxed) + 1);
        slot.store(now, std::memory_order_relaxed);
        if (prev == 0) ++fresh;
        if (!resident) ++fetched;
        if (g_perCore ? t_seen.insert(line).second : !resident) {
            const uint64_t lo = std::max(a, line << g_lineShift), hi = std::min(e, (line + 1) * lineBytes);
            missBytes += hi - lo;
        }
    }
    if (fresh) g_touchedLines.fetch_add(fresh, std::memory_order_relaxed);
    if (read && fetched) g_hbmLines.fetch_add(fetched, std::memory_order_relaxed);
    return missBytes;
}

}  // namespace

void L2Reset(double lineBytes, double capacityBytes, bool perCore) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_perCore = perCore;
    g_regions.clear();
    g_clock = 1;
    g_touchedLines = 0;
    g_hbmLines = 0;
    g_generation.fetch_add(1);
    int shift = 5;
    while ((uint64_t{1} << (shift + 1)) <= static_cast<uint64_t>(lineBytes) && shift < 20) ++shift;
    g_lineShift = shift;
    g_capacityLines = static_cast<uint64_t>(capacityBytes) >> shift;
    if (g_capacityLines == 0) g_capacityLines = 1;
}

uint64_t L2Read(const void *p, uint64_t bytes) { return bytes ? Touch(p, bytes, true) : 0; }

void L2Write(const void *p, uint64_t bytes) {
    if (bytes) Touch(p, bytes, false);
}

uint64_t L2TouchedBytes() { return g_touchedLines.load() << g_lineShift; }

uint64_t L2HbmReadBytes() { return g_hbmLines.load() << g_lineShift; }

}  // namespace emu
