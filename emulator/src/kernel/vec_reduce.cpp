// Reductions and Brcb (asc-devkit `include/basic_api/kernel_operator_vec_reduce_intf.h`, `kernel_operator_vec_brcb_intf.h`). Sums use the adjacent-pair tree of
// the docs with every addition rounded in the element type; max/min keep the first index.
#include <algorithm>
#include <vector>

#include "vec_common.h"

namespace emu {

using namespace vec;

namespace {

float Ld(DType t, const uint8_t *p) { return t == DType::F16 ? Elem<half>::Ld(p) : Elem<float>::Ld(p); }
void St(DType t, uint8_t *p, float v)
{
    if (t == DType::F16)
        Elem<half>::St(p, v);
    else
        Elem<float>::St(p, v);
}
float RoundT(DType t, float v)
{
    uint8_t b[4];
    St(t, b, v);
    return Ld(t, b);
}

// Adjacent-pair tree over count (<= 128) values, padded with zeros to a power of two,
// every addition rounded in t. Works in place on a copy.
float TreeSum(DType t, const float *in, size_t count)
{
    if (count == 0) return 0;
    float v[128];
    size_t n = 1;
    while (n < count) n *= 2;
    for (size_t i = 0; i < n; ++i) v[i] = i < count ? in[i] : 0.0f;
    const bool f32 = t == DType::F32;
    while (n > 1) {
        for (size_t i = 0; i < n / 2; ++i) v[i] = f32 ? v[2 * i] + v[2 * i + 1] : RoundT(t, v[2 * i] + v[2 * i + 1]);
        n /= 2;
    }
    return v[0];
}

struct Best {
    float value;
    uint32_t index;
    bool any;
};
void Consider(Best &b, float v, uint32_t idx, int kind)
{
    if (!b.any) {
        b = {v, idx, true};
        return;
    }
    if (b.value != b.value) return;  // NaN already wins
    const bool better = (v != v) || (kind == 0 ? v > b.value : v < b.value);
    if (better) {
        b.value = v;
        b.index = idx;
    }
}

void CheckType(const char *api, DType t)
{
    if (t != DType::F16 && t != DType::F32)
        Fail(api, "element type %s is not supported on Atlas A2 (half, float)", DTypeName(t));
}

void StoreIndex(DType t, uint8_t *p, uint32_t idx)
{
    if (t == DType::F16) {
        const uint16_t v = static_cast<uint16_t>(idx);
        std::memcpy(p, &v, 2);
    } else
        std::memcpy(p, &idx, 4);
}

}  // namespace

void VecWholeReduce(const char *api, int kind, DType t, LocalRef dst, LocalRef src, uint32_t repeat, uint32_t dstRep,
                    uint32_t srcBlk, uint32_t srcRep, int order)
{
    if (!Present(dst)) return;
    CheckType(api, t);
    if (repeat > 255) Fail(api, "repeatTime %u exceeds 255", repeat);
    const int e = DTypeSize(t);
    const Lanes l = ResolveLanes(e, repeat);
    CheckOperand(api, "src", src, OperandSpan(l, e, srcBlk, srcRep));
    // Output slot per repeat: value+index pairs, a value, or a 4-byte index.
    const uint64_t slot = kind == 2 ? e : (order == 3 ? 4 : (order == 2 ? e : 2 * e));
    const uint64_t dstSpan = l.repeats == 0 ? 0 : (static_cast<uint64_t>(l.repeats) - 1) * dstRep * slot + slot;
    CheckOperand(api, "dst", dst, dstSpan, kind == 2 ? e : 4);
    TimeVector(VClass::Reduce, e, l.repeats, api);
    if (TimingOnly()) return Count(Pipe::V, ActiveLanes(l) * e, l.repeats);
    auto *d = static_cast<uint8_t *>(dst.p);
    for (uint32_t r = 0; r < l.repeats; ++r) {
        const uint8_t *base = static_cast<uint8_t *>(src.p);
        uint8_t *out = d + static_cast<uint64_t>(r) * dstRep * slot;
        if (kind == 2) {
            float v[128];
            for (int i = 0; i < l.L; ++i)
                v[i] = l.active(r, i) ? Ld(t, base + LaneOffset(r, i, e, srcBlk, srcRep)) : 0.0f;
            St(t, out, TreeSum(t, v, l.L));
            continue;
        }
        Best b{0, 0, false};
        for (int i = 0; i < l.L; ++i)
            if (l.active(r, i)) Consider(b, Ld(t, base + LaneOffset(r, i, e, srcBlk, srcRep)), i, kind);
        if (!b.any) continue;
        switch (order) {
            case 0:
                St(t, out, b.value);
                StoreIndex(t, out + e, b.index);
                break;
            case 1:
                StoreIndex(t, out, b.index);
                St(t, out + e, b.value);
                break;
            case 2:
                St(t, out, b.value);
                break;
            default:
                std::memcpy(out, &b.index, 4);
                break;
        }
    }
    Count(Pipe::V, ActiveLanes(l) * e, l.repeats);
}

void VecBlockReduce(const char *api, int kind, DType t, LocalRef dst, LocalRef src, uint32_t repeat, uint32_t dstRep,
                    uint32_t srcBlk, uint32_t srcRep)
{
    if (!Present(dst)) return;
    CheckType(api, t);
    if (repeat > 255) Fail(api, "repeatTime %u exceeds 255", repeat);
    const int e = DTypeSize(t);
    const int epb = 32 / e;
    const Lanes l = ResolveLanes(e, repeat);
    CheckOperand(api, "src", src, OperandSpan(l, e, srcBlk, srcRep));
    const uint64_t dstSpan = l.repeats == 0 ? 0 : (static_cast<uint64_t>(l.repeats) - 1) * dstRep * 8 * e + 8ull * e;
    CheckOperand(api, "dst", dst, dstSpan, t == DType::F16 ? 16 : 32);
    TimeVector(VClass::BlockReduce, e, l.repeats, api);
    if (TimingOnly()) return Count(Pipe::V, ActiveLanes(l) * e, l.repeats);
    for (uint32_t r = 0; r < l.repeats; ++r)
        for (int blk = 0; blk < 8; ++blk) {
            float v[16] = {};
            Best b{0, 0, false};
            for (int j = 0; j < epb; ++j) {
                const int i = blk * epb + j;
                if (!l.active(r, i)) continue;
                const float x = Ld(t, static_cast<uint8_t *>(src.p) + LaneOffset(r, i, e, srcBlk, srcRep));
                v[j] = x;
                Consider(b, x, j, kind);
            }
            if (!b.any) continue;  // an all-masked block is not written on A2
            uint8_t *out = static_cast<uint8_t *>(dst.p) + (static_cast<uint64_t>(r) * dstRep * 8 + blk) * e;
            St(t, out, kind == 2 ? TreeSum(t, v, epb) : b.value);
        }
    Count(Pipe::V, ActiveLanes(l) * e, l.repeats);
}

void VecReduce(const char *api, int kind, DType t, LocalRef dst, LocalRef src, LocalRef tmp, uint64_t count,
               uint32_t repeat, uint32_t srcRep, bool calIndex)
{
    if (!Present(dst)) return;
    CheckType(api, t);
    const int e = DTypeSize(t);
    const int L = 256 / e;
    thread_local std::vector<float> vals;
    thread_local std::vector<uint32_t> idx;
    vals.clear();
    idx.clear();
    if (repeat == 0) {  // level-2 count form
        if (count == 0) return;
        CheckOperand(api, "src", src, count * e);
        vals.resize(count);
        const auto *p = static_cast<const uint8_t *>(src.p);
        for (uint64_t i = 0; i < count; ++i) vals[i] = Ld(t, p + i * e);
        if (kind != 2) {
            idx.resize(count);
            for (uint64_t i = 0; i < count; ++i) idx[i] = static_cast<uint32_t>(i);
        }
    } else {
        const Lanes l = ResolveLanes(e, repeat);
        CheckOperand(api, "src", src, OperandSpan(l, e, 1, srcRep));
        for (uint32_t r = 0; r < l.repeats; ++r)
            for (int i = 0; i < L; ++i)
                if (l.active(r, i)) {
                    const uint64_t off = LaneOffset(r, i, e, 1, srcRep);
                    vals.push_back(Ld(t, static_cast<uint8_t *>(src.p) + off));
                    idx.push_back(static_cast<uint32_t>(off / e));
                }
        EndCount();  // these forms leave the mask register all ones, as the level-2 forms do
    }
    CheckOperand(api, "dst", dst, calIndex ? 2ull * e : e, 2);
    if (tmp.p != nullptr && Present(tmp)) CheckOperand(api, "sharedTmpBuffer", tmp, 0);
    uint8_t *out = static_cast<uint8_t *>(dst.p);
    if (kind == 2) {
        // First level: one tree per repeat of L lanes; then the partial sums again, L at a time.
        thread_local std::vector<float> level, next;
        level.assign(vals.begin(), vals.end());
        do {
            next.clear();
            for (size_t i = 0; i < level.size(); i += L)
                next.push_back(TreeSum(t, level.data() + i, std::min(level.size() - i, static_cast<size_t>(L))));
            level.swap(next);
        } while (level.size() > 1);
        St(t, out, level.empty() ? 0.0f : level[0]);
    } else {
        Best b{0, 0, false};
        for (size_t i = 0; i < vals.size(); ++i) Consider(b, vals[i], idx[i], kind);
        St(t, out, b.value);
        if (calIndex) StoreIndex(t, out + e, b.index);
    }
    // Level 2: the reduction repeats plus one more pass over the partial results.
    TimeVector(VClass::Reduce, e, (vals.size() + L - 1) / L + 1, api);
    Count(Pipe::V, vals.size() * e, (vals.size() + L - 1) / L + 1);
}

void VecBrcb(const char *api, DType t, LocalRef dst, LocalRef src, uint32_t repeat, uint32_t dstBlk, uint32_t dstRep)
{
    if (!Present(dst) || repeat == 0) return;
    const int e = DTypeSize(t);
    if (e != 2 && e != 4) Fail(api, "element type %s is not supported (b16/b32 only)", DTypeName(t));
    CheckOperand(api, "src", src, static_cast<uint64_t>(repeat) * 8 * e);
    const uint64_t span = (static_cast<uint64_t>(repeat) - 1) * dstRep * 32 + 7ull * dstBlk * 32 + 32;
    CheckOperand(api, "dst", dst, span);
    SetMaskBits(~0ull, ~0ull);  // Brcb resets the mask (the implementation calls ResetMask)
    TimeVector(VClass::Brcb, e, repeat, api);
    if (TimingOnly()) return Count(Pipe::V, static_cast<uint64_t>(repeat) * (8 * e + 256), repeat);
    const int epb = 32 / e;
    for (uint32_t r = 0; r < repeat; ++r)
        for (int j = 0; j < 8; ++j) {
            const uint8_t *v = static_cast<uint8_t *>(src.p) + (static_cast<uint64_t>(r) * 8 + j) * e;
            uint8_t *blk = static_cast<uint8_t *>(dst.p) +
                           (static_cast<uint64_t>(r) * dstRep + static_cast<uint64_t>(j) * dstBlk) * 32;
            for (int k = 0; k < epb; ++k) std::memcpy(blk + k * e, v, e);
        }
    Count(Pipe::V, static_cast<uint64_t>(repeat) * (8 * e + 256), repeat);
}

}  // namespace emu
