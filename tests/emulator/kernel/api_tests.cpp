// Per-API semantic tests of the emulator, one case per invocation: api_tests <case>.
// Prints "PASS <case>" and exits 0, or prints each mismatch and exits 1. Misuse cases are
// expected to abort with a message; pytest runs every case in its own process.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>

#include "emu/soc.h"
#include "kernel_operator_list_tensor_intf.h"
#include "tikicpulib.h"

using namespace AscendC;

static int g_failures = 0;
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
            std::printf(__VA_ARGS__);                                                                                  \
            std::printf("\n");                                                                                         \
            ++g_failures;                                                                                              \
        }                                                                                                              \
    } while (0)

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

static void Run(emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    emu::LaunchConfig cfg;
    cfg.name = "api_test";
    cfg.mix = mix;
    cfg.blockDim = blockDim;
    emu::Launch(cfg, body, ASCEND_EMU_ABI_STAMP);
}
static void OnOneAiv(const std::function<void(TPipe &, TBuf<TPosition::VECCALC> &)> &body)
{
    Run(emu::CoreMix::AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64 * 1024);
        body(pipe, buf);
    });
}

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

static void data_copy_pad()
{
    auto *gm = static_cast<float *>(GmAlloc(64 * sizeof(float)));
    for (int i = 0; i < 64; ++i) gm[i] = float(i);
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<float> u = buf.Get<float>();
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 64);
        // 3 rows of 5 floats, GM gap 3 floats: each UB row takes 1 block; pad with -7.
        DataCopyPad(u, g, DataCopyExtParams(3, 5 * 4, 3 * 4, 0, 0), DataCopyPadExtParams<float>(true, 0, 0, -7.0f));
        EXPECT(u.GetValue(0) == 0.0f && u.GetValue(4) == 4.0f && u.GetValue(5) == -7.0f && u.GetValue(8) == 8.0f &&
                   u.GetValue(16) == 16.0f,
               "GM->UB pad rows %f %f %f %f", u.GetValue(4), u.GetValue(5), u.GetValue(8), u.GetValue(16));
        DataCopyPad(g[40], u, DataCopyExtParams(2, 5 * 4, 0, 4, 0));  // UB gap 0 blocks, GM gap 1 float
        EXPECT(g.GetValue(40) == 0.0f && g.GetValue(44) == 4.0f && g.GetValue(45) == 45.0f && g.GetValue(46) == 8.0f,
               "UB->GM rows %f %f %f", g.GetValue(44), g.GetValue(45), g.GetValue(46));
    });
    GmFree(gm);
}

// 4:2 sparse matmul, C = A (16 x 64) * B^T with B (16 x 64) keeping two non-zeros in every four
// K elements: the filter is densified to 16 x 32 with one 2-bit index per kept element (first of
// a group: its position 0-2; second: its position minus 1), packed four per byte from bit 0.
static void cube_sparse()
{
    auto *a = static_cast<int8_t *>(GmAlloc(1024));
    auto *bd = static_cast<int8_t *>(GmAlloc(512));
    auto *idx = static_cast<uint8_t *>(GmAlloc(128));
    auto *c = static_cast<int32_t *>(GmAlloc(256 * 4));
    int8_t b[16][64] = {};
    for (int j = 0; j < 16; ++j)
        for (int g = 0; g < 16; ++g) {
            const int p0 = (j + g) % 3, p1 = p0 + 1 + (j * 7 + g) % (3 - p0);  // 0 <= p0 < p1 <= 3
            b[j][4 * g + p0] = static_cast<int8_t>((j * 3 + g) % 9 + 1);
            b[j][4 * g + p1] = static_cast<int8_t>(-((j + g * 5) % 7 + 1));
            const int e0 = j * 32 + 2 * g, e1 = e0 + 1;  // the L0B Zn fractal: row j, K contiguous
            bd[e0] = b[j][4 * g + p0];
            bd[e1] = b[j][4 * g + p1];
            idx[e0 / 4] |= static_cast<uint8_t>(p0 << (e0 % 4 * 2));
            idx[e1 / 4] |= static_cast<uint8_t>((p1 - 1) << (e1 % 4 * 2));
        }
    // A in L0A's Zz order: two 16 x 32 fractals along K.
    for (int i = 0; i < 16; ++i)
        for (int k = 0; k < 64; ++k)
            a[(k / 32) * 512 + i * 32 + k % 32] = static_cast<int8_t>((i * 5 + k * 3) % 15 - 7);
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        TPipe pipe;
        TBuf<TPosition::B1> l1;
        TBuf<TPosition::A2> a2;
        TBuf<TPosition::B2> b2;
        TBuf<TPosition::CO1> co1;
        pipe.InitBuffer(l1, 1024);
        pipe.InitBuffer(a2, 1024);
        pipe.InitBuffer(b2, 512);
        pipe.InitBuffer(co1, 1024);
        GlobalTensor<int8_t> ag, bg;
        GlobalTensor<uint8_t> ig;
        GlobalTensor<int32_t> cg;
        ag.SetGlobalBuffer(a, 1024);
        bg.SetGlobalBuffer(bd, 512);
        ig.SetGlobalBuffer(idx, 128);
        cg.SetGlobalBuffer(c, 256);
        LocalTensor<int8_t> bl1 = l1.Get<int8_t>();
        LocalTensor<uint8_t> il1 = l1.Get<uint8_t>()[512];
        DataCopy(bl1, bg, 512);
        DataCopy(il1, ig, 128);
        LoadData(a2.Get<int8_t>(), ag, LoadData2DParams(0, 2, 1, 0, 0, false, 0));
        LoadDataWithSparse(b2.Get<int8_t>(), bl1, il1, LoadData2dParams(0, 1, 1, 0, 0, false, 0));
        MmadWithSparse(co1.Get<int32_t>(), a2.Get<int8_t>(), b2.Get<int8_t>(), MmadParams(16, 16, 64, 0, false, true));
        Fixpipe(cg, co1.Get<int32_t>(), FixpipeParamsV220(16, 16, 16, 16, false));
    });
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
            int32_t s = 0;
            for (int k = 0; k < 64; ++k) s += a[(k / 32) * 512 + i * 32 + k % 32] * b[j][k];
            EXPECT(c[i * 16 + j] == s, "C[%d][%d] = %d, want %d", i, j, c[i * 16 + j], s);
        }
    GmFree(a);
    GmFree(bd);
    GmFree(idx);
    GmFree(c);
}

// The same for int4b_t, two elements per byte: a 64 x 64 square is four 16 x 64 fractals, and
// LoadDataWithTranspose turns it into four transposed ones; Mmad multiplies nibbles.
static int Nibble(const uint8_t *p, int e)
{
    const int v = (p[e / 2] >> (e % 2 * 4)) & 0xf;
    return v >= 8 ? v - 16 : v;
}
static void cube_transpose_b4()
{
    auto *x = static_cast<uint8_t *>(GmAlloc(2048));
    auto *y = static_cast<uint8_t *>(GmAlloc(2048));
    auto *c = static_cast<int32_t *>(GmAlloc(4096 * 4));
    for (int i = 0; i < 2048; ++i) x[i] = static_cast<uint8_t>((i * 5 + i / 7) % 256);
    for (int i = 0; i < 2048; ++i) y[i] = static_cast<uint8_t>((i * 11 + 3) % 256);
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        TPipe pipe;
        TBuf<TPosition::A1> xb, yb;
        TBuf<TPosition::A2> a2b;
        TBuf<TPosition::B2> b2b;
        TBuf<TPosition::CO1> cb;
        pipe.InitBuffer(xb, 2048);
        pipe.InitBuffer(yb, 2048);
        pipe.InitBuffer(a2b, 2048);
        pipe.InitBuffer(b2b, 2048);
        pipe.InitBuffer(cb, 4096 * 4);
        GlobalTensor<int4b_t> xg, yg;
        GlobalTensor<int32_t> cg;
        xg.SetGlobalBuffer(reinterpret_cast<__gm__ int4b_t *>(x), 4096);
        yg.SetGlobalBuffer(reinterpret_cast<__gm__ int4b_t *>(y), 4096);
        cg.SetGlobalBuffer(c, 4096);
        LocalTensor<int4b_t> x1 = xb.Get<int4b_t>(), y1 = yb.Get<int4b_t>();
        DataCopy(x1, xg, 4096);
        DataCopy(y1, yg, 4096);
        LoadDataWithTranspose(a2b.Get<int4b_t>(), y1, LoadData2dTransposeParams(0, 1, 1, 0, 0));
        LoadDataWithTranspose(b2b.Get<int4b_t>(), x1, LoadData2dTransposeParams(0, 1, 1, 0, 0));
        MmadParams mm(64, 64, 64, 0, false, true);
        Mmad(cb.Get<int32_t>(), a2b.Get<int4b_t>(), b2b.Get<int4b_t>(), mm);
        FixpipeParamsV220 fix(64, 64, 64, 64, false);
        Fixpipe(cg, cb.Get<int32_t>(), fix);
    });
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 64; ++j) {
            int32_t s = 0;
            for (int k = 0; k < 64; ++k) s += Nibble(y, k * 64 + i) * Nibble(x, k * 64 + j);
            EXPECT(c[i * 64 + j] == s, "C[%d][%d] = %d, want (Y^T X) %d", i, j, c[i * 64 + j], s);
        }
    GmFree(x);
    GmFree(y);
    GmFree(c);
}

// int4b_t: two elements per byte, element 2j in the low nibble. A GlobalTensor offset counts
// elements (g[64] is byte 32), DataCopy's count too (64 elements = 32 bytes), and Cast to half
// reads nibbles, sign-extended.
static void int4_copy_cast()
{
    auto *gm = static_cast<uint8_t *>(GmAlloc(64));
    for (int i = 0; i < 64; ++i) gm[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<int4b_t> q = buf.Get<int4b_t>();
        LocalTensor<half> h = buf.Get<half>()[512];
        GlobalTensor<int4b_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int4b_t *>(gm), 128);
        EXPECT(q.GetSize() == 8192, "a 4096-byte int4b_t tensor holds %u elements", q.GetSize());
        DataCopy(q, g[64], 64);  // bytes 32..63
        Duplicate(h, half(99.0f), 256);
        Cast(h, q, RoundMode::CAST_NONE, 100);  // counter mode: 100 of the 128 lanes of one repeat
        for (int j = 0; j < 32; ++j) {
            const int lo = (32 + j) % 16, hi = 15 - lo;
            const float wantLo = float(lo >= 8 ? lo - 16 : lo), wantHi = float(hi >= 8 ? hi - 16 : hi);
            if (2 * j + 1 < 100)
                EXPECT(float(h.GetValue(2 * j)) == wantLo && float(h.GetValue(2 * j + 1)) == wantHi,
                       "byte %d: %g %g, want %g %g", 32 + j, float(h.GetValue(2 * j)), float(h.GetValue(2 * j + 1)),
                       wantLo, wantHi);
        }
        EXPECT(float(h.GetValue(100)) == 99.0f, "lane 100 is past the count: %g", float(h.GetValue(100)));
        DataCopy(q, g, 128);  // the whole 64 bytes
        Cast(h, q, RoundMode::CAST_NONE, 128);
        EXPECT(float(h.GetValue(126)) == -1.0f && float(h.GetValue(127)) == 0.0f, "byte 63 (0x0f): %g %g",
               float(h.GetValue(126)), float(h.GetValue(127)));
    });
    GmFree(gm);
}
static void misuse_int4_odd_offset()
{
    auto *gm = static_cast<uint8_t *>(GmAlloc(64));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        GlobalTensor<int4b_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int4b_t *>(gm), 128);
        (void)g[3];
    });
}

// ListTensorDesc over the block the op runner builds for a tensor-list input: header word,
// per-tensor (dimNum | index << 32) + dims, then the data pointers.
static void list_tensor_desc()
{
    auto *a = static_cast<float *>(GmAlloc(8 * sizeof(float)));
    auto *b = static_cast<float *>(GmAlloc(8 * sizeof(float)));
    a[0] = 1.5f;
    b[0] = 2.5f;
    auto *desc = static_cast<uint64_t *>(GmAlloc(8 * sizeof(uint64_t)));
    const uint64_t words[] = {6 * sizeof(uint64_t), 2, 2, 4, 1ULL | (1ULL << 32), 8};  // shapes (2, 4), (8)
    std::memcpy(desc, words, sizeof(words));
    desc[6] = reinterpret_cast<uintptr_t>(a);
    desc[7] = reinterpret_cast<uintptr_t>(b);
    Run(emu::CoreMix::AIV_ONLY, 1, [&] {
        ListTensorDesc list(reinterpret_cast<__gm__ void *>(desc));
        EXPECT(list.GetSize() == 2, "GetSize %u", list.GetSize());
        EXPECT(list.GetDataPtr<float>(0) == a && list.GetDataPtr<float>(1) == b, "data pointers");
        EXPECT(list.GetDataPtr<float>(1)[0] == 2.5f, "read through pointer 1");
    });
    GmFree(desc);
    GmFree(b);
    GmFree(a);
}

// A 32x16 (M x K) times 16x32 (K x N) product through the fractal path; a LoadData of B
// without the transpose (wrong Zn layout) must give different numbers.
static void cube_fractal(bool transposeB, float *out)
{
    auto *a = static_cast<half *>(GmAlloc(32 * 16 * 2));
    auto *b = static_cast<half *>(GmAlloc(16 * 32 * 2));
    auto *c = static_cast<float *>(GmAlloc(32 * 32 * 4));
    for (int i = 0; i < 32 * 16; ++i) a[i] = half(float((i * 3) % 7) - 3.0f);
    for (int i = 0; i < 16 * 32; ++i) b[i] = half(float((i * 5) % 9) - 4.0f);
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        TPipe pipe;
        TBuf<TPosition::A1> a1b;
        TBuf<TPosition::B1> b1b;
        TBuf<TPosition::A2> a2b;
        TBuf<TPosition::B2> b2b;
        TBuf<TPosition::CO1> cb;
        pipe.InitBuffer(a1b, 1024);
        pipe.InitBuffer(b1b, 1024);
        pipe.InitBuffer(a2b, 1024);
        pipe.InitBuffer(b2b, 1024);
        pipe.InitBuffer(cb, 4096);
        GlobalTensor<half> ag, bg;
        GlobalTensor<float> cg;
        ag.SetGlobalBuffer(a, 512);
        bg.SetGlobalBuffer(b, 512);
        cg.SetGlobalBuffer(c, 1024);
        LocalTensor<half> a1 = a1b.Get<half>(), b1 = b1b.Get<half>(), a2 = a2b.Get<half>(), b2 = b2b.Get<half>();
        LocalTensor<float> c1 = cb.Get<float>();
        DataCopy(a1, ag, Nd2NzParams(1, 32, 16, 0, 16, 32, 1, 0));
        DataCopy(b1, bg, Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0));
        for (int i = 0; i < 2; ++i) LoadData(a2[i * 256], a1, LoadData2DParams(i, 1, 2, 0, 0, false, 0));
        LoadData(b2, b1, LoadData2DParams(0, 2, 1, 0, 0, transposeB, 0));
        MmadParams mm;
        mm.m = 32;
        mm.n = 32;
        mm.k = 16;
        Mmad(c1, a2, b2, mm);
        mm.cmatrixInitVal = false;  // accumulate a second time: C = 2AB
        Mmad(c1, a2, b2, mm);
        FixpipeParamsV220 fix;
        fix.nSize = 32;
        fix.mSize = 32;
        fix.srcStride = 32;
        fix.dstStride = 32;
        Fixpipe(cg, c1, fix);
    });
    for (int i = 0; i < 32 * 32; ++i) out[i] = c[i];
    if (transposeB) {
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < 32; ++j) {
                float s = 0;
                for (int k = 0; k < 16; ++k) s += float(a[i * 16 + k]) * float(b[k * 32 + j]);
                EXPECT(c[i * 32 + j] == 2 * s, "C[%d][%d] = %g, want %g", i, j, c[i * 32 + j], 2 * s);
            }
    }
    GmFree(a);
    GmFree(b);
    GmFree(c);
}
static void cube_fractal_layouts()
{
    static float right[1024], wrong[1024];
    cube_fractal(true, right);
    cube_fractal(false, wrong);
    int diff = 0;
    for (int i = 0; i < 1024; ++i) diff += right[i] != wrong[i];
    EXPECT(diff > 500, "a wrong L0B layout must change the result (%d of 1024 differ)", diff);
}

// LoadDataWithTranspose on 32-bit elements: C = Y^T.X for two 16x16 float matrices (k = 16
// rows), each staged in L1 as two 16x8 fractals side by side (one 16x16 square). Y^T goes to
// L0A (its square transposed into the k fractals 0 and 1 of the m row: dstGap 1), X to L0B
// (transposed into k fractals 0 and 1 of the one n column: dstFracGap 0).
static void cube_transpose_b32()
{
    auto *x = static_cast<float *>(GmAlloc(256 * 4));
    auto *y = static_cast<float *>(GmAlloc(256 * 4));
    auto *c = static_cast<float *>(GmAlloc(256 * 4));
    for (int i = 0; i < 256; ++i) x[i] = float((i * 5) % 11) - 5.0f;
    for (int i = 0; i < 256; ++i) y[i] = float((i * 7) % 13) - 6.0f;
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        TPipe pipe;
        TBuf<TPosition::A1> xb, yb;
        TBuf<TPosition::A2> a2b;
        TBuf<TPosition::B2> b2b;
        TBuf<TPosition::CO1> cb;
        pipe.InitBuffer(xb, 1024);
        pipe.InitBuffer(yb, 1024);
        pipe.InitBuffer(a2b, 1024);
        pipe.InitBuffer(b2b, 1024);
        pipe.InitBuffer(cb, 1024);
        GlobalTensor<float> xg, yg, cg;
        xg.SetGlobalBuffer(x, 256);
        yg.SetGlobalBuffer(y, 256);
        cg.SetGlobalBuffer(c, 256);
        LocalTensor<float> x1 = xb.Get<float>(), y1 = yb.Get<float>();
        // one 16-row group: column fractals 0 (cols 0-7) and 1 (cols 8-15) one after the other
        DataCopy(x1, xg, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
        DataCopy(y1, yg, Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0));
        LoadDataWithTranspose(a2b.Get<float>(), y1, LoadData2dTransposeParams(0, 1, 1, 1, 0));
        LoadDataWithTranspose(b2b.Get<float>(), x1, LoadData2dTransposeParams(0, 1, 1, 0, 0));
        MmadParams mm(16, 16, 16, 0, false, true);
        Mmad(cb.Get<float>(), a2b.Get<float>(), b2b.Get<float>(), mm);
        FixpipeParamsV220 fix(16, 16, 16, 16, false);
        Fixpipe(cg, cb.Get<float>(), fix);
    });
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
            float s = 0;
            for (int k = 0; k < 16; ++k) s += y[k * 16 + i] * x[k * 16 + j];
            EXPECT(c[i * 16 + j] == s, "C[%d][%d] = %g, want (Y^T X) %g", i, j, c[i * 16 + j], s);
        }
    GmFree(x);
    GmFree(y);
    GmFree(c);
}

// LoadDataWithTranspose on 8-bit elements: C = Y^T.X for two 32x32 int8 matrices (k = 32), each
// one 32x32 square in L1 (two 16x32 fractals, rows 0-15 and 16-31); the transposed square comes
// out as two 16x32 fractals: the two m rows of fractals in L0A, the two n columns in L0B.
static void cube_transpose_b8()
{
    auto *x = static_cast<int8_t *>(GmAlloc(1024));
    auto *y = static_cast<int8_t *>(GmAlloc(1024));
    auto *c = static_cast<int32_t *>(GmAlloc(1024 * 4));
    for (int i = 0; i < 1024; ++i) x[i] = static_cast<int8_t>((i * 5) % 11 - 5);
    for (int i = 0; i < 1024; ++i) y[i] = static_cast<int8_t>((i * 7) % 13 - 6);
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        TPipe pipe;
        TBuf<TPosition::A1> xb, yb;
        TBuf<TPosition::A2> a2b;
        TBuf<TPosition::B2> b2b;
        TBuf<TPosition::CO1> cb;
        pipe.InitBuffer(xb, 1024);
        pipe.InitBuffer(yb, 1024);
        pipe.InitBuffer(a2b, 1024);
        pipe.InitBuffer(b2b, 1024);
        pipe.InitBuffer(cb, 4096);
        GlobalTensor<int8_t> xg, yg;
        GlobalTensor<int32_t> cg;
        xg.SetGlobalBuffer(x, 1024);
        yg.SetGlobalBuffer(y, 1024);
        cg.SetGlobalBuffer(c, 1024);
        LocalTensor<int8_t> x1 = xb.Get<int8_t>(), y1 = yb.Get<int8_t>();
        DataCopy(x1, xg, 1024);
        DataCopy(y1, yg, 1024);
        LoadDataWithTranspose(a2b.Get<int8_t>(), y1, LoadData2dTransposeParams(0, 1, 1, 0, 0));
        LoadDataWithTranspose(b2b.Get<int8_t>(), x1, LoadData2dTransposeParams(0, 1, 1, 0, 0));
        MmadParams mm(32, 32, 32, 0, false, true);
        Mmad(cb.Get<int32_t>(), a2b.Get<int8_t>(), b2b.Get<int8_t>(), mm);
        FixpipeParamsV220 fix(32, 32, 32, 32, false);
        Fixpipe(cg, cb.Get<int32_t>(), fix);
    });
    for (int i = 0; i < 32; ++i)
        for (int j = 0; j < 32; ++j) {
            int32_t s = 0;
            for (int k = 0; k < 32; ++k) s += y[k * 32 + i] * x[k * 32 + j];
            EXPECT(c[i * 32 + j] == s, "C[%d][%d] = %d, want (Y^T X) %d", i, j, c[i * 32 + j], s);
        }
    GmFree(x);
    GmFree(y);
    GmFree(c);
}

// int8 x int8 -> int32 through Nd2Nz (C0 = 32) and LoadData, B given as [N, K] so its Nz image
// is already Zn; then GEMV (m = 1 reads L0A as a plain vector) and Fixpipe with atomic add.
static void cube_int8_gemv_atomic()
{
    const int M = 20, N = 24, K = 40;
    auto *a = static_cast<int8_t *>(GmAlloc(M * K));
    auto *bt = static_cast<int8_t *>(GmAlloc(N * K));
    auto *c = static_cast<int32_t *>(GmAlloc(M * N * 4));
    auto *v = static_cast<float *>(GmAlloc(K * 4));
    auto *w = static_cast<float *>(GmAlloc(K * N * 4));
    auto *y = static_cast<float *>(GmAlloc(N * 4));
    for (int i = 0; i < M * K; ++i) a[i] = static_cast<int8_t>((i * 37) % 255 - 127);
    for (int i = 0; i < N * K; ++i) bt[i] = static_cast<int8_t>((i * 91) % 251 - 125);
    for (int i = 0; i < K; ++i) v[i] = 0.25f * (i % 5);
    for (int i = 0; i < K * N; ++i) w[i] = float(i % 3) - 1.0f;
    for (int i = 0; i < N; ++i) y[i] = 100.0f;
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        TPipe pipe;
        TBuf<TPosition::A1> a1b;
        TBuf<TPosition::B1> b1b;
        TBuf<TPosition::A2> a2b;
        TBuf<TPosition::B2> b2b;
        TBuf<TPosition::CO1> cb;
        pipe.InitBuffer(a1b, 4096);
        pipe.InitBuffer(b1b, 8192);
        pipe.InitBuffer(a2b, 4096);
        pipe.InitBuffer(b2b, 8192);
        pipe.InitBuffer(cb, 8192);
        GlobalTensor<int8_t> ag, bg;
        GlobalTensor<int32_t> cg;
        ag.SetGlobalBuffer(a, M * K);
        bg.SetGlobalBuffer(bt, N * K);
        cg.SetGlobalBuffer(c, M * N);
        LocalTensor<int8_t> a1 = a1b.Get<int8_t>(), b1 = b1b.Get<int8_t>(), a2 = a2b.Get<int8_t>(),
                            b2 = b2b.Get<int8_t>();
        // M1 = 2, N1 = 2, K1 = 2 (K0 = 32): A Nz with row pitch 32, B^T Nz with row pitch 32.
        DataCopy(a1, ag, Nd2NzParams(1, M, K, 0, K, 32, 1, 0));
        DataCopy(b1, bg, Nd2NzParams(1, N, K, 0, K, 32, 1, 0));
        for (int i = 0; i < 2; ++i) LoadData(a2[i * 2 * 512], a1, LoadData2DParams(i, 2, 2, 0, 0, false, 0));
        for (int kk = 0; kk < 2; ++kk) LoadData(b2[kk * 2 * 512], b1, LoadData2DParams(kk * 2, 2, 1, 0, 0, false, 0));
        MmadParams mm;
        mm.m = M;
        mm.n = N;
        mm.k = K;
        LocalTensor<int32_t> c1 = cb.Get<int32_t>();
        Mmad(c1, a2, b2, mm);
        FixpipeParamsV220 fix;
        fix.nSize = N;
        fix.mSize = M;
        fix.srcStride = 32;
        fix.dstStride = N;
        Fixpipe(cg, c1, fix);
        // GEMV (m = 1): y += v * W, v a plain float vector in L0A, W given as W^T [N, K] (K0 = 8).
        GlobalTensor<float> vg, wg, yg;
        vg.SetGlobalBuffer(v, K);
        wg.SetGlobalBuffer(w, K * N);
        yg.SetGlobalBuffer(y, N);
        LocalTensor<float> v1 = a1b.Get<float>(), va = a2b.Get<float>(), w1 = b1b.Get<float>(), w2 = b2b.Get<float>();
        DataCopy(v1, vg, K);
        LoadData(va, v1, LoadData2DParams(0, 1, 1, 0, 0, false, 0));
        DataCopy(w1, wg, Nd2NzParams(1, N, K, 0, K, 32, 1, 0));
        LoadData(w2, w1, LoadData2DParams(0, 10, 1, 0, 0, false, 0));  // K1 = 5, N1 = 2: already Zn
        LocalTensor<float> cf = cb.Get<float>();
        MmadParams gemv;
        gemv.m = 1;
        gemv.n = N;
        gemv.k = K;
        Mmad(cf, va, w2, gemv);
        SetAtomicAdd<float>();
        FixpipeParamsV220 fy;
        fy.nSize = N;
        fy.mSize = 1;
        fy.srcStride = 16;
        fy.dstStride = N;
        Fixpipe(yg, cf, fy);
        SetAtomicNone();
    });
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            int s = 0;
            for (int k = 0; k < K; ++k) s += a[i * K + k] * bt[j * K + k];
            EXPECT(c[i * N + j] == s, "int8 C[%d][%d] = %d, want %d", i, j, c[i * N + j], s);
        }
    for (int j = 0; j < N; ++j) {  // w holds W^T: w[j * K + k] = W[k][j]
        float s = 100.0f;
        float dot = 0.0f;
        for (int k = 0; k < K; ++k) dot += v[k] * w[j * K + k];
        s += dot;
        EXPECT(y[j] == s, "GEMV + atomic y[%d] = %g, want %g", j, y[j], s);
    }
    GmFree(a);
    GmFree(bt);
    GmFree(c);
    GmFree(v);
    GmFree(w);
    GmFree(y);
}

// Cube and vector cores ping-pong 20 times through cross-core flags (mode 2).
static void cross_core_pingpong()
{
    auto *g = static_cast<int32_t *>(GmAlloc(64 * sizeof(int32_t)));
    Run(emu::CoreMix::MIX_AIC_1_2, 3, [g] {
        const int b = static_cast<int>(GetBlockIdx() / GetTaskRation());
        for (int it = 0; it < 20; ++it) {
            if ASCEND_IS_AIC {
                g[b * 16] = it;
                CrossCoreSetFlag<2, PIPE_FIX>(1);
                CrossCoreWaitFlag(2);
                EXPECT(g[b * 16 + 1] == it && g[b * 16 + 2] == it, "AIVs answered iteration %d", it);
            }
            if ASCEND_IS_AIV {
                CrossCoreWaitFlag(1);
                g[b * 16 + 1 + GetSubBlockIdx()] = g[b * 16];
                CrossCoreSetFlag<2, PIPE_MTE3>(2);
            }
        }
    });
    GmFree(g);
}

static void sync_all()
{
    auto *g = static_cast<int32_t *>(GmAlloc(48 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 40, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        for (int round = 1; round <= 5; ++round) {
            g[i] = round;
            SyncAll();
            for (int j = 0; j < 40; ++j)
                EXPECT(g[j] >= round, "core %d saw core %d at %d in round %d", i, j, g[j], round);
            SyncAll();
        }
    });
    GmFree(g);
}

static void identity()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [] {
        if ASCEND_IS_AIV {
            EXPECT(GetBlockIdx() == emu::Ctx().block * 2 + GetSubBlockIdx() && GetTaskRation() == 2 &&
                       GetBlockNum() == 2,
                   "AIV identity");
        } else {
            EXPECT(GetBlockIdx() == emu::Ctx().block && GetTaskRation() == 1 && GetSubBlockIdx() == 0, "AIC identity");
        }
    });
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

static void misuse_shift_range()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<uint16_t> u = buf.Get<uint16_t>();
        ShiftRight(u[128], u, static_cast<uint16_t>(17), 128);
    });
}

// The SoC in use (ASCEND_EMU_SOC) sizes the local memories; launches wider than the SoC run in waves.
static void soc_selection()
{
    const emu::SocSpec &soc = emu::CurrentSoc();
    std::printf("soc %s aic %u aiv %u ub %llu l1 %llu\n", soc.name, soc.aicCores, soc.aivCores,
                (unsigned long long)soc.ubBytes, (unsigned long long)soc.l1Bytes);
    Run(emu::CoreMix::AIV_ONLY, 1, [&soc] {
        EXPECT(emu::Ctx().memSize[static_cast<int>(emu::Buf::UB)] == soc.ubBytes, "UB sized from the SoC table");
    });
    auto *g = static_cast<int32_t *>(GmAlloc(100 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 100, [g] { g[GetBlockIdx()] = static_cast<int32_t>(GetBlockIdx()) + 1; });
    for (int i = 0; i < 100; ++i) EXPECT(g[i] == i + 1, "block %d of a 100-block launch ran (%d)", i, g[i]);
    GmFree(g);
}

// Hazard checker (run with ASCEND_EMU_RACECHECK=1): a DMA-in read by the vector unit, with
// and without the MTE2 -> V ordering; a Mmad result read by Fixpipe without M -> FIX.
static void race_vector(bool synced)
{
    auto *gm = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm, synced] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 256);
        LocalTensor<float> t = buf.Get<float>();
        DataCopy(t, g, 256);
        if (synced) {
            SetFlag<HardEvent::MTE2_V>(0);
            WaitFlag<HardEvent::MTE2_V>(0);
        }
        Adds(t[256], t, 1.0f, 256);
        if (synced) {
            SetFlag<HardEvent::V_MTE3>(0);
            WaitFlag<HardEvent::V_MTE3>(0);
        }
        DataCopy(g, t[256], 256);
    });
    GmFree(gm);
}
static void race_vector_synced() { race_vector(true); }
static void race_vector_missing_sync() { race_vector(false); }
static void race_cube_missing_sync()
{
    auto *gm = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::AIC_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::A2> a;
        TBuf<TPosition::B2> b;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a, 512);
        pipe.InitBuffer(b, 512);
        pipe.InitBuffer(c, 1024);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 256);
        MmadParams mm;
        mm.m = 16;
        mm.n = 16;
        mm.k = 16;
        Mmad(c.Get<float>(), a.Get<half>(), b.Get<half>(), mm);  // L0A/L0B hold whatever is there
        FixpipeParamsV220 fix;
        fix.nSize = 16;
        fix.mSize = 16;
        fix.srcStride = 16;
        fix.dstStride = 16;
        Fixpipe(g, c.Get<float>(), fix);  // no SetFlag/WaitFlag<M_FIX>
    });
    GmFree(gm);
}

// Modelled duration of a Mmad 128x128x256 followed by its Fixpipe, handed over by unitFlag or
// by M_FIX events: with unitFlag the Fixpipe streams behind the Mmad, so the launch is shorter.
static double MmadFixpipeUs(bool unitFlag)
{
    auto *gm = static_cast<float *>(GmAlloc(128 * 128 * sizeof(float)));
    Run(emu::CoreMix::AIC_ONLY, 1, [gm, unitFlag] {
        TPipe pipe;
        TBuf<TPosition::A2> a;
        TBuf<TPosition::B2> b;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a, 64 * 1024);
        pipe.InitBuffer(b, 64 * 1024);
        pipe.InitBuffer(c, 64 * 1024);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 128 * 128);
        MmadParams mm(128, 128, 256, unitFlag ? 3 : 0, false, true);
        Mmad(c.Get<float>(), a.Get<half>(), b.Get<half>(), mm);
        FixpipeParamsV220 fix(128, 128, 128, 128, false);
        fix.unitFlag = unitFlag ? 3 : 0;
        if (!unitFlag) {
            SetFlag<HardEvent::M_FIX>(EVENT_ID0);
            WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
        }
        Fixpipe(g, c.Get<float>(), fix);
    });
    GmFree(gm);
    const std::string j = emu::LastLaunchProfileJson();
    const size_t at = j.find("\"task_duration_us\":");
    return at == std::string::npos ? -1.0 : std::atof(j.c_str() + at + 19);
}
static void unit_flag_timing()
{
    const double flags = MmadFixpipeUs(false), unit = MmadFixpipeUs(true);
    std::printf("modelled us: M_FIX events %.3f, unitFlag %.3f\n", flags, unit);
    EXPECT(flags > 0 && unit > 0 && unit < flags, "unitFlag %.3f us should be below the event hand-off %.3f us", unit,
           flags);
}

// ---- misuse: each must abort with a message naming the API ----
static void misuse_unit_flag_fixpipe_unset()
{
    auto *gm = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::AIC_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(c, 1024);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 256);
        FixpipeParamsV220 fix(16, 16, 16, 16, false);
        fix.unitFlag = 3;  // no Mmad with unitFlag 3 wrote the tile
        Fixpipe(g, c.Get<float>(), fix);
    });
    GmFree(gm);
}
static void misuse_unit_flag_mmad_unread()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::A2> a;
        TBuf<TPosition::B2> b;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a, 512);
        pipe.InitBuffer(b, 512);
        pipe.InitBuffer(c, 1024);
        MmadParams mm(16, 16, 16, 3, false, true);
        Mmad(c.Get<float>(), a.Get<half>(), b.Get<half>(), mm);
        Mmad(c.Get<float>(), a.Get<half>(), b.Get<half>(), mm);  // the first result was never read out
    });
}
static void misuse_sparse_load()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::B1> l1;
        TBuf<TPosition::A2> a;
        pipe.InitBuffer(l1, 1024);
        pipe.InitBuffer(a, 512);
        LoadDataWithSparse(a.Get<int8_t>(), l1.Get<int8_t>(), l1.Get<uint8_t>()[512],
                           LoadData2dParams(0, 1, 1, 0, 0, false, 0));
    });
}
static void misuse_nd2nz_rows_without_stride()
{
    auto *gm = static_cast<half *>(GmAlloc(256 * sizeof(half)));
    Run(emu::CoreMix::AIC_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::A1> l1;
        pipe.InitBuffer(l1, 1024);
        GlobalTensor<half> g;
        g.SetGlobalBuffer(gm, 256);
        DataCopy(l1.Get<half>(), g, Nd2NzParams(1, 2, 16, 0, 0, 2, 1, 0));  // two rows need a row stride
    });
    GmFree(gm);
}
static void misuse_tiling_key_not_a_literal()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        constexpr uint64_t key = 3;  // a constexpr name: CANN's kernel compiler cannot collect it
        if (TILING_KEY_IS(key)) std::printf("unreachable\n");
    });
}
static void misuse_initbuffer_fb()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::C2PIPE2GM> fb;
        pipe.InitBuffer(fb, 7 * 1024 + 32);
    });
}
// Each buffer of the cube core past its physical size (UB and FB: misuse_initbuffer_overflow/_fb).
template <TPosition P> static void OverfillOneAic(uint32_t bytes)
{
    Run(emu::CoreMix::AIC_ONLY, 1, [bytes] {
        TPipe pipe;
        TBuf<P> full, more;
        pipe.InitBuffer(full, bytes);
        pipe.InitBuffer(more, 32);
    });
}
static void misuse_initbuffer_l1() { OverfillOneAic<TPosition::A1>(512 * 1024); }
static void misuse_initbuffer_l0a() { OverfillOneAic<TPosition::A2>(64 * 1024); }
static void misuse_initbuffer_l0b() { OverfillOneAic<TPosition::B2>(64 * 1024); }
static void misuse_initbuffer_l0c() { OverfillOneAic<TPosition::CO1>(128 * 1024); }
// The launch's counters report, per core and as the maximum over cores, the highest byte of each
// local buffer handed out (InitBuffer, also before a Reset; LocalTensor's address constructor).
static void buffer_peaks()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [] {
        TPipe pipe;
        if ASCEND_IS_AIV {
            TQue<TPosition::VECIN, 2> q;
            pipe.InitBuffer(q, 2, 1000);  // 2 x 1024 B
            if (GetBlockIdx() == 3) {
                LocalTensor<float> t(TPosition::VECCALC, 8192, 100);  // bytes up to 8592
                (void)t;
            }
        } else {
            TBuf<TPosition::A1> l1, small;
            pipe.InitBuffer(l1, 512 * 1024);  // all of L1, then released
            pipe.Reset();
            pipe.InitBuffer(small, 100);
            TBuf<TPosition::A2> a;
            TBuf<TPosition::B2> b;
            TBuf<TPosition::CO1> c;
            pipe.InitBuffer(a, 64 * 1024);
            pipe.InitBuffer(b, GetBlockIdx() == 1 ? 40 * 1024 : 1000);
            pipe.InitBuffer(c, 128 * 1024);
        }
    });
    const std::string j = emu::LastLaunchCountersJson();
    const char *launch = "\"peak\":{\"UB\":8592,\"L1\":524288,\"L0A\":65536,\"L0B\":40960,\"L0C\":131072,\"BT\":0,"
                         "\"FB\":0}}";
    EXPECT(j.size() > std::strlen(launch) && j.compare(j.size() - std::strlen(launch), std::string::npos, launch) == 0,
           "launch peak: %s", j.c_str());
    const std::string profile = emu::LastLaunchProfileJson();
    EXPECT(profile.find(std::string(launch, std::strlen(launch) - 1) + ",\"cores\":[") != std::string::npos,
           "profile peak: %s", profile.c_str());
    EXPECT(j.find("\"sub\":\"aiv0\",") != std::string::npos && j.find("\"peak\":{\"UB\":2048}") != std::string::npos,
           "an AIV's peak: %s", j.c_str());
    EXPECT(j.find("\"peak\":{\"L1\":524288,\"L0A\":65536,\"L0B\":1024,\"L0C\":131072,\"BT\":0,\"FB\":0}") !=
               std::string::npos,
           "an AIC's peak: %s", j.c_str());
}
static void misuse_gm_out_of_range()
{
    auto *gm = static_cast<float *>(GmAlloc(100 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 100);
        DataCopy(buf.Get<float>(), g[64], 64);  // reads floats 64..127 of a 100-float allocation
    });
}
static void misuse_local_out_of_range()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> t = q.AllocTensor<float>();
        Exp(t, t, 300);  // 300 floats in a 256-float buffer
    });
}
static void misuse_initbuffer_overflow()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 100 * 1024);
    });
}
static void misuse_misaligned()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<float> t = buf.Get<float>();
        Add(t[3], t[64], t[128], 64);
    });
}
static void misuse_deque_empty()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> t = q.DeQue<float>();
        (void)t;
    });
}
static void misuse_wrong_position()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::A1> a1;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a1, 1024);
        pipe.InitBuffer(c, 1024);
        MmadParams mm;
        mm.m = 16;
        mm.n = 16;
        mm.k = 16;
        Mmad(c.Get<float>(), a1.Get<half>(), a1.Get<half>(), mm);  // fm must be in L0A, not L1
    });
}
static void misuse_cast_mode()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &buf) {
        LocalTensor<float> f = buf.Get<float>();
        Cast(f[256].ReinterpretCast<bfloat16_t>(), f, RoundMode::CAST_NONE, 64);
    });
}
static void misuse_waitflag_unset()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &) { WaitFlag<HardEvent::MTE2_V>(3); });
}
static void misuse_syncall_too_many_cores()
{
    Run(emu::CoreMix::AIV_ONLY, 60, [] { SyncAll(); });  // 60 > 48 AIVs of Ascend910B2
}
static void misuse_event_wrong_core()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] { SetFlag<HardEvent::V_MTE3>(0); });  // a vector-core event on the cube
}
static void deadlock_missing_set()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(5);
        }  // no vector core ever sets flag 5
    });
}
static void deadlock_cycle()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(1);
            CrossCoreSetFlag<2, PIPE_FIX>(2);
        }
        if ASCEND_IS_AIV {
            CrossCoreWaitFlag(2);
            CrossCoreSetFlag<2, PIPE_MTE3>(1);
        }
    });
}
// Each vector core's CrossCoreSetFlag is its own: two sets by AIV 0 are not one set by each AIV.
static void deadlock_mode2_one_aiv_sets_twice()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(3);
        }  // needs a set from both AIVs of core 0
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0) {
                CrossCoreSetFlag<2, PIPE_MTE3>(3);
                CrossCoreSetFlag<2, PIPE_MTE3>(3);
            }
        }
    });
}
static void deadlock_mode1_one_aiv_sets_twice()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0) {
                CrossCoreSetFlag<1, PIPE_MTE3>(4);
                CrossCoreSetFlag<1, PIPE_MTE3>(4);
            } else {
                CrossCoreWaitFlag(4);
            }  // the group set needs AIV 1's own set too
        }
    });
}

int main(int argc, char **argv)
{
    const std::map<std::string, void (*)()> cases = {
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
        {"data_copy_pad", data_copy_pad},
        {"int4_copy_cast", int4_copy_cast},
        {"misuse_int4_odd_offset", misuse_int4_odd_offset},
        {"cube_fractal_layouts", cube_fractal_layouts},
        {"cube_transpose_b32", cube_transpose_b32},
        {"cube_transpose_b8", cube_transpose_b8},
        {"cube_transpose_b4", cube_transpose_b4},
        {"cube_sparse", cube_sparse},
        {"cross_core_pingpong", cross_core_pingpong},
        {"sync_all", sync_all},
        {"identity", identity},
        {"bitwise_axpy", bitwise_axpy},
        {"shifts", shifts},
        {"misuse_shift_range", misuse_shift_range},
        {"cube_int8_gemv_atomic", cube_int8_gemv_atomic},
        {"list_tensor_desc", list_tensor_desc},
        {"soc_selection", soc_selection},
        {"race_vector_synced", race_vector_synced},
        {"race_vector_missing_sync", race_vector_missing_sync},
        {"race_cube_missing_sync", race_cube_missing_sync},
        {"misuse_syncall_too_many_cores", misuse_syncall_too_many_cores},
        {"unit_flag_timing", unit_flag_timing},
        {"misuse_unit_flag_fixpipe_unset", misuse_unit_flag_fixpipe_unset},
        {"misuse_unit_flag_mmad_unread", misuse_unit_flag_mmad_unread},
        {"misuse_sparse_load", misuse_sparse_load},
        {"misuse_nd2nz_rows_without_stride", misuse_nd2nz_rows_without_stride},
        {"misuse_initbuffer_fb", misuse_initbuffer_fb},
        {"misuse_initbuffer_l1", misuse_initbuffer_l1},
        {"misuse_initbuffer_l0a", misuse_initbuffer_l0a},
        {"misuse_initbuffer_l0b", misuse_initbuffer_l0b},
        {"misuse_initbuffer_l0c", misuse_initbuffer_l0c},
        {"buffer_peaks", buffer_peaks},
        {"misuse_tiling_key_not_a_literal", misuse_tiling_key_not_a_literal},
        {"misuse_gm_out_of_range", misuse_gm_out_of_range},
        {"misuse_initbuffer_overflow", misuse_initbuffer_overflow},
        {"misuse_local_out_of_range", misuse_local_out_of_range},
        {"misuse_misaligned", misuse_misaligned},
        {"misuse_deque_empty", misuse_deque_empty},
        {"misuse_wrong_position", misuse_wrong_position},
        {"misuse_cast_mode", misuse_cast_mode},
        {"misuse_waitflag_unset", misuse_waitflag_unset},
        {"misuse_event_wrong_core", misuse_event_wrong_core},
        {"deadlock_missing_set", deadlock_missing_set},
        {"deadlock_cycle", deadlock_cycle},
        {"deadlock_mode2_one_aiv_sets_twice", deadlock_mode2_one_aiv_sets_twice},
        {"deadlock_mode1_one_aiv_sets_twice", deadlock_mode1_one_aiv_sets_twice},
    };
    if (argc != 2 || cases.count(argv[1]) == 0) {
        for (auto &c : cases) std::printf("%s\n", c.first.c_str());
        return argc == 2 && std::string(argv[1]) == "--list" ? 0 : 2;
    }
    cases.at(argv[1])();
    if (g_failures == 0) std::printf("PASS %s\n", argv[1]);
    return g_failures == 0 ? 0 : 1;
}
