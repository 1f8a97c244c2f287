// Vector unit cases: level-0 masks and repeat strides, counter mode, every arithmetic op, fp16
// rounding, Cast round modes, Compare/Select, reductions, Brcb/Copy, Sort/Extract, bitwise ops
// and shifts.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "api_case.h"

// The mask array's const-ness follows each real declaration: Add, Adds, Exp and Select take
// `uint64_t mask[]` (a const array does not compile with CANN), Compare and Cast take
// `const uint64_t mask[]`.
template <typename M, typename = void> struct AddTakes : std::false_type {};
template <typename M>
struct AddTakes<M, std::void_t<decltype(Add(std::declval<LocalTensor<float> &>(), std::declval<LocalTensor<float> &>(),
                                            std::declval<LocalTensor<float> &>(), std::declval<M>(), uint8_t(1),
                                            BinaryRepeatParams()))>> : std::true_type {};
template <typename M, typename = void> struct ExpTakes : std::false_type {};
template <typename M>
struct ExpTakes<M, std::void_t<decltype(Exp(std::declval<LocalTensor<float> &>(), std::declval<LocalTensor<float> &>(),
                                            std::declval<M>(), uint8_t(1), UnaryRepeatParams()))>> : std::true_type {};
template <typename M, typename = void> struct CompareTakes : std::false_type {};
template <typename M>
struct CompareTakes<
    M, std::void_t<decltype(Compare(std::declval<LocalTensor<uint8_t> &>(), std::declval<LocalTensor<float> &>(),
                                    std::declval<LocalTensor<float> &>(), CMPMODE::LT, std::declval<M>(), uint8_t(1),
                                    BinaryRepeatParams()))>> : std::true_type {};
static_assert(AddTakes<uint64_t *>::value && !AddTakes<const uint64_t *>::value, "Add: uint64_t mask[]");
static_assert(ExpTakes<uint64_t *>::value && !ExpTakes<const uint64_t *>::value, "Exp: uint64_t mask[]");
static_assert(CompareTakes<const uint64_t *>::value, "Compare: const uint64_t mask[]");

// Level-0 binary op: partial continuous mask, 2 repeats, src0 block stride 2.
static void vec_level0_mask_stride()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<float> a = all, b = all[1024], d = all[2048];
        for (int i = 0; i < 1024; ++i) {
            a.SetValue(i, float(i));
            b.SetValue(i, 1000.0f);
        }
        Duplicate(d, -1.0f, 256);
        BinaryRepeatParams p(1, 2, 1, 8, 16, 8);
        Add(d, a, b, 20, 2, p);  // lanes 0..19 of each of 2 repeats
        for (int r = 0; r < 2; ++r)
            for (int i = 0; i < 64; ++i) {
                const float want = i < 20 ? float(r * 128 + (i / 8) * 16 + i % 8) + 1000.0f : -1.0f;
                EXPECT(d.GetValue(r * 64 + i) == want, "r%d lane %d: %f != %f", r, i, d.GetValue(r * 64 + i), want);
            }
        uint64_t bits[2] = {0x5ull, 0};  // lanes 0 and 2
        Duplicate(d, -1.0f, 64);
        Mul(d, a, b, bits, 1, BinaryRepeatParams());
        EXPECT(d.GetValue(0) == 0.0f && d.GetValue(1) == -1.0f && d.GetValue(2) == 2000.0f, "bit mask");
    });
}

// Every level-2 arithmetic op against its scalar definition, float and half (half results are
// the float result rounded once).
template <typename T> static void AllOpsOf(LocalTensor<T> all)
{
    LocalTensor<T> a = all, b = all[256], d = all[512];
    for (int i = 0; i < 128; ++i) {
        a.SetValue(i, T(0.25f * (i - 64)));
        b.SetValue(i, T(1.5f + 0.125f * (i % 9)));
    }
    auto check = [&](const char *name, float (*want)(float, float)) {
        for (int i = 0; i < 128; ++i) {
            const float x = float(a.GetValue(i)), y = float(b.GetValue(i));
            const float w = float(T(want(x, y)));
            const float got = float(d.GetValue(i));
            EXPECT(got == w || (std::isnan(got) && std::isnan(w)), "%s(%g, %g) = %g, want %g (%zu-byte)", name, x, y,
                   got, w, sizeof(T));
        }
    };
    Sub(d, a, b, 128);
    check("Sub", [](float x, float y) { return x - y; });
    Div(d, a, b, 128);
    check("Div", [](float x, float y) { return x / y; });
    Max(d, a, b, 128);
    check("Max", [](float x, float y) { return x > y ? x : y; });
    Min(d, a, b, 128);
    check("Min", [](float x, float y) { return x < y ? x : y; });
    Adds(d, a, T(0.75f), 128);
    check("Adds", [](float x, float) { return x + 0.75f; });
    Maxs(d, a, T(1.0f), 128);
    check("Maxs", [](float x, float) { return x > 1.0f ? x : 1.0f; });
    Mins(d, a, T(1.0f), 128);
    check("Mins", [](float x, float) { return x < 1.0f ? x : 1.0f; });
    Exp(d, a, 128);
    check("Exp", [](float x, float) { return std::exp(x); });
    Ln(d, b, 128);
    check("Ln", [](float, float y) { return std::log(y); });
    Abs(d, a, 128);
    check("Abs", [](float x, float) { return std::fabs(x); });
    Sqrt(d, b, 128);
    check("Sqrt", [](float, float y) { return std::sqrt(y); });
    Reciprocal(d, b, 128);
    check("Reciprocal", [](float, float y) { return 1.0f / y; });
    Rsqrt(d, b, 128);
    check("Rsqrt", [](float, float y) { return 1.0f / std::sqrt(y); });
    Relu(d, a, 128);
    check("Relu", [](float x, float) { return x > 0 ? x : 0.0f; });
}
static void vec_all_ops()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        AllOpsOf(buf.Get<float>());
        AllOpsOf(buf.Get<half>()[2048]);
    });
}

// dst overlapping src1 with repStride 0 accumulates repeat after repeat.
static void vec_accumulate_repstride0()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<float> rows = all, acc = all[4096];
        for (int i = 0; i < 4 * 64; ++i) rows.SetValue(i, float(i / 64 + 1));
        Duplicate(acc, 0.0f, 64);
        Add(acc, rows, acc, 64, 4, BinaryRepeatParams(1, 1, 1, 0, 8, 0));
        EXPECT(acc.GetValue(5) == 10.0f, "accumulated %f != 10", acc.GetValue(5));
    });
}

// Counter mode: the count spans repeats; level-2 calls leave the mask all ones, normal mode.
static void vec_counter_mode()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<half> all = buf.Get<half>();
        LocalTensor<half> a = all, d = all[1024];
        Duplicate(a, half(2.0f), 512);
        Duplicate(d, half(0.0f), 512);
        SetMaskCount();
        SetVectorMask<half, MaskMode::COUNTER>(0, 200);
        Muls<half, false>(d, a, half(3.0f), MASK_PLACEHOLDER, 1, UnaryRepeatParams());
        SetMaskNorm();
        ResetMask();
        EXPECT(float(d.GetValue(199)) == 6.0f && float(d.GetValue(200)) == 0.0f, "counter mode tail %f %f",
               float(d.GetValue(199)), float(d.GetValue(200)));
        Adds(d, a, half(1.0f), 3);
        EXPECT(!emu::Ctx().maskCounterMode && emu::Ctx().maskLow == ~0ull, "level-2 restores normal mode, full mask");
    });
}

// fp16 arithmetic rounds once per instruction to nearest even.
static void half_rounding()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<half> all = buf.Get<half>();
        LocalTensor<half> a = all, b = all[128], d = all[256];
        Duplicate(a, half(1.0f), 128);
        Duplicate(b, half(std::ldexp(1.0f, -11)), 128);  // exactly half an ulp of 1.0
        Add(d, a, b, 128);
        EXPECT(float(d.GetValue(0)) == 1.0f, "1 + 2^-11 ties to even: %g", float(d.GetValue(0)));
        Duplicate(a, half(1.0f + std::ldexp(1.0f, -10)), 128);
        Add(d, a, b, 128);
        EXPECT(float(d.GetValue(0)) == 1.0f + std::ldexp(1.0f, -9), "(1+2^-10) + 2^-11 ties up to even: %g",
               float(d.GetValue(0)));
        Duplicate(a, half(60000.0f), 128);
        Add(d, a, a, 128);
        EXPECT(std::isinf(float(d.GetValue(0))), "overflow gives inf in INF/NAN mode");
    });
}

// Cast: every implemented round mode on float -> half, float -> int32 and float -> bfloat16_t.
static void cast_round_modes()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> f = buf.Get<float>();
        LocalTensor<half> h = f[256].ReinterpretCast<half>();
        LocalTensor<int32_t> i32 = f[512].ReinterpretCast<int32_t>();
        LocalTensor<bfloat16_t> bf = f[768].ReinterpretCast<bfloat16_t>();
        const float up = 1.0f + std::ldexp(1.0f, -10);   // next half above 1
        const float q = 1.0f + std::ldexp(1.0f, -12);    // a quarter ulp above 1
        const float tie = 1.0f + std::ldexp(1.0f, -11);  // exactly between 1 and up
        f.SetValue(0, q);
        f.SetValue(1, -q);
        f.SetValue(2, tie);
        f.SetValue(3, -2.5f);
        f.SetValue(4, 2.5f);
        f.SetValue(5, 1e6f);
        f.SetValue(6, NAN);
        f.SetValue(7, 3.7f);
        struct {
            RoundMode m;
            float w0, w1, w2;
        } hc[] = {{RoundMode::CAST_RINT, 1.0f, -1.0f, 1.0f},  {RoundMode::CAST_NONE, 1.0f, -1.0f, 1.0f},
                  {RoundMode::CAST_FLOOR, 1.0f, -up, 1.0f},   {RoundMode::CAST_CEIL, up, -1.0f, up},
                  {RoundMode::CAST_TRUNC, 1.0f, -1.0f, 1.0f}, {RoundMode::CAST_ROUND, 1.0f, -1.0f, up},
                  {RoundMode::CAST_ODD, up, -up, up}};
        for (auto &c : hc) {
            Cast(h, f, c.m, 64);
            EXPECT(float(h.GetValue(0)) == c.w0 && float(h.GetValue(1)) == c.w1 && float(h.GetValue(2)) == c.w2,
                   "half mode %d: %.8g %.8g %.8g", int(c.m), float(h.GetValue(0)), float(h.GetValue(1)),
                   float(h.GetValue(2)));
            EXPECT(std::isinf(float(h.GetValue(5))) || c.m == RoundMode::CAST_FLOOR || c.m == RoundMode::CAST_TRUNC ||
                       c.m == RoundMode::CAST_ODD,
                   "1e6 overflows to inf in mode %d", int(c.m));
        }
        struct {
            RoundMode m;
            int w3, w4, w7;
        } ic[] = {{RoundMode::CAST_RINT, -2, 2, 4},
                  {RoundMode::CAST_FLOOR, -3, 2, 3},
                  {RoundMode::CAST_CEIL, -2, 3, 4},
                  {RoundMode::CAST_ROUND, -3, 3, 4},
                  {RoundMode::CAST_TRUNC, -2, 2, 3}};
        for (auto &c : ic) {
            Cast(i32, f, c.m, 64);
            EXPECT(i32.GetValue(3) == c.w3 && i32.GetValue(4) == c.w4 && i32.GetValue(7) == c.w7 &&
                       i32.GetValue(6) == 0,
                   "int32 mode %d: %d %d %d nan->%d", int(c.m), i32.GetValue(3), i32.GetValue(4), i32.GetValue(7),
                   i32.GetValue(6));
        }
        f.SetValue(0, 1.0f + std::ldexp(1.0f, -8));  // bf16 tie between 1 and 1+2^-7
        Cast(bf, f, RoundMode::CAST_RINT, 64);
        EXPECT(float(bf.GetValue(0)) == 1.0f, "bf16 RINT tie to even: %g", float(bf.GetValue(0)));
        Cast(bf, f, RoundMode::CAST_CEIL, 64);
        EXPECT(float(bf.GetValue(0)) == 1.0f + std::ldexp(1.0f, -7), "bf16 CEIL");
        Cast(f, bf, RoundMode::CAST_NONE, 64);
        EXPECT(f.GetValue(0) == 1.0f + std::ldexp(1.0f, -7), "bf16 -> float exact");
    });
}

static void compare_select()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<float> a = all, b = all[256], d = all[512];
        LocalTensor<uint8_t> bits = all[768].ReinterpretCast<uint8_t>();
        for (int i = 0; i < 128; ++i) {
            a.SetValue(i, float(i));
            b.SetValue(i, 64.0f);
        }
        Compare(bits, a, b, CMPMODE::LT, 128);
        EXPECT(bits.GetValue(0) == 0xff && bits.GetValue(7) == 0xff && bits.GetValue(8) == 0 && bits.GetValue(15) == 0,
               "LT bits");
        Select(d, bits, a, b, SELMODE::VSEL_TENSOR_TENSOR_MODE, 128);
        EXPECT(d.GetValue(10) == 10.0f && d.GetValue(100) == 64.0f, "Select tensor-tensor %f %f", d.GetValue(10),
               d.GetValue(100));
        Compares(bits, a, 3.0f, CMPMODE::EQ, 64);
        EXPECT(bits.GetValue(0) == 0x08, "Compares EQ bits %x", bits.GetValue(0));
        Compare(bits, a, b, CMPMODE::GE, 128);                             // lanes 64..127 set
        Select(d, bits, a, -5.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 128);  // bits consumed across repeats
        EXPECT(d.GetValue(3) == -5.0f && d.GetValue(70) == 70.0f, "Select tensor-scalar %f %f", d.GetValue(3),
               d.GetValue(70));
        Duplicate(d, 0.0f, 128);
        Select(d, bits, a, b, SELMODE::VSEL_CMPMASK_SPR, 64, 2,
               BinaryRepeatParams());  // first 64 bits reused per repeat
        EXPECT(d.GetValue(70) == 64.0f && d.GetValue(6) == 64.0f, "Select mode 0 reuses the first bits %f",
               d.GetValue(70));
    });
}

static void reductions()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<half> all = buf.Get<half>();
        LocalTensor<half> a = all, d = all[1024], tmp = all[2048];
        for (int i = 0; i < 256; ++i) a.SetValue(i, half(float(i % 128) * 0.25f));
        a.SetValue(77, half(1000.0f));
        WholeReduceSum(d, a, 128, 2, 1, 1, 8);
        const float s0 = float(d.GetValue(0)), s1 = float(d.GetValue(1));
        EXPECT(s1 == 2032.0f, "WholeReduceSum repeat 1: %g", s1);
        EXPECT(std::fabs(s0 - (2032.0f - 19.25f + 1000.0f)) < 1.0f, "WholeReduceSum repeat 0: %g", s0);
        WholeReduceMax(d, a, 128, 1, 1, 1, 8);
        uint16_t idx;
        std::memcpy(&idx, &d.GetPhyAddr()[1], 2);
        EXPECT(float(d.GetValue(0)) == 1000.0f && idx == 77, "WholeReduceMax value %g index %u", float(d.GetValue(0)),
               idx);
        BlockReduceSum(d, a, 1, 128, 1, 1, 8);
        EXPECT(float(d.GetValue(1)) == 0.25f * (16 * 16 + 120), "BlockReduceSum block 1: %g", float(d.GetValue(1)));
        ReduceMax(d, a, tmp, 256, true);
        std::memcpy(&idx, &d.GetPhyAddr()[1], 2);
        EXPECT(float(d.GetValue(0)) == 1000.0f && idx == 77, "ReduceMax with index");
        LocalTensor<float> fa = all[4096].ReinterpretCast<float>();
        LocalTensor<float> fd = all[8192].ReinterpretCast<float>();
        for (int i = 0; i < 1000; ++i) fa.SetValue(i, 1.0f);
        ReduceSum(fd, fa, fd[64], 1000);
        EXPECT(fd.GetValue(0) == 1000.0f, "ReduceSum %g", fd.GetValue(0));
    });
}

static void brcb_copy()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<float> s = all, d = all[256], c = all[1024];
        for (int i = 0; i < 16; ++i) s.SetValue(i, float(i));
        Brcb(d, s, 2, BrcbRepeatParams(1, 8));
        EXPECT(d.GetValue(0) == 0.0f && d.GetValue(7) == 0.0f && d.GetValue(8) == 1.0f && d.GetValue(64 + 8) == 9.0f,
               "Brcb");
        Copy(c, d, 64, 2, CopyRepeatParams(1, 1, 8, 8));
        EXPECT(c.GetValue(72) == 9.0f, "Copy");
    });
}

// Sort (A2 layout) and Extract: full sort of 64 float scores with ties (input order kept), the
// per-group form, a half sort, and int32 key arithmetic that still computes in timing-only mode.
static void sort_extract()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<float> score = all, sorted = all[64], tmp = all[192], val = all[320];
        LocalTensor<uint32_t> idx = all[384].ReinterpretCast<uint32_t>(), out = all[448].ReinterpretCast<uint32_t>();
        for (int i = 0; i < 64; ++i) {
            score.SetValue(i, float((i * 37) % 64 / 2));  // every score twice
            idx.SetValue(i, uint32_t(1000 + i));
        }
        Sort<float, true>(sorted, score, idx, tmp, 2);
        Extract(val, out, sorted, 2);
        bool ok = true;
        for (int i = 0; i < 64; ++i) {
            ok = ok && val.GetValue(i) == float(31 - i / 2);
            if (i % 2 == 1) ok = ok && out.GetValue(i) > out.GetValue(i - 1);  // ties keep input order
            const uint32_t src = out.GetValue(i) - 1000;
            ok = ok && score.GetValue(src) == val.GetValue(i);
        }
        EXPECT(ok, "full Sort: %f %u %f %u", val.GetValue(0), out.GetValue(0), val.GetValue(63), out.GetValue(63));
        EXPECT(sorted.ReinterpretCast<uint32_t>().GetValue(1) == out.GetValue(0), "index in the high 4 bytes");
        Sort<float, false>(sorted, score, idx, tmp, 2);
        Extract(val, out, sorted, 2);
        bool group = true;
        for (int i = 1; i < 64; ++i)
            if (i % 32 != 0) group = group && val.GetValue(i) <= val.GetValue(i - 1);
        for (int i = 0; i < 64; ++i) group = group && (out.GetValue(i) - 1000) / 32 == uint32_t(i / 32);
        EXPECT(group, "per-group Sort");
        LocalTensor<half> hs = all[512].ReinterpretCast<half>(), hsorted = all[576].ReinterpretCast<half>(),
                          hval = all[704].ReinterpretCast<half>();
        for (int i = 0; i < 32; ++i) hs.SetValue(i, half(float(i % 5)));
        LocalTensor<half> htmp = tmp.ReinterpretCast<half>();
        Sort<half, true>(hsorted, hs, idx, htmp, 1);
        Extract(hval, out, hsorted, 1);
        EXPECT(float(hval.GetValue(0)) == 4.0f && float(hval.GetValue(31)) == 0.0f && out.GetValue(0) == 1004u &&
                   out.GetValue(31) == 1030u,
               "half Sort %f %u", float(hval.GetValue(0)), out.GetValue(0));
    });
    setenv("ASCEND_EMU_TIMING_ONLY", "1", 1);
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<int32_t> k = buf.Get<int32_t>();
        for (int i = 0; i < 64; ++i) k.SetValue(i, i);
        Muls(k, k, int32_t(-1), 64);
        Adds(k, k, int32_t(100), 64);
        Duplicate(k[32], int32_t(-5), 32);
        EXPECT(k.GetValue(3) == 97 && k.GetValue(40) == -5, "integer ops compute in timing-only mode: %d %d",
               k.GetValue(3), k.GetValue(40));
    });
    unsetenv("ASCEND_EMU_TIMING_ONLY");
}

static void bitwise_axpy()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<uint16_t> u = buf.Get<uint16_t>();
        LocalTensor<uint16_t> a = u, b = u[128], d = u[256];
        Duplicate(a, static_cast<uint16_t>(0xF0F0), 128);
        Duplicate(b, static_cast<uint16_t>(0x3C3C), 128);
        And(d, a, b, 128);
        EXPECT(d.GetValue(5) == 0x3030, "And %x", d.GetValue(5));
        Or(d, a, b, 128);
        EXPECT(d.GetValue(5) == 0xFCFC, "Or %x", d.GetValue(5));
        Not(d, a, 128);
        EXPECT(d.GetValue(127) == 0x0F0F, "Not %x", d.GetValue(127));
        LocalTensor<float> f = buf.Get<float>()[1024];
        Duplicate(f, 1.0f, 64);
        Duplicate(f[64], 3.0f, 64);
        Axpy(f, f[64], 0.5f, 64);
        EXPECT(f.GetValue(10) == 2.5f, "Axpy %f", f.GetValue(10));
    });
}

// FusedMulAdd: dst = src0 * dst + src1, level 2, and level 0 with src0 one block for every
// repeat (block and repeat stride 0) and src1 one block per row (the softmax's scale * S - m).
static void fused_mul_add()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> f = buf.Get<float>();
        LocalTensor<float> d = f, a = f[256], b = f[512], k = f[768], m = f[776];
        Duplicate(d, 3.0f, 128);
        Duplicate(a, 0.5f, 128);
        Duplicate(b, -1.0f, 128);
        FusedMulAdd(d, a, b, 128);
        EXPECT(d.GetValue(100) == 0.5f, "FusedMulAdd level 2 %f", d.GetValue(100));
        for (int i = 0; i < 256; ++i) d.SetValue(i, float(i));  // two rows of 128
        Duplicate(k, 0.25f, 8);
        Duplicate(m, -1.0f, 8);
        Duplicate(m[8], -2.0f, 8);
        FusedMulAdd(d, k, m, uint64_t(64), uint8_t(2), BinaryRepeatParams(1, 0, 0, 16, 0, 1));
        FusedMulAdd(d[64], k, m, uint64_t(64), uint8_t(2), BinaryRepeatParams(1, 0, 0, 16, 0, 1));
        EXPECT(d.GetValue(8) == 1.0f && d.GetValue(127) == 30.75f, "FusedMulAdd row 0 %f %f", d.GetValue(8),
               d.GetValue(127));
        EXPECT(d.GetValue(128) == 30.0f && d.GetValue(200) == 48.0f, "FusedMulAdd row 1 %f %f", d.GetValue(128),
               d.GetValue(200));
    });
}

// ShiftRight: logical on unsigned, arithmetic on signed elements, roundEn adding the last bit
// shifted out (signed only); a shift by the full width; ShiftLeft beside it.
static void shifts()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<uint16_t> u = buf.Get<uint16_t>();
        Duplicate(u, static_cast<uint16_t>(0xAAAA), 128);
        ShiftRight(u[128], u, static_cast<uint16_t>(1), 128);
        EXPECT(u.GetValue(130) == 0x5555, "logical ShiftRight %x", u.GetValue(130));
        ShiftRight(u[128], u, static_cast<uint16_t>(16), 128);
        EXPECT(u.GetValue(200) == 0, "ShiftRight by the width %x", u.GetValue(200));
        ShiftLeft(u[128], u, static_cast<uint16_t>(1), 128);
        EXPECT(u.GetValue(255) == 0x5554, "ShiftLeft %x", u.GetValue(255));
        LocalTensor<int16_t> h = buf.Get<int16_t>()[256];
        Duplicate(h, static_cast<int16_t>(0xAAAA), 128);
        ShiftRight(h[128], h, static_cast<int16_t>(3), 128);
        EXPECT(static_cast<uint16_t>(h.GetValue(131)) == 0xF555, "arithmetic ShiftRight %x",
               static_cast<uint16_t>(h.GetValue(131)));
        LocalTensor<int32_t> w = buf.Get<int32_t>()[512];
        Duplicate(w, 17, 64);
        Duplicate(w[8], -17, 8);
        ShiftRight(w[64], w, 5, 64);
        EXPECT(w.GetValue(64) == 0 && w.GetValue(72) == -1, "int32 ShiftRight %d %d", w.GetValue(64), w.GetValue(72));
        ShiftRight(w[64], w, 5, 64, 1, UnaryRepeatParams(), true);  // 17 = 0b10001: bit 4 set, +1
        EXPECT(w.GetValue(64) == 1 && w.GetValue(72) == -1, "rounded ShiftRight %d %d", w.GetValue(64), w.GetValue(72));
        ShiftRight(w[64], w, 32, 64);
        EXPECT(w.GetValue(70) == 0 && w.GetValue(75) == -1, "ShiftRight by the width %d %d", w.GetValue(70),
               w.GetValue(75));
        LocalTensor<uint32_t> x = buf.Get<uint32_t>()[768];
        Duplicate(x, 0x80000011u, 64);
        ShiftRight(x[64], x, 4u, 64, 1, UnaryRepeatParams(), true);  // unsigned: roundEn has no effect
        EXPECT(x.GetValue(64) == 0x08000001u, "uint32 ShiftRight %x", x.GetValue(64));
    });
}

// ---- misuse: each must abort with a message naming the API ----
static void misuse_sort_nan()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> all = buf.Get<float>();
        LocalTensor<uint32_t> idx = all[32].ReinterpretCast<uint32_t>();
        for (int i = 0; i < 32; ++i) all.SetValue(i, i == 7 ? __builtin_nanf("") : 1.0f);
        LocalTensor<float> tmp = all[128];
        Sort<float, true>(all[64], all, idx, tmp, 1);
    });
}
static void misuse_shift_range()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<uint16_t> u = buf.Get<uint16_t>();
        ShiftRight(u[128], u, static_cast<uint16_t>(17), 128);
    });
}

static void misuse_cast_mode()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> f = buf.Get<float>();
        Cast(f[256].ReinterpretCast<bfloat16_t>(), f, RoundMode::CAST_NONE, 64);
    });
}

void AddVectorCases(ApiCases &cases)
{
    const ApiCases mine = {
        {"vec_level0_mask_stride", vec_level0_mask_stride},
        {"vec_accumulate_repstride0", vec_accumulate_repstride0},
        {"vec_counter_mode", vec_counter_mode},
        {"vec_all_ops", vec_all_ops},
        {"half_rounding", half_rounding},
        {"cast_round_modes", cast_round_modes},
        {"compare_select", compare_select},
        {"reductions", reductions},
        {"brcb_copy", brcb_copy},
        {"sort_extract", sort_extract},
        {"misuse_sort_nan", misuse_sort_nan},
        {"bitwise_axpy", bitwise_axpy},
        {"fused_mul_add", fused_mul_add},
        {"shifts", shifts},
        {"misuse_shift_range", misuse_shift_range},
        {"misuse_cast_mode", misuse_cast_mode},
    };
    AddCases(cases, mine);
}
