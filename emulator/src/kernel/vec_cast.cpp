// Cast with RoundMode, Compare/Compares and Select (asc-devkit `include/basic_api/kernel_operator_vec_vconv_intf.h`, `kernel_operator_vec_cmpsel_intf.h`).
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "half_convert.h"
#include "vec_common.h"

namespace emu {

using namespace vec;

namespace {

enum RM { NONE = 0, RINT, FLOOR, CEIL, ROUND, TRUNC, ODD };

// The neighbours of a 16-bit float encoding one step up / down in value.
uint16_t StepUp(uint16_t b) { return (b & 0x8000u) ? (b == 0x8000u ? 1 : b - 1) : b + 1; }
uint16_t StepDown(uint16_t b) { return (b & 0x8000u) ? b + 1 : (b == 0 ? 0x8001u : b - 1); }

// float -> half / bf16 with a rounding mode: start from the nearest-even result and move to the
// neighbour the mode asks for (values compared exactly in double).
uint16_t RoundTo16(float f, int mode, bool bf16)
{
    auto enc = [bf16](float x) { return bf16 ? FloatToBf16Bits(x) : FloatToHalfBits(x); };
    auto dec = [bf16](uint16_t b) { return static_cast<double>(bf16 ? Bf16BitsToFloat(b) : HalfBitsToFloat(b)); };
    const uint16_t r = enc(f);
    if (std::isnan(f) || std::isinf(f) || mode == RINT || mode == NONE) return r;
    const double v = f, rv = dec(r);
    if (rv == v) return r;
    const uint16_t lo = rv < v ? r : StepDown(r), hi = rv < v ? StepUp(r) : r;
    const double lv = dec(lo), hv = dec(hi);
    switch (mode) {
        case FLOOR:
            return lo;
        case CEIL:
            return hi;
        case TRUNC:
            return v > 0 ? lo : hi;
        case ROUND: {
            const double mid = (lv + hv) / 2;
            if (v == mid) return v > 0 ? hi : lo;  // ties away from zero
            return r;
        }
        case ODD:
            return (lo & 1u) ? lo : hi;
        default:
            return r;
    }
    (void)hv;
}

double RoundIntegral(double v, int mode)
{
    switch (mode) {
        case FLOOR:
            return std::floor(v);
        case CEIL:
            return std::ceil(v);
        case ROUND:
            return std::round(v);
        case TRUNC:
            return std::trunc(v);
        default:
            return std::nearbyint(v);  // RINT / NONE: ties to even
    }
}

double LoadAny(DType t, const uint8_t *p)
{
    switch (t) {
        case DType::F16:
            return Elem<half>::Ld(p);
        case DType::BF16:
            return Elem<bfloat16_t>::Ld(p);
        case DType::F32:
            return Elem<float>::Ld(p);
        case DType::I8:
            return static_cast<int8_t>(*p);
        case DType::U8:
            return *p;
        case DType::I16: {
            int16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        case DType::I32: {
            int32_t v;
            std::memcpy(&v, p, 4);
            return v;
        }
        case DType::I64: {
            int64_t v;
            std::memcpy(&v, p, 8);
            return static_cast<double>(v);
        }
        default:
            return 0;
    }
}

template <class I> void StoreInt(uint8_t *p, double v, int mode)
{
    I out;
    if (std::isnan(v))
        out = 0;
    else {
        const double r = RoundIntegral(v, mode);
        out = r <= static_cast<double>(std::numeric_limits<I>::min())   ? std::numeric_limits<I>::min()
              : r >= static_cast<double>(std::numeric_limits<I>::max()) ? std::numeric_limits<I>::max()
                                                                        : static_cast<I>(r);
    }
    std::memcpy(p, &out, sizeof(I));
}

void StoreAny(DType dt, DType st, uint8_t *p, double v, int mode)
{
    switch (dt) {
        case DType::F16: {
            const uint16_t b = RoundTo16(static_cast<float>(v), mode, false);
            std::memcpy(p, &b, 2);
            break;
        }
        case DType::BF16: {
            const uint16_t b = RoundTo16(static_cast<float>(v), mode, true);
            std::memcpy(p, &b, 2);
            break;
        }
        case DType::F32: {
            float f;
            if (st == DType::F32) {  // float -> float: round to an integral value, -0 becomes +0
                f = static_cast<float>(RoundIntegral(v, mode));
                if (f == 0) f = 0.0f;
            } else if (st == DType::I32 || st == DType::I64) {
                const int saved = std::fegetround();
                std::fesetround(mode == FLOOR   ? FE_DOWNWARD
                                : mode == CEIL  ? FE_UPWARD
                                : mode == TRUNC ? FE_TOWARDZERO
                                                : FE_TONEAREST);
                volatile double vv = v;
                f = static_cast<float>(vv);
                std::fesetround(saved);
            } else {
                f = static_cast<float>(v);
            }
            std::memcpy(p, &f, 4);
            break;
        }
        case DType::I8:
            StoreInt<int8_t>(p, v, mode);
            break;
        case DType::U8:
            StoreInt<uint8_t>(p, v, mode);
            break;
        case DType::I16:
            StoreInt<int16_t>(p, v, mode);
            break;
        case DType::I32:
            StoreInt<int32_t>(p, v, mode);
            break;
        case DType::I64:
            StoreInt<int64_t>(p, v, mode);
            break;
        default:
            break;
    }
}

// Allowed (dst, src) pairs and round modes on Atlas A2 (Cast.md, A2 table). Bit i = RoundMode i.
constexpr uint32_t kFive = (1u << RINT) | (1u << FLOOR) | (1u << CEIL) | (1u << ROUND) | (1u << TRUNC);
constexpr uint32_t kNone = 1u << NONE;
struct CastRule {
    DType dst, src;
    uint32_t modes;
};
const CastRule kRules[] = {
    {DType::F16, DType::F32, kFive | kNone | (1u << ODD)},
    {DType::BF16, DType::F32, kFive},
    {DType::I32, DType::F32, kFive},
    {DType::I16, DType::F32, kFive},
    {DType::I64, DType::F32, kFive},
    {DType::F32, DType::F32, kFive},
    {DType::F32, DType::F16, kNone},
    {DType::F32, DType::BF16, kNone},
    {DType::F32, DType::I16, kNone},
    {DType::F16, DType::I8, kNone},
    {DType::F16, DType::U8, kNone},
    {DType::I16, DType::I32, kNone},
    {DType::I64, DType::I32, kNone},
    {DType::I32, DType::I64, kNone},
    {DType::I32, DType::F16, kFive},
    {DType::I16, DType::F16, kFive},
    {DType::I32, DType::BF16, kFive},
    {DType::I8, DType::F16, kFive | kNone},
    {DType::U8, DType::F16, kFive | kNone},
    {DType::F16, DType::I16, kFive | kNone},
    {DType::F32, DType::I32, kFive | kNone},
    {DType::F32, DType::I64, kFive},
    {DType::F16, DType::I4, kNone},
};

const char *RoundName(int m)
{
    static const char *n[] = {"CAST_NONE",  "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                              "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
    return m >= 0 && m <= 6 ? n[m] : "UNKNOWN";
}

// int4b_t -> half: the half lanes as any Cast; the source packs two lanes per byte (lane 2j in
// the low nibble), so its 32-byte blocks hold 64 lanes and a lane sits at a nibble.
void CastFromInt4(const char *api, LocalRef dst, LocalRef src, const VGeom &g)
{
    const Lanes l = ResolveLanes(2, g.repeat);
    auto nibble = [&](uint32_t r, int i) -> uint64_t {
        return (static_cast<uint64_t>(r) * g.rep[1] * 32 + static_cast<uint64_t>(i / 64) * g.blk[1] * 32) * 2 + i % 64;
    };
    uint64_t srcSpan = 0;
    for (uint32_t r = 0; r < l.repeats; ++r)
        if (l.maxLane(r) >= 0) srcSpan = std::max(srcSpan, nibble(r, l.maxLane(r)) / 2 + 1);
    CheckOperand(api, "dst", dst, OperandSpan(l, 2, g.blk[0], g.rep[0]));
    CheckOperand(api, "src", src, srcSpan);
    TimeVector(VClass::Cast, 2, l.repeats, api);
    if (!TimingOnly()) {
        auto *d = static_cast<uint8_t *>(dst.p);
        const auto *s = static_cast<const uint8_t *>(src.p);
        for (uint32_t r = 0; r < l.repeats; ++r)
            for (int i = 0; i <= l.maxLane(r); ++i) {
                if (!(l.full || l.active(r, i))) continue;
                const uint64_t at = nibble(r, i);
                const int v = (s[at / 2] >> (at % 2 * 4)) & 0xf;
                Elem<half>::St(d + LaneOffset(r, i, 2, g.blk[0], g.rep[0]), half(v >= 8 ? v - 16 : v));
            }
    }
    Count(Pipe::V, ActiveLanes(l) * 2 + (ActiveLanes(l) + 1) / 2, l.repeats);
}

}  // namespace

void VecCast(const char *api, DType dt, DType st, int mode, LocalRef dst, LocalRef src, const VGeom &g)
{
    if (!Present(dst)) return;
    const CastRule *rule = nullptr;
    for (const CastRule &r : kRules)
        if (r.dst == dt && r.src == st) rule = &r;
    if (rule == nullptr) Fail(api, "%s -> %s is not a supported Cast on Atlas A2", DTypeName(st), DTypeName(dt));
    if (mode < 0 || mode > 6 || !(rule->modes & (1u << mode)))
        Fail(api, "round mode %s is not supported for %s -> %s", RoundName(mode), DTypeName(st), DTypeName(dt));
    if (st == DType::I4) return CastFromInt4(api, dst, src, g);
    const int ed = DTypeSize(dt), esrc = DTypeSize(st);
    const Lanes l = ResolveLanes(ed > esrc ? ed : esrc, g.repeat);
    CheckOperand(api, "dst", dst, OperandSpan(l, ed, g.blk[0], g.rep[0]));
    CheckOperand(api, "src", src, OperandSpan(l, esrc, g.blk[1], g.rep[1]));
    TimeVector(VClass::Cast, ed > esrc ? ed : esrc, l.repeats, api);
    if (TimingOnly()) return Count(Pipe::V, ActiveLanes(l) * (ed + esrc), l.repeats);
    uint8_t *base[2] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(src.p)};
    const int es[2] = {ed, esrc};
    const uint64_t flat = ContiguousCount<2>(l, es, g.blk, g.rep);
    if (flat != 0 && dt == DType::F32 && st == DType::F16) {
        HalfToFloatN(static_cast<const uint16_t *>(src.p), static_cast<float *>(dst.p), flat);
    } else if (flat != 0 && dt == DType::F16 && st == DType::F32 && (mode == RINT || mode == NONE)) {
        FloatToHalfN(static_cast<const float *>(src.p), static_cast<uint16_t *>(dst.p), flat);
    } else if (dt == DType::F32 && st == DType::F16) {  // the hot widening path
        ForLanes<2>(l, base, es, g.blk, g.rep,
                    [](uint8_t *const p[2]) { Elem<float>::St(p[0], Elem<half>::Ld(p[1])); });
    } else if (dt == DType::F16 && st == DType::F32 && (mode == RINT || mode == NONE)) {
        ForLanes<2>(l, base, es, g.blk, g.rep,
                    [](uint8_t *const p[2]) { Elem<half>::St(p[0], Elem<float>::Ld(p[1])); });
    } else {
        ForLanes<2>(l, base, es, g.blk, g.rep,
                    [dt, st, mode](uint8_t *const p[2]) { StoreAny(dt, st, p[0], LoadAny(st, p[1]), mode); });
    }
    Count(Pipe::V, ActiveLanes(l) * (ed + esrc), l.repeats);
}

void VecCompare(const char *api, DType t, int cmp, LocalRef dst, LocalRef s0, LocalRef s1, bool scalarForm,
                double scalar, const VGeom &g)
{
    if (!Present(dst)) return;
    if (!(t == DType::F16 || t == DType::F32 || (t == DType::I32 && cmp == 2)))
        Fail(api, "element type %s with mode %d is not supported on Atlas A2 (half/float; int32_t only EQ)",
             DTypeName(t), cmp);
    const int e = DTypeSize(t);
    const int L = 256 / e;
    // The mask is reserved on A2: every lane of every repeat is compared; output bits are packed.
    const uint32_t repeats = g.repeat;
    if (repeats == 0) return;
    Lanes l;
    l.L = L;
    l.repeats = repeats;
    l.counter = false;
    l.count = 0;
    l.hi = l.lo = ~0ull;
    l.full = true;
    CheckOperand(api, "src0", s0, OperandSpan(l, e, g.blk[1], g.rep[1]));
    if (!scalarForm) CheckOperand(api, "src1", s1, OperandSpan(l, e, g.blk[2], g.rep[2]));
    CheckOperand(api, "dst", dst, static_cast<uint64_t>(repeats) * L / 8);
    TimeVector(VClass::CompareSelect, e, repeats, api);
    if (TimingOnly()) return Count(Pipe::V, static_cast<uint64_t>(repeats) * L * (scalarForm ? e : 2 * e), repeats);
    auto *d = static_cast<uint8_t *>(dst.p);
    for (uint32_t r = 0; r < repeats; ++r) {
        for (int i = 0; i < L; ++i) {
            const double a = LoadAny(t, static_cast<uint8_t *>(s0.p) + LaneOffset(r, i, e, g.blk[1], g.rep[1]));
            const double b = scalarForm
                                 ? scalar
                                 : LoadAny(t, static_cast<uint8_t *>(s1.p) + LaneOffset(r, i, e, g.blk[2], g.rep[2]));
            bool res;
            switch (cmp) {
                case 0:
                    res = a < b;
                    break;
                case 1:
                    res = a > b;
                    break;
                case 2:
                    res = a == b;
                    break;
                case 3:
                    res = a <= b;
                    break;
                case 4:
                    res = a >= b;
                    break;
                default:
                    res = a != b;
                    break;
            }
            uint8_t &byte = d[(static_cast<uint64_t>(r) * L + i) / 8];
            const uint8_t bit = static_cast<uint8_t>(1u << (i % 8));
            byte = res ? (byte | bit) : (byte & ~bit);
        }
    }
    Count(Pipe::V, static_cast<uint64_t>(repeats) * L * (scalarForm ? e : 2 * e), repeats);
}

void VecSelect(const char *api, DType t, int mode, LocalRef dst, LocalRef sel, LocalRef s0, LocalRef s1,
               bool scalarForm, double scalar, const VGeom &g)
{
    if (!Present(dst)) return;
    if (t != DType::F16 && t != DType::F32)
        Fail(api, "element type %s is not supported on Atlas A2 (half, float)", DTypeName(t));
    if (mode < 0 || mode > 2) Fail(api, "selMode %d is not a SELMODE", mode);
    if (scalarForm && mode != 1) Fail(api, "a scalar src1 needs SELMODE::VSEL_TENSOR_SCALAR_MODE, got mode %d", mode);
    if (!scalarForm && mode == 1) Fail(api, "SELMODE::VSEL_TENSOR_SCALAR_MODE needs a scalar src1");
    const int e = DTypeSize(t);
    const Lanes l = ResolveLanes(e, g.repeat);
    CheckOperand(api, "dst", dst, OperandSpan(l, e, g.blk[0], g.rep[0]));
    CheckOperand(api, "src0", s0, OperandSpan(l, e, g.blk[1], g.rep[1]));
    if (!scalarForm) CheckOperand(api, "src1", s1, OperandSpan(l, e, g.blk[2], g.rep[2]));
    const uint64_t selBytes =
        mode == 0 ? static_cast<uint64_t>(l.L) / 8 : (static_cast<uint64_t>(l.repeats) * l.L + 7) / 8;
    CheckOperand(api, "selMask", sel, selBytes);
    TimeVector(VClass::CompareSelect, e, l.repeats, api);
    if (TimingOnly()) return Count(Pipe::V, ActiveLanes(l) * 3 * e, l.repeats);
    const auto *bits = static_cast<const uint8_t *>(sel.p);
    for (uint32_t r = 0; r < l.repeats; ++r) {
        const int m = l.maxLane(r);
        for (int i = 0; i <= m; ++i) {
            if (!l.active(r, i)) continue;
            const uint64_t bit = mode == 0 ? static_cast<uint64_t>(i) : static_cast<uint64_t>(r) * l.L + i;
            const bool pick0 = (bits[bit / 8] >> (bit % 8)) & 1;
            uint8_t *d = static_cast<uint8_t *>(dst.p) + LaneOffset(r, i, e, g.blk[0], g.rep[0]);
            const uint8_t *a = static_cast<uint8_t *>(s0.p) + LaneOffset(r, i, e, g.blk[1], g.rep[1]);
            if (pick0) {
                std::memmove(d, a, e);
            } else if (scalarForm) {
                if (t == DType::F16)
                    Elem<half>::St(d, static_cast<float>(scalar));
                else
                    Elem<float>::St(d, static_cast<float>(scalar));
            } else {
                std::memmove(d, static_cast<uint8_t *>(s1.p) + LaneOffset(r, i, e, g.blk[2], g.rep[2]), e);
            }
        }
    }
    Count(Pipe::V, ActiveLanes(l) * 3 * e, l.repeats);
}

}  // namespace emu
