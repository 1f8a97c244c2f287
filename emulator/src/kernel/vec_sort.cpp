// Sort and Extract (kernel_proposal.h) in the Atlas A2 layout: an element of the sorted list is
// 8 bytes, the score in the low bytes (4 for float; 2 for half, then 2 reserved bytes) and the
// uint32 index in the high 4. Scores go descending; equal scores keep their input order (the
// documented tie rule of Sort32 and MrgSort). The data work is done in timing-only mode too:
// kernels sort indices and branch on the result.
#include <algorithm>
#include <cstring>
#include <vector>

#include "emu/timing.h"
#include "vec_common.h"

namespace emu {

using namespace vec;

namespace {

constexpr int kGroup = 32;  // elements per Sort32 repeat and per Extract repeat
constexpr int kPair = 8;    // bytes per sorted element

struct Item {
    float score;
    uint32_t index;
    uint16_t raw;  // the half score's bits, written back unchanged
};

// Checks the score type and repeatTime; the number of (score, index) elements they cover.
uint64_t Elements(const char *api, DType t, int32_t repeat)
{
    if (t != DType::F16 && t != DType::F32)
        Fail(api, "element type %s is not supported on Atlas A2 (half, float)", DTypeName(t));
    if (repeat < 0 || repeat > 255) Fail(api, "repeatTime %d is outside [0, 255]", repeat);
    return static_cast<uint64_t>(repeat) * kGroup;
}

bool Overlap(const LocalRef &a, uint64_t an, const LocalRef &b, uint64_t bn)
{
    const auto *pa = static_cast<const uint8_t *>(a.p);
    const auto *pb = static_cast<const uint8_t *>(b.p);
    return pa < pb + bn && pb < pa + an;
}

// Number of MrgSort passes of a full sort of `repeat` sorted groups (4 lists merged per pass).
int MergePasses(int32_t repeat)
{
    int passes = 0;
    for (int32_t lists = repeat; lists > 1; lists = (lists + 3) / 4) ++passes;
    return passes;
}

}  // namespace

void VecSort(const char *api, DType t, LocalRef dst, LocalRef concat, LocalRef index, LocalRef tmp, int32_t repeat,
             bool full)
{
    const uint64_t n = Elements(api, t, repeat);
    if (n == 0 || !Present(dst)) return;
    const int e = DTypeSize(t);
    CheckOperand(api, "concat", concat, n * e);
    CheckOperand(api, "index", index, n * 4);
    CheckOperand(api, "dst", dst, n * kPair);
    if (Overlap(dst, n * kPair, concat, n * e) || Overlap(dst, n * kPair, index, n * 4))
        Fail(api, "dst overlaps concat or index (the sorted elements would overwrite unread input)");
    if (full) {
        CheckOperand(api, "dst (tmp)", tmp, n * kPair);
        if (Overlap(tmp, n * kPair, dst, n * kPair) || Overlap(tmp, n * kPair, concat, n * e) ||
            Overlap(tmp, n * kPair, index, n * 4))
            Fail(api, "tmp overlaps dst, concat or index");
    }
    // Sort32 per group, then (full) per pass a copy of the list into tmp and the 4-way merges.
    TimeVector(VClass::Sort32, kPair, static_cast<uint64_t>(repeat), api);
    uint64_t bytes = n * (e + 4 + kPair), repeats = static_cast<uint64_t>(repeat);
    if (full) {
        const int passes = MergePasses(repeat);
        const uint64_t copyRepeats = (n * kPair + 255) / 256;
        TimeVector(VClass::Simple, 4, copyRepeats, api);
        for (int p = 0; p < passes; ++p) {
            TimeVector(VClass::MrgSort, kPair, static_cast<uint64_t>(repeat), api);
            TimeVector(VClass::Simple, 4, copyRepeats, api);
        }
        bytes += static_cast<uint64_t>(passes) * n * kPair * 4;
        repeats += static_cast<uint64_t>(passes) * (repeat + 2 * copyRepeats) + copyRepeats;
    }
    std::vector<Item> items(n);
    const auto *sc = static_cast<const uint8_t *>(concat.p);
    const auto *ix = static_cast<const uint8_t *>(index.p);
    for (uint64_t i = 0; i < n; ++i) {
        Item &it = items[i];
        std::memcpy(&it.index, ix + i * 4, 4);
        if (t == DType::F16) {
            std::memcpy(&it.raw, sc + i * 2, 2);
            it.score = HalfBitsToFloat(it.raw);
        } else {
            std::memcpy(&it.score, sc + i * 4, 4);
            it.raw = 0;
        }
        if (it.score != it.score)
            Fail(api, "score %llu is NaN (the hardware's order of NaN scores is not modelled)", (unsigned long long)i);
    }
    auto desc = [](const Item &a, const Item &b) { return a.score > b.score; };
    if (full) {
        std::stable_sort(items.begin(), items.end(), desc);
    } else {
        for (uint64_t g = 0; g < n; g += kGroup) std::stable_sort(items.begin() + g, items.begin() + g + kGroup, desc);
    }
    auto *out = static_cast<uint8_t *>(dst.p);
    for (uint64_t i = 0; i < n; ++i) {
        uint8_t *p = out + i * kPair;
        std::memset(p, 0, kPair);
        if (t == DType::F16)
            std::memcpy(p, &items[i].raw, 2);
        else
            std::memcpy(p, &items[i].score, 4);
        std::memcpy(p + 4, &items[i].index, 4);
    }
    if (full) std::memcpy(tmp.p, dst.p, n * kPair);  // the last pass leaves the list in tmp as well
    Count(Pipe::V, bytes, repeats);
}

void VecExtract(const char *api, DType t, LocalRef dstValue, LocalRef dstIndex, LocalRef sorted, int32_t repeat)
{
    const uint64_t n = Elements(api, t, repeat);
    if (n == 0 || !Present(dstValue)) return;
    const int e = DTypeSize(t);
    CheckOperand(api, "sorted", sorted, n * kPair);
    CheckOperand(api, "dstValue", dstValue, n * e);
    CheckOperand(api, "dstIndex", dstIndex, n * 4);
    if (Overlap(dstValue, n * e, sorted, n * kPair) || Overlap(dstIndex, n * 4, sorted, n * kPair) ||
        Overlap(dstValue, n * e, dstIndex, n * 4))
        Fail(api, "dstValue, dstIndex and sorted must not overlap");
    TimeVector(VClass::Simple, kPair, static_cast<uint64_t>(repeat), api);
    std::vector<uint8_t> in(static_cast<const uint8_t *>(sorted.p), static_cast<const uint8_t *>(sorted.p) + n * kPair);
    auto *v = static_cast<uint8_t *>(dstValue.p);
    auto *ix = static_cast<uint8_t *>(dstIndex.p);
    for (uint64_t i = 0; i < n; ++i) {
        std::memcpy(v + i * e, in.data() + i * kPair, e);
        std::memcpy(ix + i * 4, in.data() + i * kPair + 4, 4);
    }
    Count(Pipe::V, n * (kPair + e + 4), static_cast<uint64_t>(repeat));
}

}  // namespace emu
