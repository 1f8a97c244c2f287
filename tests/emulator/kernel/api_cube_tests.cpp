// Cube unit cases: fractal layouts, LoadDataWithTranspose for 32/8/4-bit elements, 4:2 sparse
// matmul, int8 GEMM/GEMV with atomic Fixpipe, the unitFlag hand-off and its misuse.
#include <cstdlib>

#include "api_case.h"

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

void AddCubeCases(ApiCases &cases)
{
    const ApiCases mine = {
        {"cube_fractal_layouts", cube_fractal_layouts},
        {"cube_transpose_b32", cube_transpose_b32},
        {"cube_transpose_b8", cube_transpose_b8},
        {"cube_transpose_b4", cube_transpose_b4},
        {"cube_sparse", cube_sparse},
        {"cube_int8_gemv_atomic", cube_int8_gemv_atomic},
        {"unit_flag_timing", unit_flag_timing},
        {"misuse_unit_flag_fixpipe_unset", misuse_unit_flag_fixpipe_unset},
        {"misuse_unit_flag_mmad_unread", misuse_unit_flag_mmad_unread},
        {"misuse_sparse_load", misuse_sparse_load},
        {"misuse_wrong_position", misuse_wrong_position},
    };
    AddCases(cases, mine);
}
