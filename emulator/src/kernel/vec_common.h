// Shared machinery of the vector engine: lane iteration over repeats/blocks with the mask
// register, operand span checks, and element load/store in the compute domain.
#pragma once
#include <cmath>
#include <cstring>

#include "emu/core.h"
#include "emu/race.h"
#include "emu/vec.h"

namespace emu {
namespace vec {

inline const char *BufName(int b)
{
    static const char *n[] = {"GM", "UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return n[b];
}

// Lane activity of one instruction: normal mode (bit pattern, same every repeat) or counter mode.
struct Lanes {
    int L;             // lanes per repeat
    uint32_t repeats;  // repeats to execute
    bool counter;
    uint64_t count;   // counter mode: elements in total
    uint64_t hi, lo;  // normal mode bits
    bool full;        // every lane of every repeat active
    int maxLane(uint32_t r) const
    {  // highest active lane of repeat r, -1 if none
        if (counter) {
            const uint64_t left = count - static_cast<uint64_t>(r) * L;
            return static_cast<int>(left >= static_cast<uint64_t>(L) ? L - 1 : left - 1);
        }
        if (L > 64 && hi != 0) return 127 - __builtin_clzll(hi);
        const uint64_t m = L >= 64 ? lo : (lo & ((1ull << L) - 1));
        return m == 0 ? -1 : 63 - __builtin_clzll(m);
    }
    bool active(uint32_t r, int i) const
    {
        if (counter) return static_cast<uint64_t>(r) * L + i < count;
        return i < 64 ? (lo >> i) & 1 : (hi >> (i - 64)) & 1;
    }
};

// Resolves the mask register for an instruction whose widest element is `wideBytes`.
inline Lanes ResolveLanes(int wideBytes, uint32_t repeat)
{
    const CoreCtx &c = Ctx();
    Lanes l;
    l.L = 256 / wideBytes;
    l.counter = c.maskCounterMode;
    l.hi = c.maskHigh;
    l.lo = c.maskLow;
    if (l.counter) {
        l.count = c.maskLow;
        l.repeats = static_cast<uint32_t>((l.count + l.L - 1) / l.L);
        l.full = l.count % l.L == 0;
    } else {
        l.count = 0;
        l.repeats = repeat;
        l.full = l.L == 128  ? (l.lo == ~0ull && l.hi == ~0ull)
                 : l.L == 64 ? l.lo == ~0ull
                             : (l.lo & ((1ull << l.L) - 1)) == ((1ull << l.L) - 1);
    }
    return l;
}

// Byte offset of lane i of repeat r for an operand with element size es and strides blk/rep.
inline uint64_t LaneOffset(uint32_t r, int i, int es, uint32_t blk, uint32_t rep)
{
    const int epb = 32 / es;
    return static_cast<uint64_t>(r) * rep * 32 + static_cast<uint64_t>(i / epb) * blk * 32 +
           static_cast<uint64_t>(i % epb) * es;
}

// Bytes an operand spans for the instruction (0 when nothing is active).
inline uint64_t OperandSpan(const Lanes &l, int es, uint32_t blk, uint32_t rep)
{
    uint64_t span = 0;
    const int epb = 32 / es;
    auto endOf = [&](uint32_t r) -> uint64_t {
        const int m = l.maxLane(r);
        if (m < 0) return 0;
        if (blk == 0)
            return static_cast<uint64_t>(r) * rep * 32 + static_cast<uint64_t>(m + 1 < epb ? m + 1 : epb) * es;
        return LaneOffset(r, m, es, blk, rep) + es;  // with blk >= 1 the highest lane ends last
    };
    if (l.repeats == 0) return 0;
    // Offsets grow with the repeat index (rep >= 0); the last repeat may be partial, so also
    // look at the one before it and at repeat 0.
    const uint32_t last = l.repeats - 1;
    for (uint32_t r : {0u, last > 0 ? last - 1 : 0u, last}) {
        const uint64_t e = endOf(r);
        span = e > span ? e : span;
    }
    return span;
}

inline bool Present(const LocalRef &r) { return Ctx().mem[r.buf] != nullptr; }

// Checks an operand: in UB, 32-byte aligned, span inside the tensor and the buffer. Operands
// named "dst" are written by the V pipe, all others read (for the hazard checker).
inline void CheckOperand(const char *api, const char *what, const LocalRef &r, uint64_t span, uint64_t align = 32)
{
    if (static_cast<Buf>(r.buf) != Buf::UB)
        Fail(api, "%s must be a vector tensor in UB (VECIN/VECOUT/VECCALC), not %s", what, BufName(r.buf));
    const uint64_t off = LocalOffset(Buf::UB, r.p);
    if (off % align != 0)
        Fail(api, "%s address UB+%llu is not %llu-byte aligned", what, (unsigned long long)off,
             (unsigned long long)align);
    if (span > r.bytes)
        Fail(api, "%s: the instruction touches %llu bytes but the tensor has %llu (UB+%llu)", what,
             (unsigned long long)span, (unsigned long long)r.bytes, (unsigned long long)off);
    CheckLocal(api, what, Buf::UB, r.p, span);
    if (g_raceCheck) {
        if (what[0] == 'd' && what[1] == 's' && what[2] == 't')
            RaceWrite(api, Pipe::V, r.buf, r.p, span);
        else
            RaceRead(api, Pipe::V, r.buf, r.p, span);
    }
}

// Compute-domain load/store per element type.
template <class T> struct Elem {
    using C = double;
    static C Ld(const uint8_t *p)
    {
        T v;
        std::memcpy(&v, p, sizeof(T));
        return static_cast<C>(v);
    }
    static void St(uint8_t *p, C v)
    {
        T t = static_cast<T>(v);
        std::memcpy(p, &t, sizeof(T));
    }
};
template <> struct Elem<float> {
    using C = float;
    static C Ld(const uint8_t *p)
    {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    static void St(uint8_t *p, C v) { std::memcpy(p, &v, 4); }
};
template <> struct Elem<half> {
    using C = float;
    static C Ld(const uint8_t *p)
    {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return HalfBitsToFloat(b);
    }
    static void St(uint8_t *p, C v)
    {
        const uint16_t b = FloatToHalfBits(v);
        std::memcpy(p, &b, 2);
    }
};
template <> struct Elem<bfloat16_t> {
    using C = float;
    static C Ld(const uint8_t *p)
    {
        uint16_t b;
        std::memcpy(&b, p, 2);
        return Bf16BitsToFloat(b);
    }
    static void St(uint8_t *p, C v)
    {
        const uint16_t b = FloatToBf16Bits(v);
        std::memcpy(p, &b, 2);
    }
};
// Integer arithmetic wraps in the element width (int16/int32 vector add/sub/mul).
template <> struct Elem<int32_t> {
    using C = int64_t;
    static C Ld(const uint8_t *p)
    {
        int32_t v;
        std::memcpy(&v, p, 4);
        return v;
    }
    static void St(uint8_t *p, C v)
    {
        const int32_t t = static_cast<int32_t>(static_cast<uint32_t>(v));
        std::memcpy(p, &t, 4);
    }
};
template <> struct Elem<int16_t> {
    using C = int64_t;
    static C Ld(const uint8_t *p)
    {
        int16_t v;
        std::memcpy(&v, p, 2);
        return v;
    }
    static void St(uint8_t *p, C v)
    {
        const int16_t t = static_cast<int16_t>(static_cast<uint16_t>(v));
        std::memcpy(p, &t, 2);
    }
};

// Calls fn(lane pointers...) for every active lane, repeat by repeat (repeats are sequential,
// so an accumulating instruction with repStride 0 reads the previous repeat's result).
template <int N, class Fn>
void ForLanes(const Lanes &l, uint8_t *const base[N], const int es[N], const uint32_t blk[N], const uint32_t rep[N],
              Fn fn)
{
    bool contiguous = l.full || l.counter;
    for (int k = 0; k < N; ++k)
        contiguous = contiguous && blk[k] == 1 && rep[k] * 32 == static_cast<uint32_t>(l.L * es[k]);
    if (contiguous) {
        const uint64_t n = l.counter ? l.count : static_cast<uint64_t>(l.repeats) * l.L;
        uint8_t *p[N];
        for (int k = 0; k < N; ++k) p[k] = base[k];
        for (uint64_t i = 0; i < n; ++i) {
            fn(p);
            for (int k = 0; k < N; ++k) p[k] += es[k];
        }
        return;
    }
    // Strided: advance every operand lane by lane with increments only (no division).
    int epb[N];
    for (int k = 0; k < N; ++k) epb[k] = 32 / es[k];
    for (uint32_t r = 0; r < l.repeats; ++r) {
        const int m = l.maxLane(r);
        uint8_t *blockBase[N];
        uint8_t *p[N];
        int e[N];
        for (int k = 0; k < N; ++k) {
            blockBase[k] = base[k] + static_cast<uint64_t>(r) * rep[k] * 32;
            p[k] = blockBase[k];
            e[k] = 0;
        }
        for (int i = 0; i <= m; ++i) {
            if (l.full || l.active(r, i)) fn(p);
            for (int k = 0; k < N; ++k) {
                if (++e[k] == epb[k]) {
                    e[k] = 0;
                    blockBase[k] += static_cast<uint64_t>(blk[k]) * 32;
                    p[k] = blockBase[k];
                } else {
                    p[k] += es[k];
                }
            }
        }
    }
}

// Elements of an instruction whose operands are all contiguous with every lane active
// (the level-2 shape), else 0: such instructions can run as flat array loops.
template <int N> uint64_t ContiguousCount(const Lanes &l, const int es[N], const uint32_t blk[N], const uint32_t rep[N])
{
    if (!(l.full || l.counter)) return 0;
    for (int k = 0; k < N; ++k)
        if (blk[k] != 1 || rep[k] * 32 != static_cast<uint32_t>(l.L * es[k])) return 0;
    return l.counter ? l.count : static_cast<uint64_t>(l.repeats) * l.L;
}

inline uint64_t ActiveLanes(const Lanes &l)
{
    if (l.counter) return l.count;
    const uint64_t perRepeat = l.L == 128 ? __builtin_popcountll(l.lo) + __builtin_popcountll(l.hi)
                                          : __builtin_popcountll(l.L == 64 ? l.lo : l.lo & ((1ull << l.L) - 1));
    return perRepeat * l.repeats;
}

}  // namespace vec
}  // namespace emu
