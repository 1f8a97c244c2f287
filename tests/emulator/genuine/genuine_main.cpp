// CPU-twin driver of the genuine-style kernels (ICPU_RUN_KF, GmAlloc, SetKernelMode, as CANN's
// kernel unit tests drive a kernel). Prints "PASS <kernel>" per kernel whose output matches the
// host reference; exits non-zero on any mismatch.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "tikicpulib.h"
#include "../../../op_kernel/attention_core/variants/decode_params.h"

extern "C" void events_vec_add(GM_ADDR x, GM_ADDR y);
extern "C" void events_mmad(GM_ADDR a, GM_ADDR b, GM_ADDR c);
extern "C" void list_gather(GM_ADDR list, GM_ADDR y);
extern "C" void conv_unit_flag(GM_ADDR fmap, GM_ADDR weights, GM_ADDR bias, GM_ADDR out, GM_ADDR outBias,
                               GM_ADDR filled);
extern "C" void load3d_layouts(GM_ADDR a, GM_ADDR aT, GM_ADDR bT, GM_ADDR c, GM_ADDR c2);
extern "C" void vec_5hd(GM_ADDR x, GM_ADDR u, GM_ADDR f, GM_ADDR pq, GM_ADDR out);
extern "C" void int8_digit_vector(GM_ADDR x, GM_ADDR unit, GM_ADDR sHi, GM_ADDR sLo, GM_ADDR scale, GM_ADDR digits,
                                  GM_ADDR s);
extern "C" void int8_digit_block(GM_ADDR qd, GM_ADDR pd, GM_ADDR k, GM_ADDR v, GM_ADDR s, GM_ADDR o);
extern "C" void int8_digit_rows(GM_ADDR x, GM_ADDR prod, GM_ADDR unit, GM_ADDR slot, GM_ADDR s);
extern "C" void int8_digit_folds(GM_ADDR x, GM_ADDR out, GM_ADDR cfg);
extern "C" void int8_query_digits(GM_ADDR query, GM_ADDR scale, GM_ADDR region, GM_ADDR tiling);
extern "C" void int8_digit_cube(GM_ADDR qd, GM_ADDR kv, GM_ADDR pd, GM_ADDR shape, GM_ADDR s, GM_ADDR o);
extern "C" void int8_digit_softmax(GM_ADDR sProd, GM_ADDR rUnits, GM_ADDR slot, GM_ADDR stats);
extern "C" void int8_digit_fold(GM_ADDR oProd, GM_ADDR stats, GM_ADDR out);
extern "C" void ib_sync_ring(GM_ADDR x, GM_ADDR y, GM_ADDR stage, GM_ADDR sync);
extern "C" void ib_sync_mix(GM_ADDR x, GM_ADDR y, GM_ADDR stage, GM_ADDR sync);
extern "C" void int8_digit_unit(GM_ADDR q, GM_ADDR scale, GM_ADDR k8, GM_ADDR v8, GM_ADDR ws, GM_ADDR out,
                                GM_ADDR tiling);

namespace {
int g_failures = 0;

void Report(const char *name, int bad)
{
    if (bad == 0) {
        std::printf("PASS %s\n", name);
    } else {
        std::printf("FAIL %s: %d wrong elements\n", name, bad);
        ++g_failures;
    }
}

void VecAdd()
{
    constexpr uint32_t blocks = 3, n = blocks * 4 * 256;
    auto *x = static_cast<half *>(AscendC::GmAlloc(n * sizeof(half)));
    auto *y = static_cast<half *>(AscendC::GmAlloc(n * sizeof(half)));
    for (uint32_t i = 0; i < n; ++i) x[i] = half(static_cast<float>(i % 97) * 0.25f);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(events_vec_add, blocks, x, y);
    int bad = 0;
    for (uint32_t i = 0; i < n; ++i) bad += static_cast<float>(y[i]) != static_cast<float>(i % 97) * 0.25f + 1.5f;
    Report("events_vec_add", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

void Mmad()
{
    auto *a = static_cast<half *>(AscendC::GmAlloc(32 * 16 * sizeof(half)));
    auto *b = static_cast<half *>(AscendC::GmAlloc(16 * 32 * sizeof(half)));
    auto *c = static_cast<float *>(AscendC::GmAlloc(32 * 32 * sizeof(float)));
    for (int i = 0; i < 32 * 16; ++i) a[i] = half(static_cast<float>((i * 3) % 7) - 3.0f);
    for (int i = 0; i < 16 * 32; ++i) b[i] = half(static_cast<float>((i * 5) % 9) - 4.0f);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(events_mmad, 1, a, b, c);
    int bad = 0;
    for (int i = 0; i < 32; ++i) {
        for (int j = 0; j < 32; ++j) {
            float s = 0.0f;
            for (int k = 0; k < 16; ++k) s += static_cast<float>(a[i * 16 + k]) * static_cast<float>(b[k * 32 + j]);
            bad += c[i * 32 + j] != s;
        }
    }
    Report("events_mmad", bad);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(c);
}

void ListGather()
{
    // The tensor-list block of three tensors of shapes (16), (2, 16), (32): header word = byte
    // offset of the pointer array, per tensor (dimNum | index << 32) and its dims, then pointers.
    half *t[3];
    const int sizes[3] = {16, 32, 32};
    for (int i = 0; i < 3; ++i) {
        t[i] = static_cast<half *>(AscendC::GmAlloc(sizes[i] * sizeof(half)));
        for (int e = 0; e < sizes[i]; ++e) t[i][e] = half(static_cast<float>(100 * i + e));
    }
    const uint64_t words[] = {8 * sizeof(uint64_t), 1, 16, 2ULL | (1ULL << 32), 2, 16, 1ULL | (2ULL << 32), 32};
    auto *desc = static_cast<uint64_t *>(AscendC::GmAlloc(11 * sizeof(uint64_t)));
    std::memcpy(desc, words, sizeof(words));
    for (int i = 0; i < 3; ++i) desc[8 + i] = reinterpret_cast<uintptr_t>(t[i]);
    auto *y = static_cast<half *>(AscendC::GmAlloc(3 * 16 * sizeof(half)));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(list_gather, 1, desc, y);
    int bad = 0;
    for (int i = 0; i < 3; ++i) {
        for (int e = 0; e < 16; ++e) bad += static_cast<float>(y[i * 16 + e]) != static_cast<float>(100 * i + e);
    }
    Report("list_gather", bad);
    for (half *p : t) AscendC::GmFree(p);
    AscendC::GmFree(desc);
    AscendC::GmFree(y);
}
template <class T> T *Alloc(size_t n) { return static_cast<T *>(AscendC::GmAlloc(n * sizeof(T))); }

void ConvUnitFlag()
{
    constexpr int H = 4, W = 4, C = 16, N = 16, M = H * W, K = 9 * C;
    half *fmap = Alloc<half>(M * C), *weights = Alloc<half>(K * N), *bias = Alloc<half>(32), *filled = Alloc<half>(48);
    float *out = Alloc<float>(M * N), *outBias = Alloc<float>(M * N);
    auto in = [](int p, int c) { return static_cast<float>((p * 7 + c * 3) % 5 - 2); };
    auto b = [](int k, int n) { return static_cast<float>((k * 5 + n * 3) % 7 - 3); };
    for (int p = 0; p < M; ++p)
        for (int c = 0; c < C; ++c) fmap[p * C + c] = half(in(p, c));
    for (int k = 0; k < K; ++k)  // the L0B (Zn) fractal order: (k / 16, n) rows of 16 k
        for (int n = 0; n < N; ++n) weights[(k / 16) * 256 + n * 16 + k % 16] = half(b(k, n));
    for (int n = 0; n < 32; ++n) bias[n] = half(n < N ? static_cast<float>(n - 8) : 0.0f);
    for (int i = 0; i < 48; ++i) filled[i] = half(static_cast<float>(i));
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(conv_unit_flag, 1, fmap, weights, bias, out, outBias, filled);
    int bad = 0;
    for (int oh = 0; oh < H; ++oh)
        for (int ow = 0; ow < W; ++ow)
            for (int n = 0; n < N; ++n) {
                float s = 0.0f;
                for (int kh = 0; kh < 3; ++kh)
                    for (int kw = 0; kw < 3; ++kw) {
                        const int h = oh + kh - 1, w = ow + kw - 1;
                        if (h < 0 || h >= H || w < 0 || w >= W) continue;
                        for (int c = 0; c < C; ++c) s += in(h * W + w, c) * b((kh * 3 + kw) * C + c, n);
                    }
                const int m = oh * W + ow;
                bad += out[m * N + n] != s;
                bad += outBias[m * N + n] != s + static_cast<float>(n - 8);
            }
    for (int i = 0; i < 48; ++i) bad += static_cast<float>(filled[i]) != (i / 16 == 1 ? static_cast<float>(i) : 2.5f);
    Report("conv_unit_flag", bad);
    for (void *p : {static_cast<void *>(fmap), static_cast<void *>(weights), static_cast<void *>(bias),
                    static_cast<void *>(filled), static_cast<void *>(out), static_cast<void *>(outBias)})
        AscendC::GmFree(p);
}

void Load3dLayouts()
{
    constexpr int M = 32, K = 32, N = 48;
    half *a = Alloc<half>(M * K), *aT = Alloc<half>(K * M), *bT = Alloc<half>(N * K);
    float *c = Alloc<float>(M * N), *c2 = Alloc<float>(M * N);
    auto av = [](int m, int k) { return static_cast<float>((m * 3 + k * 5) % 9 - 4); };
    auto bv = [](int k, int n) { return static_cast<float>((k * 7 + n) % 5 - 2); };
    for (int m = 0; m < M; ++m)
        for (int k = 0; k < K; ++k) {
            a[m * K + k] = half(av(m, k));
            aT[k * M + m] = half(av(m, k));
        }
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < N; ++n) bT[n * K + k] = half(bv(k, n));
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(load3d_layouts, 1, a, aT, bT, c, c2);
    int bad = 0;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            float s = 0.0f;
            for (int k = 0; k < K; ++k) s += av(m, k) * bv(k, n);
            bad += (c[m * N + n] != s) + (c2[m * N + n] != s);
        }
    Report("load3d_layouts", bad);
    for (void *p : {static_cast<void *>(a), static_cast<void *>(aT), static_cast<void *>(bT), static_cast<void *>(c),
                    static_cast<void *>(c2)})
        AscendC::GmFree(p);
}

void Vec5hd()
{
    half *x = Alloc<half>(256), *pq = Alloc<half>(128);
    auto *u = Alloc<uint16_t>(256);
    float *f = Alloc<float>(256);
    auto *out = Alloc<uint8_t>(3616);
    for (int i = 0; i < 256; ++i) {
        x[i] = half(static_cast<float>(i) * 0.5f);
        u[i] = static_cast<uint16_t>(i * 257);
        f[i] = static_cast<float>(i % 64 - 20 + i / 64);
    }
    for (int j = 0; j < 64; ++j) {
        pq[j] = half(static_cast<float>(j % 7 - 3));
        pq[64 + j] = half(static_cast<float>(j % 5) * 0.5f);
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(vec_5hd, 1, x, u, f, pq, out);
    const auto *o16 = reinterpret_cast<const half *>(out);
    const auto *ou = reinterpret_cast<const uint16_t *>(out + 1536);
    const auto *osum = reinterpret_cast<const float *>(out + 3072);
    const auto *od = reinterpret_cast<const float *>(out + 3360);
    int bad = 0;
    for (int r = 0; r < 16; ++r)
        for (int col = 0; col < 16; ++col) {
            bad += static_cast<float>(o16[256 + col * 16 + r]) != static_cast<float>(x[r * 16 + col]);  // y = x^T
            bad += static_cast<float>(o16[512 + r * 16 + col]) != static_cast<float>(x[r * 16 + col]);  // z = x
        }
    for (int i = 0; i < 256; ++i) bad += ou[i] != static_cast<uint16_t>(u[i] << 3);
    for (int r = 0; r < 4; ++r) {
        float s = 0.0f;
        for (int j = 0; j < 64; ++j) s += f[r * 64 + j];
        bad += osum[r] != s;
    }
    for (int j = 0; j < 64; ++j) bad += od[j] != static_cast<float>(pq[j]) * static_cast<float>(pq[64 + j]) + 1.0f;
    Report("vec_5hd", bad);
    for (void *p : {static_cast<void *>(x), static_cast<void *>(pq), static_cast<void *>(u), static_cast<void *>(f),
                    static_cast<void *>(out)})
        AscendC::GmFree(p);
}

void Int8DigitBlock()
{
    constexpr int R = 16, D = 128, L = 128;
    int8_t *qd = Alloc<int8_t>(R * D), *pd = Alloc<int8_t>(R * L), *k = Alloc<int8_t>(L * D), *v = Alloc<int8_t>(L * D);
    int32_t *s = Alloc<int32_t>(R * L), *o = Alloc<int32_t>(R * D);
    // the whole int8 range, extremes included (-128 x -128 products)
    auto val = [](int i, int a, int b) { return static_cast<int8_t>((i * a + b) % 256 - 128); };
    for (int i = 0; i < R * D; ++i) qd[i] = val(i, 37, 11);
    for (int i = 0; i < R * L; ++i) pd[i] = val(i, 53, 5);
    for (int i = 0; i < L * D; ++i) k[i] = val(i, 91, 3);
    for (int i = 0; i < L * D; ++i) v[i] = val(i, 29, 77);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(int8_digit_block, 1, qd, pd, k, v, s, o);
    int bad = 0;
    for (int r = 0; r < R; ++r) {
        for (int j = 0; j < L; ++j) {  // S = Qd . K^T
            int32_t acc = 0;
            for (int d = 0; d < D; ++d) acc += qd[r * D + d] * k[j * D + d];
            bad += s[r * L + j] != acc;
        }
        for (int d = 0; d < D; ++d) {  // O = Pd . V
            int32_t acc = 0;
            for (int j = 0; j < L; ++j) acc += pd[r * L + j] * v[j * D + d];
            bad += o[r * D + d] != acc;
        }
    }
    Report("int8_digit_block", bad);
    for (void *p : {static_cast<void *>(qd), static_cast<void *>(pd), static_cast<void *>(k), static_cast<void *>(v),
                    static_cast<void *>(s), static_cast<void *>(o)})
        AscendC::GmFree(p);
}

void Int8DigitVector()
{
    constexpr int R = 8, C = 128, N = R * C;
    float *x = Alloc<float>(N), *unit = Alloc<float>(R), *scale = Alloc<float>(R), *s = Alloc<float>(N);
    int32_t *sHi = Alloc<int32_t>(N), *sLo = Alloc<int32_t>(N);
    auto *digits = Alloc<int8_t>(2 * N);
    for (int r = 0; r < R; ++r) {
        float amax = 0.0f;
        for (int c = 0; c < C; ++c) {
            // signed rows (the query) and rows in [0, 1] (P); exact halves of the unit step too
            const float v = std::sin(0.37f * static_cast<float>(r * C + c) + 0.5f) * (r % 2 ? 1.0f : 3.0f);
            x[r * C + c] = r % 4 == 3 ? std::fabs(v) : v;
            amax = std::fmax(amax, std::fabs(x[r * C + c]));
        }
        unit[r] = 32639.0f / amax;
        scale[r] = 1.0f / (static_cast<float>(r) + 3.0f);
    }
    x[5] = 128.5f / unit[0];  // a q16 near a digit boundary
    for (int i = 0; i < N; ++i) {
        sHi[i] = (i * 7919) % (1 << 22) - (1 << 21);
        sLo[i] = (i * 104729) % (1 << 22) - (1 << 21);
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(int8_digit_vector, 1, x, unit, sHi, sLo, scale, digits, s);
    int bad = 0;
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            const int i = r * C + c;
            const float q = std::nearbyint(x[i] * unit[r]);
            const float h = std::floor((q + 128.0f) * (1.0f / 256.0f));
            const float l = q - 256.0f * h;
            bad += digits[i] != static_cast<int8_t>(h) || digits[N + i] != static_cast<int8_t>(l);
            bad += 256 * digits[i] + digits[N + i] != static_cast<int>(q);
            const float e = (static_cast<float>(sHi[i]) * 256.0f + static_cast<float>(sLo[i])) * scale[r];
            bad += s[i] != e;
        }
    Report("int8_digit_vector", bad);
    for (void *p :
         {static_cast<void *>(x), static_cast<void *>(unit), static_cast<void *>(scale), static_cast<void *>(s),
          static_cast<void *>(sHi), static_cast<void *>(sLo), static_cast<void *>(digits)})
        AscendC::GmFree(p);
}

// The decode core's digit helpers (int8_digits.h): units computed in the kernel, digits in the
// int8 Nz slot, the combine scaled by the units; the reference repeats the fp32 steps.
void Int8DigitRows()
{
    constexpr int R = 8, C = 128, N = R * C;
    constexpr float QMAX = 32639.0f;
    float *x = Alloc<float>(N), *unit = Alloc<float>(64 + R), *s = Alloc<float>(N);  // units, q16 sums at 64
    int32_t *prod = Alloc<int32_t>(2 * N);
    auto *slot = Alloc<int8_t>(2 * N);
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) {
            const float v = std::sin(0.37f * static_cast<float>(r * C + c) + 0.5f) * (r % 2 ? 1.0f : 300.0f);
            x[r * C + c] = r == 6 ? 0.0f : r % 4 == 3 ? std::fabs(v) * 1e-3f : v;  // row 6: all zero
        }
    x[2 * C + 77] = -301.0f;  // a row whose largest magnitude is negative
    for (int i = 0; i < N; ++i) {
        prod[i] = (i * 7919) % (1 << 22) - (1 << 21);
        prod[N + i] = (i * 104729) % (1 << 22) - (1 << 21);
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(int8_digit_rows, 1, x, prod, unit, slot, s);
    int bad = 0;
    for (int r = 0; r < R; ++r) {
        float amax = 0.0f;
        for (int c = 0; c < C; ++c) amax = std::fmax(amax, std::fabs(x[r * C + c]));
        amax = std::fmax(amax, 1e-30f);
        const float inv = QMAX / amax;
        const float u = amax * (1.0f / QMAX);
        bad += unit[r] != u;
        float qsum = 0.0f;
        for (int c = 0; c < C; ++c) {
            const int i = r * C + c;
            const float q = std::fmin(std::fmax(std::nearbyint(x[i] * inv), -QMAX), QMAX);
            qsum += q;
            const float h = std::floor((q + 128.0f) * (1.0f / 256.0f));
            const float l = q - 256.0f * h;
            const int8_t dh = slot[(c / 32) * 16 * 32 + r * 32 + c % 32];
            const int8_t dl = slot[(c / 32) * 16 * 32 + (R + r) * 32 + c % 32];
            bad += dh != static_cast<int8_t>(h) || dl != static_cast<int8_t>(l);
            bad += std::fabs(x[i] - u * static_cast<float>(256 * dh + dl)) > 0.5001f * u + 1e-6f * std::fabs(x[i]);
            const float e = (static_cast<float>(prod[i]) * 256.0f + static_cast<float>(prod[N + i])) * u;
            bad += s[i] != e;
        }
        bad += unit[64 + r] != qsum;
    }
    Report("int8_digit_rows", bad);
    for (void *p : {static_cast<void *>(x), static_cast<void *>(unit), static_cast<void *>(s),
                    static_cast<void *>(prod), static_cast<void *>(slot)})
        AscendC::GmFree(p);
}

// The digit helpers' row folds (int8_digits.h) at 64-256 columns: the units (with and without
// nonNegative) and the row sums against the host's, on rows x >= 0 whose largest value sits in
// the last column.
void Int8DigitFolds()
{
    constexpr int R = 8;
    constexpr float QMAX = 32639.0f;
    int bad = 0;
    for (int C : {64, 128, 192, 256}) {
        float *x = Alloc<float>(R * C), *out = Alloc<float>(5 * 64);
        auto *cfg = Alloc<uint32_t>(8);
        cfg[0] = static_cast<uint32_t>(C);
        for (int r = 0; r < R; ++r)
            for (int c = 0; c < C; ++c)
                x[r * C + c] = static_cast<float>((c * 7 + r) % 13) + (c == C - 1 ? 50.0f + r : 0.0f);
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(int8_digit_folds, 1, x, out, cfg);
        for (int r = 0; r < R; ++r) {
            float amax = 0.0f, sum = 0.0f;
            for (int c = 0; c < C; ++c) {
                amax = std::fmax(amax, x[r * C + c]);
                sum += x[r * C + c];
            }
            const float u = amax * (1.0f / QMAX);
            bad += out[r] != u || out[128 + r] != u || out[64 + r] != QMAX / amax || out[192 + r] != QMAX / amax;
            bad += out[256 + r] != sum;
        }
        for (void *p : {static_cast<void *>(x), static_cast<void *>(out), static_cast<void *>(cfg)}) AscendC::GmFree(p);
    }
    Report("int8_digit_folds", bad);
}

// The query digits of a core's items (int8_query_digits.h): B x Nkv x G rows of D, units from
// unit 1 of kvSplits = 2 to unit 6 (items 0-2 of the core, from (batch 0, KV head 0) on),
// the key scale per tensor or per channel, the score scale folded in.
int Int8QueryDigitsCase(int G, int D, bool perChannel)
{
    constexpr float QMAX = 32639.0f;
    const int B = 2, NKV = 2, N = NKV * G, SPLITS = 2;
    const int rowsPad = (2 * G + 15) / 16 * 16;
    const int itemBytes = rowsPad * D + (G * 4 + 31) / 32 * 32;
    const int first = 1 / SPLITS, last = 6 / SPLITS;
    auto *q = Alloc<half>(B * N * D);
    auto *sc = Alloc<half>(2 * NKV * D);
    auto *region = Alloc<int8_t>((last - first + 1) * itemBytes);
    auto *td = Alloc<AttentionCore::DecodeTiling>(1);
    std::memset(td, 0, sizeof(*td));
    for (int i = 0; i < B * N * D; ++i) {
        const int row = i / D;
        const float mag = row % 3 == 0 ? 7.5f : row % 3 == 1 ? 0.02f : 1.0f;
        q[i] = half(std::sin(0.61f * static_cast<float>(i) + 0.3f) * mag);
    }
    for (int i = 0; i < D; ++i) q[(N + 2) * D + i] = half(0.0f);  // one zero row (batch 1, head 2)
    for (int i = 0; i < 2 * NKV * D; ++i) sc[i] = half(0.01f + 0.002f * static_cast<float>(i % 37));
    AttentionCore::ForwardParams &p = td->params;
    p.batch = B;
    p.numHeads = N;
    p.numKvHeads = NKV;
    p.groupSize = G;
    p.headDim = D;
    p.headDimAlign = D;
    p.blockQ = G <= 16 ? 16 : G;
    p.qBlocksPerHead = 1;
    p.qStrideB = N * D;
    p.qStrideN = D;
    p.coreUnitStart[0] = 1;
    p.coreUnitStart[1] = 7;
    td->score.scaleValue = 0.0883883f;
    td->decode.kvSplits = SPLITS;
    td->decode.antiPerChannel = perChannel ? 1 : 0;
    td->decode.digits.rowsPad = rowsPad;
    td->decode.digits.queryItemBytes = itemBytes;
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(int8_query_digits, 1, q, sc, region, td);
    int bad = 0;
    for (int item = first; item <= last; ++item) {
        const int b = item / NKV, kvHead = item % NKV;
        const int8_t *tile = region + (item - first) * itemBytes;
        const float *units = reinterpret_cast<const float *>(tile + rowsPad * D);
        for (int r = 0; r < G; ++r) {
            const half *row = q + b * N * D + (kvHead * G + r) * D;
            float x[256];
            float amax = 0.0f;
            for (int c = 0; c < D; ++c) {
                const float ks = perChannel ? static_cast<float>(sc[kvHead * D + c]) * 0.0883883f
                                            : static_cast<float>(sc[0]) * 0.0883883f;
                x[c] = static_cast<float>(row[c]) * ks;
                amax = std::fmax(amax, std::fabs(x[c]));
            }
            amax = std::fmax(amax, 1e-30f);
            const float inv = QMAX / amax, u = amax * (1.0f / QMAX);
            bad += units[r] != u;
            for (int c = 0; c < D; ++c) {
                const float qq = std::fmin(std::fmax(std::nearbyint(x[c] * inv), -QMAX), QMAX);
                const float h = std::floor((qq + 128.0f) * (1.0f / 256.0f));
                const int8_t dh = tile[(c / 32) * rowsPad * 32 + r * 32 + c % 32];
                const int8_t dl = tile[(c / 32) * rowsPad * 32 + (rowsPad / 2 + r) * 32 + c % 32];
                bad += dh != static_cast<int8_t>(h) || dl != static_cast<int8_t>(qq - 256.0f * h);
                bad += std::fabs(x[c] - u * static_cast<float>(256 * dh + dl)) > 0.5001f * u + 1e-6f * std::fabs(x[c]);
            }
        }
    }
    for (void *ptr :
         {static_cast<void *>(q), static_cast<void *>(sc), static_cast<void *>(region), static_cast<void *>(td)})
        AscendC::GmFree(ptr);
    return bad;
}

void Int8QueryDigits()
{
    const int bad = Int8QueryDigitsCase(8, 128, false) + Int8QueryDigitsCase(4, 96, true) +
                    Int8QueryDigitsCase(16, 64, true) + Int8QueryDigitsCase(1, 128, false);
    Report("int8_query_digits", bad);
}

// int8 Nz order of a rows x cols int8 matrix: column blocks of 32, `rows` rows each.
size_t NzAt(int r, int c, int rows) { return static_cast<size_t>(c / 32) * rows * 32 + r * 32 + c % 32; }

// The cube tiles from Nz hand-offs (int8_digit_cube.h): S = A . K^T and O = P . V, int32, for 16
// and 32 digit rows (G = 8 and G = 16).
void Int8DigitCube()
{
    constexpr int D = 128, L = 128;
    int bad = 0;
    for (int rows : {16, 32}) {
        int8_t *qd = Alloc<int8_t>(32 * D), *pd = Alloc<int8_t>(32 * L), *kv = Alloc<int8_t>(2 * L * D);
        int32_t *s = Alloc<int32_t>(32 * L), *o = Alloc<int32_t>(32 * D);
        auto *shape = Alloc<uint32_t>(8);
        shape[0] = static_cast<uint32_t>(rows);
        std::vector<int> a(rows * D), p(rows * L), k(L * D), v(L * D);
        auto val = [](int i, int m, int b) { return (i * m + b) % 256 - 128; };
        for (int i = 0; i < rows * D; ++i) a[i] = val(i, 37, 11 + rows);
        for (int i = 0; i < rows * L; ++i) p[i] = val(i, 53, 5 + rows);
        for (int i = 0; i < L * D; ++i) k[i] = val(i, 91, 3);
        for (int i = 0; i < L * D; ++i) v[i] = val(i, 29, 77);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < D; ++c) qd[NzAt(r, c, rows)] = static_cast<int8_t>(a[r * D + c]);
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < L; ++c) pd[NzAt(r, c, rows)] = static_cast<int8_t>(p[r * L + c]);
        for (int j = 0; j < L; ++j)
            for (int c = 0; c < D; ++c) {
                kv[NzAt(j, c, L)] = static_cast<int8_t>(k[j * D + c]);
                kv[L * D + NzAt(j, c, L)] = static_cast<int8_t>(v[j * D + c]);
            }
        AscendC::SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(int8_digit_cube, 1, qd, kv, pd, shape, s, o);
        for (int r = 0; r < rows; ++r) {
            for (int j = 0; j < L; ++j) {
                int32_t acc = 0;
                for (int c = 0; c < D; ++c) acc += a[r * D + c] * k[j * D + c];
                bad += s[r * L + j] != acc;
            }
            for (int c = 0; c < D; ++c) {
                int32_t acc = 0;
                for (int j = 0; j < L; ++j) acc += p[r * L + j] * v[j * D + c];
                bad += o[r * D + c] != acc;
            }
        }
        for (void *ptr : {static_cast<void *>(qd), static_cast<void *>(pd), static_cast<void *>(kv),
                          static_cast<void *>(s), static_cast<void *>(o), static_cast<void *>(shape)})
            AscendC::GmFree(ptr);
    }
    Report("int8_digit_cube", bad);
}

// One key block through the vector stage's steps (int8_digit_chain.cpp) with the cube's integer
// products computed here: the output against a float64 softmax . V of the same scores. The P
// digits' quantisation (a relative step of 1 / 32639 of each row's largest P) bounds the error.
void Int8DigitChain()
{
    constexpr int R = 8, D = 128, L = 128, N = R * L;
    int32_t *sProd = Alloc<int32_t>(2 * N), *oProd = Alloc<int32_t>(2 * N);
    float *r = Alloc<float>(8), *stats = Alloc<float>(24), *out = Alloc<float>(N);
    auto *slot = Alloc<int8_t>(2 * N);
    std::vector<int> qh(R * D), ql(R * D), k(L * D), v(L * D);
    auto val = [](int i, int m, int b) { return (i * m + b) % 256 - 128; };
    for (int i = 0; i < R * D; ++i) {
        qh[i] = val(i, 37, 11) / 4;  // a query row's hi digits are its large part
        ql[i] = val(i, 53, 5);
    }
    for (int i = 0; i < L * D; ++i) k[i] = val(i, 91, 3);
    for (int i = 0; i < L * D; ++i) v[i] = val(i, 29, 77);
    std::vector<double> sd(N);
    for (int row = 0; row < R; ++row) {
        double amax = 0.0;
        for (int j = 0; j < L; ++j) {
            int32_t hi = 0, lo = 0;
            for (int c = 0; c < D; ++c) {
                hi += qh[row * D + c] * k[j * D + c];
                lo += ql[row * D + c] * k[j * D + c];
            }
            sProd[row * L + j] = hi;
            sProd[N + row * L + j] = lo;
            amax = std::fmax(amax, std::fabs(256.0 * hi + lo));
        }
        r[row] = static_cast<float>((1.0 + 2.0 * row) / amax);  // score ranges +-1 .. +-15
        for (int j = 0; j < L; ++j) {
            // as the kernel forms S: fp32 256 hi + lo, times r
            const float f =
                (static_cast<float>(sProd[row * L + j]) * 256.0f + static_cast<float>(sProd[N + row * L + j]));
            sd[row * L + j] = static_cast<double>(f * r[row]);
        }
    }
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(int8_digit_softmax, 1, sProd, r, slot, stats);
    int bad = 0;
    std::vector<int> ph(N), pl(N);
    for (int row = 0; row < R; ++row) {
        int64_t qsum = 0;
        for (int j = 0; j < L; ++j) {
            ph[row * L + j] = slot[NzAt(row, j, 2 * R)];
            pl[row * L + j] = slot[NzAt(R + row, j, 2 * R)];
            qsum += 256 * ph[row * L + j] + pl[row * L + j];
        }
        bad += stats[16 + row] != static_cast<float>(qsum) || !(stats[8 + row] > 0.0f);
    }
    for (int row = 0; row < R; ++row)
        for (int c = 0; c < D; ++c) {
            int32_t hi = 0, lo = 0;
            for (int j = 0; j < L; ++j) {
                hi += ph[row * L + j] * v[j * D + c];
                lo += pl[row * L + j] * v[j * D + c];
            }
            oProd[row * D + c] = hi;
            oProd[N + row * D + c] = lo;
        }
    ICPU_RUN_KF(int8_digit_fold, 1, oProd, stats, out);
    double worst = 0.0;
    for (int row = 0; row < R; ++row) {
        double m = -1e300, l = 0.0;
        for (int j = 0; j < L; ++j) m = std::fmax(m, sd[row * L + j]);
        std::vector<double> o(D, 0.0);
        for (int j = 0; j < L; ++j) {
            const double p = std::exp(sd[row * L + j] - m);
            l += p;
            for (int c = 0; c < D; ++c) o[c] += p * v[j * D + c];
        }
        for (int c = 0; c < D; ++c) worst = std::fmax(worst, std::fabs(out[row * D + c] - o[c] / l));
    }
    bad += worst > 128.0 * 2e-5;  // |V| <= 128
    std::printf("int8_digit_chain: max |O - O_ref| = %.3g\n", worst);
    Report("int8_digit_chain", bad);
    for (void *ptr : {static_cast<void *>(sProd), static_cast<void *>(oProd), static_cast<void *>(r),
                      static_cast<void *>(stats), static_cast<void *>(out), static_cast<void *>(slot)})
        AscendC::GmFree(ptr);
}

// One decode unit through the int8 x int8 pieces on a MIX core (int8_digit_unit.cpp) against a
// float64 attention over the dequantised keys (per-tensor key scale; the value scale is 1).
void Int8DigitUnit()
{
    constexpr int G = 8, D = 128, S = 512, C = 128;
    constexpr float SCALE = 0.0883883f;
    auto *q = Alloc<half>(G * D);
    auto *sc = Alloc<half>(16);
    auto *k8 = Alloc<int8_t>(S * D), *v8 = Alloc<int8_t>(S * D);
    auto *ws = Alloc<uint8_t>(64 * 1024 + 8 * 2 * C * D);
    float *out = Alloc<float>(G * D);
    auto *td = Alloc<AttentionCore::DecodeTiling>(1);
    std::memset(td, 0, sizeof(*td));
    std::vector<int> k(S * D), v(S * D);
    auto val = [](int i, int m, int b) { return (i * m + b) % 256 - 128; };
    for (int i = 0; i < S * D; ++i) {
        k[i] = val(i, 91, 3);
        v[i] = val(i, 29, 77);
    }
    for (int i = 0; i < G * D; ++i)
        q[i] = half(std::sin(0.61f * static_cast<float>(i) + 0.3f) * (i / D == 5 ? 4.0f : 1.0f));
    sc[0] = half(0.05f);
    for (int i = 0; i < S * D; ++i) {
        k8[i] = static_cast<int8_t>(k[i]);
        v8[i] = static_cast<int8_t>(v[i]);
    }
    AttentionCore::ForwardParams &p = td->params;
    p.batch = 1;
    p.numHeads = G;
    p.numKvHeads = 1;
    p.groupSize = G;
    p.headDim = D;
    p.headDimAlign = D;
    p.blockQ = 16;
    p.qBlocksPerHead = 1;
    p.qStrideB = G * D;
    p.qStrideN = D;
    p.coreUnitStart[1] = 1;
    p.unitCount = 1;
    p.usedCores = 1;
    p.seqQ = 1;
    p.seqKv = S;
    p.blockKv = C;
    p.kvStrideB = p.kvStrideN = S * D;  // BNSD int8 elements
    p.kvStrideS = D;
    td->score.scaleValue = SCALE;
    AttentionCore::DecodeParams &dp = td->decode;
    dp.kvSplits = td->mask.kvSplits = td->score.kvSplits = 1;
    dp.kvChunk = td->mask.kvChunk = S + C;
    dp.antiquant = 1;
    dp.ringSlots = 8;
    dp.ringAhead = 4;
    dp.ringStartExtra = 2;
    dp.digits.rowsPad = 16;
    dp.digits.queryItemBytes = 16 * D + 32;
    dp.digits.ringChunkElems = C * D / 2;  // a whole block of 16-bit rows by tensor
    dp.digits.ringInCopies = dp.digits.ringOutCopies = 2;
    dp.digits.ringByTensor = 1;
    dp.digits.ringCoreBytes = 8 * 2 * C * D;
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(int8_digit_unit, 1, q, sc, k8, v8, ws, out, td);
    double worst = 0.0, omax = 0.0;
    for (int r = 0; r < G; ++r) {
        std::vector<double> s(S), o(D, 0.0);
        double m = -1e300, l = 0.0;
        for (int t = 0; t < S; ++t) {
            double acc = 0.0;
            for (int c = 0; c < D; ++c)
                acc += static_cast<double>(static_cast<float>(q[r * D + c])) * static_cast<float>(sc[0]) * SCALE *
                       k[t * D + c];
            s[t] = acc;
            m = std::fmax(m, acc);
        }
        for (int t = 0; t < S; ++t) {
            const double e = std::exp(s[t] - m);
            l += e;
            for (int c = 0; c < D; ++c) o[c] += e * v[t * D + c];
        }
        for (int c = 0; c < D; ++c) {
            worst = std::fmax(worst, std::fabs(out[r * D + c] - o[c] / l));
            omax = std::fmax(omax, std::fabs(o[c] / l));
        }
    }
    std::printf("int8_digit_unit: max |O - O_ref| = %.3g (max |O_ref| %.3g)\n", worst, omax);
    Report("int8_digit_unit", worst > 1e-3 * omax ? 1 : 0);
    for (void *ptr : {static_cast<void *>(q), static_cast<void *>(sc), static_cast<void *>(k8), static_cast<void *>(v8),
                      static_cast<void *>(ws), static_cast<void *>(out), static_cast<void *>(td)})
        AscendC::GmFree(ptr);
}

// ib_sync.cpp: y[r][b] = 2 * (x[pred] + 1 + r) over a ring of 4 vector cores, every slot back
// to 0 at the end.
void IbSyncRing()
{
    constexpr uint32_t n = 4, tile = 64, rounds = 2;
    auto *x = static_cast<float *>(AscendC::GmAlloc(n * tile * sizeof(float)));
    auto *y = static_cast<float *>(AscendC::GmAlloc(rounds * n * tile * sizeof(float)));
    auto *stage = static_cast<float *>(AscendC::GmAlloc(rounds * n * tile * sizeof(float)));
    auto *sync = static_cast<int32_t *>(AscendC::GmAlloc(n * 8 * sizeof(int32_t)));
    for (uint32_t i = 0; i < n * tile; ++i) x[i] = static_cast<float>(i % 53) * 0.5f;
    std::memset(sync, 0, n * 8 * sizeof(int32_t));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(ib_sync_ring, n, x, y, stage, sync);
    int bad = 0;
    for (uint32_t r = 0; r < rounds; ++r)
        for (uint32_t b = 0; b < n; ++b)
            for (uint32_t i = 0; i < tile; ++i)
                bad += y[(r * n + b) * tile + i] != 2.0f * (x[((b + n - 1) % n) * tile + i] + 1.0f + r);
    for (uint32_t i = 0; i < n * 8; ++i) bad += sync[i] != 0;
    Report("ib_sync_ring", bad);
    for (void *p :
         {static_cast<void *>(x), static_cast<void *>(y), static_cast<void *>(stage), static_cast<void *>(sync)})
        AscendC::GmFree(p);
}

// ib_sync_mix on 2 AI cores: y[block] = x[block] + 1; isAIVOnly = false puts eventID 1's slots
// at 2 * 2 * 8 int32, and the slots the second vector cores set last (indices 1 and 3) hold 1.
void IbSyncMix()
{
    constexpr uint32_t blocks = 2, tile = 64, syncInts = blocks * 2 * 8 * 2;
    auto *x = static_cast<float *>(AscendC::GmAlloc(blocks * tile * sizeof(float)));
    auto *y = static_cast<float *>(AscendC::GmAlloc(blocks * tile * sizeof(float)));
    auto *stage = static_cast<float *>(AscendC::GmAlloc(blocks * tile * sizeof(float)));
    auto *sync = static_cast<int32_t *>(AscendC::GmAlloc(syncInts * sizeof(int32_t)));
    for (uint32_t i = 0; i < blocks * tile; ++i) x[i] = static_cast<float>(i % 29) - 7.0f;
    std::memset(sync, 0, syncInts * sizeof(int32_t));
    AscendC::SetKernelMode(KernelMode::MIX_MODE);
    ICPU_RUN_KF(ib_sync_mix, blocks, x, y, stage, sync);
    int bad = 0;
    for (uint32_t i = 0; i < blocks * tile; ++i) bad += y[i] != x[i] + 1.0f;
    for (uint32_t i = 0; i < syncInts; ++i) bad += sync[i] != ((i == 2 * 2 * 8 + 8 || i == 2 * 2 * 8 + 24) ? 1 : 0);
    Report("ib_sync_mix", bad);
    for (void *p :
         {static_cast<void *>(x), static_cast<void *>(y), static_cast<void *>(stage), static_cast<void *>(sync)})
        AscendC::GmFree(p);
}
}  // namespace

int main()
{
    VecAdd();
    Mmad();
    ListGather();
    ConvUnitFlag();
    Load3dLayouts();
    Vec5hd();
    Int8DigitBlock();
    Int8DigitVector();
    Int8DigitRows();
    Int8DigitFolds();
    Int8QueryDigits();
    Int8DigitCube();
    Int8DigitChain();
    Int8DigitUnit();
    IbSyncRing();
    IbSyncMix();
    return g_failures == 0 ? 0 : 1;
}
