// Vector arithmetic, Duplicate, Copy and the mask register (asc-devkit `include/basic_api/kernel_operator_vec_binary_intf.h` and siblings).
// fp16/bf16 lanes are computed in fp32 and rounded once to nearest even per instruction.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "half_convert.h"
#include "vec_common.h"

namespace emu {

using namespace vec;

const char *VOpName(VOp op)
{
    static const char *n[] = {"Add",  "Sub",  "Mul", "Div", "Max", "Min",  "Adds",       "Muls",
                              "Maxs", "Mins", "Exp", "Ln",  "Abs", "Sqrt", "Reciprocal", "Rsqrt",
                              "Relu", "Copy", "And", "Or",  "Not", "Axpy", "ShiftLeft",  "ShiftRight"};
    return n[static_cast<int>(op)];
}

void SetMaskContinuous(uint64_t mask, int elemBytes)
{
    CoreCtx &c = Ctx();
    if (c.maskCounterMode) {
        c.maskHigh = 0;
        c.maskLow = mask;
        return;
    }
    const uint64_t lanes = 256 / elemBytes;
    if (mask == 0)
        Fail("vector mask", "continuous mask 0 is outside [1, %llu] for %d-byte elements", (unsigned long long)lanes,
             elemBytes);
    if (mask > lanes) mask = lanes;  // the documented behaviour: a larger value still means one full repeat
    c.maskLow = mask >= 64 ? ~0ull : ((1ull << mask) - 1);
    c.maskHigh = mask > 64 ? (mask >= 128 ? ~0ull : ((1ull << (mask - 64)) - 1)) : 0;
}
void SetMaskBits(uint64_t hi, uint64_t lo)
{
    CoreCtx &c = Ctx();
    c.maskHigh = hi;
    c.maskLow = lo;
}
void BeginCount(uint64_t count)
{
    CoreCtx &c = Ctx();
    c.maskCounterMode = true;
    c.maskHigh = 0;
    c.maskLow = count;
}
void EndCount()
{
    CoreCtx &c = Ctx();
    c.maskCounterMode = false;
    c.maskHigh = c.maskLow = ~0ull;
}

namespace {

bool IsFloat(DType t) { return t == DType::F16 || t == DType::F32; }
bool IsArith(DType t) { return t == DType::F16 || t == DType::F32 || t == DType::I16 || t == DType::I32; }
bool IsBitwise(VOp op) { return op == VOp::And || op == VOp::Or || op == VOp::Not; }

// Bitwise ops act on the 16-bit patterns.
template <class Fn>
void Bits16(const Lanes &l, uint8_t *const *base, const int *es, const uint32_t *blk, const uint32_t *rep, int n, Fn fn)
{
    if (n == 3)
        ForLanes<3>(l, base, es, blk, rep, [&fn](uint8_t *const p[3]) {
            uint16_t a, b;
            std::memcpy(&a, p[1], 2);
            std::memcpy(&b, p[2], 2);
            const uint16_t r = fn(a, b);
            std::memcpy(p[0], &r, 2);
        });
    else
        ForLanes<2>(l, base, es, blk, rep, [&fn](uint8_t *const p[2]) {
            uint16_t a;
            std::memcpy(&a, p[1], 2);
            const uint16_t r = fn(a, a);
            std::memcpy(p[0], &r, 2);
        });
}

template <class C> inline C Apply(VOp op, C a, C b)
{
    switch (op) {
        case VOp::Add:
        case VOp::Adds:
            return a + b;
        case VOp::Sub:
            return a - b;
        case VOp::Mul:
        case VOp::Muls:
            return a * b;
        case VOp::Div:
            return a / b;
        // NaN propagates through Max/Min (boundary appendix table 13).
        case VOp::Max:
        case VOp::Maxs:
            return (a != a) ? a : (b != b) ? b : (b > a ? b : a);
        case VOp::Min:
        case VOp::Mins:
            return (a != a) ? a : (b != b) ? b : (b < a ? b : a);
        default:
            return a;
    }
}
template <class C> inline C ApplyUnary(VOp op, C a)
{
    switch (op) {
        case VOp::Exp:
            return static_cast<C>(std::exp(static_cast<float>(a)));
        case VOp::Ln:
            return static_cast<C>(std::log(static_cast<float>(a)));
        case VOp::Abs:
            return a < 0 ? -a : (a == 0 ? C(0) : a);
        case VOp::Sqrt:
            return static_cast<C>(std::sqrt(static_cast<float>(a)));
        case VOp::Reciprocal:
            return static_cast<C>(1.0f / static_cast<float>(a));
        case VOp::Rsqrt:
            return static_cast<C>(1.0f / std::sqrt(static_cast<float>(a)));
        case VOp::Relu:
            return a > 0 ? a : C(0);
        default:
            return a;
    }
}

// The op is a template parameter so the per-lane loop has no switch in it.
template <VOp OP, class C> inline C ApplyT(C a, C b) { return Apply<C>(OP, a, b); }
template <VOp OP, class C> inline C ApplyUnaryT(C a) { return ApplyUnary<C>(OP, a); }

// Contiguous fp16 instructions: convert chunks to fp32 in bulk, compute, round back (RNE).
constexpr size_t kChunk = 512;
template <class Fn> void HalfChunks(uint64_t n, uint8_t *dst, const uint8_t *s0, const uint8_t *s1, Fn fn)
{
    float a[kChunk], b[kChunk], c[kChunk];
    for (uint64_t off = 0; off < n; off += kChunk) {
        const size_t m = static_cast<size_t>(std::min<uint64_t>(kChunk, n - off));
        HalfToFloatN(reinterpret_cast<const uint16_t *>(s0) + off, a, m);
        if (s1 != nullptr) HalfToFloatN(reinterpret_cast<const uint16_t *>(s1) + off, b, m);
        fn(a, b, c, m);
        FloatToHalfN(c, reinterpret_cast<uint16_t *>(dst) + off, m);
    }
}

template <class T, VOp OP>
void BinaryT(const Lanes &l, uint8_t *const base[3], const int es[3], const uint32_t blk[3], const uint32_t rep[3])
{
    using E = Elem<T>;
    if (std::is_same<T, half>::value) {
        if (const uint64_t n = ContiguousCount<3>(l, es, blk, rep)) {
            HalfChunks(n, base[0], base[1], base[2], [](const float *a, const float *b, float *c, size_t m) {
                for (size_t i = 0; i < m; ++i) c[i] = ApplyT<OP, float>(a[i], b[i]);
            });
            return;
        }
    }
    ForLanes<3>(l, base, es, blk, rep,
                [](uint8_t *const p[3]) { E::St(p[0], ApplyT<OP, typename E::C>(E::Ld(p[1]), E::Ld(p[2]))); });
}
template <class T>
void Binary(VOp op, const Lanes &l, uint8_t *const base[3], const int es[3], const uint32_t blk[3],
            const uint32_t rep[3])
{
    switch (op) {
        case VOp::Add:
            BinaryT<T, VOp::Add>(l, base, es, blk, rep);
            break;
        case VOp::Sub:
            BinaryT<T, VOp::Sub>(l, base, es, blk, rep);
            break;
        case VOp::Mul:
            BinaryT<T, VOp::Mul>(l, base, es, blk, rep);
            break;
        case VOp::Div:
            BinaryT<T, VOp::Div>(l, base, es, blk, rep);
            break;
        case VOp::Max:
            BinaryT<T, VOp::Max>(l, base, es, blk, rep);
            break;
        default:
            BinaryT<T, VOp::Min>(l, base, es, blk, rep);
            break;
    }
}
template <class T, VOp OP>
void ScalarT(const Lanes &l, uint8_t *const base[2], const int es[2], const uint32_t blk[2], const uint32_t rep[2],
             typename Elem<T>::C sv)
{
    using E = Elem<T>;
    if (std::is_same<T, half>::value) {
        if (const uint64_t n = ContiguousCount<2>(l, es, blk, rep)) {
            const float f = static_cast<float>(sv);
            HalfChunks(n, base[0], base[1], OP == VOp::Axpy ? base[0] : nullptr,
                       [f](const float *a, const float *b, float *c, size_t m) {
                           if (OP == VOp::Axpy)
                               for (size_t i = 0; i < m; ++i) c[i] = a[i] * f + b[i];
                           else
                               for (size_t i = 0; i < m; ++i) c[i] = ApplyT<OP, float>(a[i], f);
                       });
            return;
        }
    }
    if (OP == VOp::Axpy)  // dst = src * scalar + dst, one rounding per instruction
        ForLanes<2>(l, base, es, blk, rep, [sv](uint8_t *const p[2]) { E::St(p[0], E::Ld(p[1]) * sv + E::Ld(p[0])); });
    else
        ForLanes<2>(l, base, es, blk, rep,
                    [sv](uint8_t *const p[2]) { E::St(p[0], ApplyT<OP, typename E::C>(E::Ld(p[1]), sv)); });
}
template <class T>
void Scalar(VOp op, const Lanes &l, uint8_t *const base[2], const int es[2], const uint32_t blk[2],
            const uint32_t rep[2], double s)
{
    using E = Elem<T>;
    // The scalar is first represented in T (a float literal for half rounds to half).
    uint8_t sb[8];
    E::St(sb, static_cast<typename E::C>(s));
    const typename E::C sv = E::Ld(sb);
    switch (op) {
        case VOp::Adds:
            ScalarT<T, VOp::Adds>(l, base, es, blk, rep, sv);
            break;
        case VOp::Muls:
            ScalarT<T, VOp::Muls>(l, base, es, blk, rep, sv);
            break;
        case VOp::Maxs:
            ScalarT<T, VOp::Maxs>(l, base, es, blk, rep, sv);
            break;
        case VOp::Mins:
            ScalarT<T, VOp::Mins>(l, base, es, blk, rep, sv);
            break;
        default:
            ScalarT<T, VOp::Axpy>(l, base, es, blk, rep, sv);
            break;
    }
}
template <class T, VOp OP>
void UnaryT(const Lanes &l, uint8_t *const base[2], const int es[2], const uint32_t blk[2], const uint32_t rep[2])
{
    using E = Elem<T>;
    if (std::is_same<T, half>::value) {
        if (const uint64_t n = ContiguousCount<2>(l, es, blk, rep)) {
            HalfChunks(n, base[0], base[1], nullptr, [](const float *a, const float *, float *c, size_t m) {
                for (size_t i = 0; i < m; ++i) c[i] = ApplyUnaryT<OP, float>(a[i]);
            });
            return;
        }
    }
    ForLanes<2>(l, base, es, blk, rep,
                [](uint8_t *const p[2]) { E::St(p[0], ApplyUnaryT<OP, typename E::C>(E::Ld(p[1]))); });
}
template <class T>
void Unary(VOp op, const Lanes &l, uint8_t *const base[2], const int es[2], const uint32_t blk[2],
           const uint32_t rep[2])
{
    switch (op) {
        case VOp::Copy:
            ForLanes<2>(l, base, es, blk, rep, [](uint8_t *const p[2]) { std::memcpy(p[0], p[1], sizeof(T)); });
            break;
        case VOp::Exp:
            UnaryT<T, VOp::Exp>(l, base, es, blk, rep);
            break;
        case VOp::Ln:
            UnaryT<T, VOp::Ln>(l, base, es, blk, rep);
            break;
        case VOp::Abs:
            UnaryT<T, VOp::Abs>(l, base, es, blk, rep);
            break;
        case VOp::Sqrt:
            UnaryT<T, VOp::Sqrt>(l, base, es, blk, rep);
            break;
        case VOp::Reciprocal:
            UnaryT<T, VOp::Reciprocal>(l, base, es, blk, rep);
            break;
        case VOp::Rsqrt:
            UnaryT<T, VOp::Rsqrt>(l, base, es, blk, rep);
            break;
        default:
            UnaryT<T, VOp::Relu>(l, base, es, blk, rep);
            break;
    }
}

template <int N>
void Check(const char *api, const Lanes &l, const LocalRef *refs, const int *es, const VGeom &g,
           const char *const *names)
{
    for (int k = 0; k < N; ++k) CheckOperand(api, names[k], refs[k], OperandSpan(l, es[k], g.blk[k], g.rep[k]));
}

void CountV(const Lanes &l, int bytesPerLane) { Count(Pipe::V, ActiveLanes(l) * bytesPerLane, l.repeats); }

bool IsTranscendental(VOp op)
{
    return op == VOp::Exp || op == VOp::Ln || op == VOp::Sqrt || op == VOp::Reciprocal || op == VOp::Rsqrt ||
           op == VOp::Div;
}
// The model's cost of the instruction; true when the data work is to be skipped (timing-only).
// Integer instructions keep their data work: kernels compute indices and sort keys with them
// (the sparse grad's selection sort), and they are cheap on the host.
bool TimeV(VOp op, const Lanes &l, int e, const char *api, DType t = DType::F32)
{
    TimeVector(IsTranscendental(op) ? VClass::Transcendental : VClass::Simple, e, l.repeats, api);
    return TimingOnly() && t != DType::I16 && t != DType::I32 && t != DType::U16 && t != DType::U32;
}

}  // namespace

void VecBinary(const char *api, VOp op, DType t, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g)
{
    if (!Present(dst)) return;
    if (IsBitwise(op)) {
        if (t != DType::I16 && t != DType::U16)
            Fail(api, "element type %s is not supported on Atlas A2 (int16_t, uint16_t)", DTypeName(t));
        const Lanes l = ResolveLanes(2, g.repeat);
        const LocalRef refs[3] = {dst, s0, s1};
        const int es[3] = {2, 2, 2};
        static const char *names[3] = {"dst", "src0", "src1"};
        Check<3>(api, l, refs, es, g, names);
        // Bitwise ops keep their data work in timing-only mode: kernels fold loaded bytes (masks,
        // indices) with them and branch on the result, and they are cheap on the host.
        (void)TimeV(op, l, 2, api);
        uint8_t *base[3] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(s0.p), static_cast<uint8_t *>(s1.p)};
        if (op == VOp::And)
            Bits16(l, base, es, g.blk, g.rep, 3, [](uint16_t a, uint16_t b) { return static_cast<uint16_t>(a & b); });
        else
            Bits16(l, base, es, g.blk, g.rep, 3, [](uint16_t a, uint16_t b) { return static_cast<uint16_t>(a | b); });
        CountV(l, 6);
        return;
    }
    const bool ok = op == VOp::Div ? IsFloat(t) : IsArith(t);
    if (!ok)
        Fail(api, "element type %s is not supported on Atlas A2 (%s)", DTypeName(t),
             op == VOp::Div ? "half, float" : "half, float, int16_t, int32_t");
    const int e = DTypeSize(t);
    const Lanes l = ResolveLanes(e, g.repeat);
    const LocalRef refs[3] = {dst, s0, s1};
    const int es[3] = {e, e, e};
    static const char *names[3] = {"dst", "src0", "src1"};
    Check<3>(api, l, refs, es, g, names);
    if (TimeV(op, l, e, api, t)) return CountV(l, 3 * e);
    uint8_t *base[3] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(s0.p), static_cast<uint8_t *>(s1.p)};
    switch (t) {
        case DType::F16:
            Binary<half>(op, l, base, es, g.blk, g.rep);
            break;
        case DType::F32:
            Binary<float>(op, l, base, es, g.blk, g.rep);
            break;
        case DType::I16:
            Binary<int16_t>(op, l, base, es, g.blk, g.rep);
            break;
        default:
            Binary<int32_t>(op, l, base, es, g.blk, g.rep);
            break;
    }
    CountV(l, 3 * e);
}

namespace {

// The three-operand multiply-adds: dst (type dt) with src0 and src1 (type st), the product and the
// sum in float, rounded to dt once at the end. dstFactor: dst = src0 * dst + src1 (FusedMulAdd,
// vmadd: one fused rounding, as its rounding is not documented), else dst = src0 * src1 + dst.
void MulAddLanes(const char *api, DType dt, DType st, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g,
                 bool dstFactor)
{
    const int ed = DTypeSize(dt), ess = DTypeSize(st);
    const Lanes l = ResolveLanes(ed, g.repeat);
    const LocalRef refs[3] = {dst, s0, s1};
    const int es[3] = {ed, ess, ess};
    static const char *names[3] = {"dst", "src0", "src1"};
    Check<3>(api, l, refs, es, g, names);
    if (TimeV(VOp::Mul, l, ed, api, dt)) return CountV(l, 3 * ed);
    uint8_t *base[3] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(s0.p), static_cast<uint8_t *>(s1.p)};
    auto ld = [](DType t, const uint8_t *q) { return t == DType::F16 ? float(Elem<half>::Ld(q)) : Elem<float>::Ld(q); };
    ForLanes<3>(l, base, es, g.blk, g.rep, [&](uint8_t *const q[3]) {
        const float v =
            dstFactor ? std::fma(ld(st, q[1]), ld(dt, q[0]), ld(st, q[2])) : ld(st, q[1]) * ld(st, q[2]) + ld(dt, q[0]);
        if (dt == DType::F16)
            Elem<half>::St(q[0], v);
        else
            Elem<float>::St(q[0], v);
    });
    CountV(l, 3 * ed);
}

}  // namespace

void VecMulAddDst(const char *api, DType dt, DType st, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g)
{
    if (!Present(dst)) return;
    const bool ok = (dt == st && IsFloat(dt)) || (dt == DType::F32 && st == DType::F16);
    if (!ok)
        Fail(api, "%s += %s * %s is not supported on Atlas A2 (half, float, or half sources into float)", DTypeName(dt),
             DTypeName(st), DTypeName(st));
    MulAddLanes(api, dt, st, dst, s0, s1, g, false);
}

void VecFusedMulAdd(const char *api, DType t, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g)
{
    if (!Present(dst)) return;
    if (!IsFloat(t)) Fail(api, "element type %s is not supported on Atlas A2 (half, float)", DTypeName(t));
    MulAddLanes(api, t, t, dst, s0, s1, g, true);
}

// asc-devkit `docs/zh/api/SIMD-API/基础API/Memory矢量计算/逻辑计算/ShiftLeft.md` and `ShiftRight.md`:
// 16/32-bit integers only, the shift in [0, width] (the CPU-debug build checks the range too);
// a shift by the full width leaves 0 (or -1 for a negative element shifted right).
void VecShift(const char *api, VOp op, DType t, LocalRef dst, LocalRef src, int64_t bits, bool roundEn, const VGeom &g)
{
    if (!Present(dst)) return;
    const bool isSigned = t == DType::I16 || t == DType::I32;
    if (!isSigned && t != DType::U16 && t != DType::U32)
        Fail(api, "element type %s is not supported on Atlas A2 (int16_t, uint16_t, int32_t, uint32_t)", DTypeName(t));
    const int e = DTypeSize(t);
    if (bits < 0 || bits > 8 * e)
        Fail(api, "shift %lld is outside [0, %d] for %s", static_cast<long long>(bits), 8 * e, DTypeName(t));
    const Lanes l = ResolveLanes(e, g.repeat);
    const LocalRef refs[2] = {dst, src};
    const int es[2] = {e, e};
    static const char *names[2] = {"dst", "src"};
    Check<2>(api, l, refs, es, g, names);
    (void)TimeV(op, l, e, api, t);  // integer work is kept in timing-only mode (indices, bit masks)
    uint8_t *base[2] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(src.p)};
    const int n = static_cast<int>(bits), width = 8 * e;
    const bool left = op == VOp::ShiftLeft, round = roundEn && isSigned && !left && n > 0;
    ForLanes<2>(l, base, es, g.blk, g.rep, [=](uint8_t *const p[2]) {
        uint32_t u = 0;
        std::memcpy(&u, p[1], e);
        int64_t v;  // the element, sign-extended for a signed type
        if (isSigned)
            v = e == 2 ? static_cast<int64_t>(static_cast<int16_t>(u)) : static_cast<int64_t>(static_cast<int32_t>(u));
        else
            v = static_cast<int64_t>(u);
        int64_t r;
        if (left)
            r = n >= width ? 0 : static_cast<int64_t>(static_cast<uint64_t>(u) << n);
        else
            r = (n >= width ? (v < 0 ? -1 : 0) : (v >> n)) + (round ? ((v >> (n - 1)) & 1) : 0);
        const uint32_t out = static_cast<uint32_t>(r);
        std::memcpy(p[0], &out, e);
    });
    CountV(l, 2 * e);
}

void VecScalar(const char *api, VOp op, DType t, LocalRef dst, LocalRef src, double scalar, const VGeom &g)
{
    if (!Present(dst)) return;
    if (op == VOp::Axpy ? !IsFloat(t) : !IsArith(t))
        Fail(api, "element type %s is not supported on Atlas A2 (%s)", DTypeName(t),
             op == VOp::Axpy ? "half, float" : "half, float, int16_t, int32_t");
    const int e = DTypeSize(t);
    const Lanes l = ResolveLanes(e, g.repeat);
    const LocalRef refs[2] = {dst, src};
    const int es[2] = {e, e};
    static const char *names[2] = {"dst", "src"};
    Check<2>(api, l, refs, es, g, names);
    if (TimeV(op, l, e, api, t)) return CountV(l, 2 * e);
    uint8_t *base[2] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(src.p)};
    switch (t) {
        case DType::F16:
            Scalar<half>(op, l, base, es, g.blk, g.rep, scalar);
            break;
        case DType::F32:
            Scalar<float>(op, l, base, es, g.blk, g.rep, scalar);
            break;
        case DType::I16:
            Scalar<int16_t>(op, l, base, es, g.blk, g.rep, scalar);
            break;
        default:
            Scalar<int32_t>(op, l, base, es, g.blk, g.rep, scalar);
            break;
    }
    CountV(l, 2 * e);
}

void VecUnary(const char *api, VOp op, DType t, LocalRef dst, LocalRef src, const VGeom &g)
{
    if (!Present(dst)) return;
    const int e = DTypeSize(t);
    if (op == VOp::Not) {
        if (t != DType::I16 && t != DType::U16)
            Fail(api, "element type %s is not supported on Atlas A2 (int16_t, uint16_t)", DTypeName(t));
        const Lanes l = ResolveLanes(2, g.repeat);
        const LocalRef refs[2] = {dst, src};
        const int es[2] = {2, 2};
        static const char *names[2] = {"dst", "src"};
        Check<2>(api, l, refs, es, g, names);
        (void)TimeV(op, l, 2, api);  // computed in timing-only mode too (as And/Or)
        uint8_t *base[2] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(src.p)};
        Bits16(l, base, es, g.blk, g.rep, 2, [](uint16_t a, uint16_t) { return static_cast<uint16_t>(~a); });
        CountV(l, 4);
        return;
    }
    if (op == VOp::Copy) {
        if (e != 2 && e != 4) Fail(api, "element type %s is not supported (b16/b32 only)", DTypeName(t));
    } else if (!(IsFloat(t) || (op == VOp::Relu && t == DType::I32) || (op == VOp::Abs && false))) {
        Fail(api, "element type %s is not supported on Atlas A2 (half, float)", DTypeName(t));
    }
    const Lanes l = ResolveLanes(e, g.repeat);
    const LocalRef refs[2] = {dst, src};
    const int es[2] = {e, e};
    static const char *names[2] = {"dst", "src"};
    Check<2>(api, l, refs, es, g, names);
    if (TimeV(op, l, e, api, t)) return CountV(l, 2 * e);
    uint8_t *base[2] = {static_cast<uint8_t *>(dst.p), static_cast<uint8_t *>(src.p)};
    switch (t) {
        case DType::F16:
            Unary<half>(op, l, base, es, g.blk, g.rep);
            break;
        case DType::F32:
            Unary<float>(op, l, base, es, g.blk, g.rep);
            break;
        case DType::I32:
            Unary<int32_t>(op, l, base, es, g.blk, g.rep);
            break;
        default:
            Unary<int16_t>(op, l, base, es, g.blk, g.rep);
            break;  // Copy of other b16 types
    }
    CountV(l, 2 * e);
}

void VecDup(const char *api, DType t, LocalRef dst, double scalar, const VGeom &g)
{
    if (!Present(dst)) return;
    const int e = DTypeSize(t);
    if (e != 2 && e != 4) Fail(api, "element type %s is not supported (b16/b32 only)", DTypeName(t));
    const Lanes l = ResolveLanes(e, g.repeat);
    CheckOperand(api, "dst", dst, OperandSpan(l, e, g.blk[0], g.rep[0]));
    if (TimeV(VOp::Copy, l, e, api, t)) return CountV(l, e);
    uint8_t v[4];
    switch (t) {
        case DType::F16:
            Elem<half>::St(v, static_cast<float>(scalar));
            break;
        case DType::BF16:
            Elem<bfloat16_t>::St(v, static_cast<float>(scalar));
            break;
        case DType::F32:
            Elem<float>::St(v, static_cast<float>(scalar));
            break;
        case DType::I16:
        case DType::U16: {
            const uint16_t x = static_cast<uint16_t>(static_cast<int64_t>(scalar));
            std::memcpy(v, &x, 2);
            break;
        }
        default: {
            const uint32_t x = static_cast<uint32_t>(static_cast<int64_t>(scalar));
            std::memcpy(v, &x, 4);
            break;
        }
    }
    uint8_t *base[1] = {static_cast<uint8_t *>(dst.p)};
    const int es[1] = {e};
    ForLanes<1>(l, base, es, g.blk, g.rep, [&v, e](uint8_t *const p[1]) { std::memcpy(p[0], v, e); });
    CountV(l, e);
}

}  // namespace emu
