// First-touch L2 (see l2_model.h): a map from 2 MiB regions of host addresses to bitmaps of
// touched lines. Bits are set with atomics; the map itself is guarded by a mutex and cached per
// thread, so a DMA costs one map look-up per region it crosses.
#include "l2_model.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace emu {
namespace {

constexpr int kRegionShift = 21;  // 2 MiB regions

struct Region {
    std::unique_ptr<std::atomic<uint64_t>[]> bits;
};

std::mutex g_mu;
std::unordered_map<uint64_t, Region> g_regions;
std::atomic<uint64_t> g_touchedLines{0};
std::atomic<uint64_t> g_hbmLines{0};  // lines read from HBM (first touch by a read, or re-fetch over capacity)
std::atomic<uint64_t> g_generation{1};
int g_lineShift = 9;
uint64_t g_capacityLines = 1;

thread_local uint64_t t_gen = 0, t_region = ~0ull;
thread_local std::atomic<uint64_t> *t_bits = nullptr;

std::atomic<uint64_t> *Bits(uint64_t region) {
    const uint64_t gen = g_generation.load(std::memory_order_relaxed);
    if (t_gen == gen && t_region == region) return t_bits;
    std::lock_guard<std::mutex> lock(g_mu);
    Region &r = g_regions[region];
    if (!r.bits) {
        const size_t words = (size_t{1} << (kRegionShift - g_lineShift)) / 64 + 1;
        r.bits.reset(new std::atomic<uint64_t>[words]);
        for (size_t i = 0; i < words; ++i) r.bits[i].store(0, std::memory_order_relaxed);
    }
    t_gen = gen;
    t_region = region;
    t_bits = r.bits.get();
    return t_bits;
}

// Marks the lines of [p, p + bytes); returns the bytes that fell in lines not touched before.
uint64_t Touch(const void *p, uint64_t bytes, bool read) {
    const uint64_t a = reinterpret_cast<uintptr_t>(p), e = a + bytes;
    const uint64_t lineBytes = uint64_t{1} << g_lineShift;
    uint64_t fresh = 0, freshLines = 0;
    for (uint64_t line = a >> g_lineShift; (line << g_lineShift) < e; ++line) {
        const uint64_t lo = std::max(a, line << g_lineShift), hi = std::min(e, (line + 1) * lineBytes);
        const uint64_t inRegion = line & ((uint64_t{1} << (kRegionShift - g_lineShift)) - 1);
        std::atomic<uint64_t> *bits = Bits(line >> (kRegionShift - g_lineShift));
        const uint64_t mask = uint64_t{1} << (inRegion % 64);
        if ((bits[inRegion / 64].fetch_or(mask, std::memory_order_relaxed) & mask) == 0) {
            fresh += hi - lo;
            ++freshLines;
        }
    }
    if (freshLines) {
        g_touchedLines.fetch_add(freshLines, std::memory_order_relaxed);
        if (read) g_hbmLines.fetch_add(freshLines, std::memory_order_relaxed);
    }
    return fresh;
}

}  // namespace

void L2Reset(double lineBytes, double capacityBytes) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_regions.clear();
    g_touchedLines = 0;
    g_hbmLines = 0;
    g_generation.fetch_add(1);
    int shift = 5;
    while ((uint64_t{1} << (shift + 1)) <= static_cast<uint64_t>(lineBytes) && shift < 20) ++shift;
    g_lineShift = shift;
    g_capacityLines = static_cast<uint64_t>(capacityBytes) >> shift;
    if (g_capacityLines == 0) g_capacityLines = 1;
}

uint64_t L2Read(const void *p, uint64_t bytes) {
    const uint64_t miss = Touch(p, bytes, true);
    const uint64_t touched = g_touchedLines.load(std::memory_order_relaxed);
    if (touched <= g_capacityLines) return miss;
    // Over capacity: only capacity/touched of the re-read bytes are still resident.
    const double resident = static_cast<double>(g_capacityLines) / static_cast<double>(touched);
    const uint64_t refetch = static_cast<uint64_t>((bytes - miss) * (1.0 - resident));
    g_hbmLines.fetch_add((refetch + (uint64_t{1} << g_lineShift) - 1) >> g_lineShift, std::memory_order_relaxed);
    return miss + refetch;
}

void L2Write(const void *p, uint64_t bytes) { Touch(p, bytes, false); }

uint64_t L2HbmReadBytes() { return g_hbmLines.load() << g_lineShift; }

uint64_t L2TouchedBytes() { return g_touchedLines.load() << g_lineShift; }

}  // namespace emu
