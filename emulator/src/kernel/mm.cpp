// LoadData 2D, Mmad and Fixpipe on the real fractal layouts (asc-devkit API pages `矩阵计算（ISASI）/`):
// L0A Zz, L0B Zn, L0C Nz. A wrong layout or a wrong LoadData gives wrong numbers.
#include <immintrin.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "emu/core.h"
#include "emu/dtype.h"
#include "emu/race.h"
#include "half_convert.h"
#include "kernel_operator.h"

namespace emu {

void GmStore(const char *api, uint8_t *dst, const uint8_t *src, uint64_t bytes);

namespace {

const char *BufName(int b) { return emu::BufName(static_cast<Buf>(b)); }  // LocalRef::buf

void CheckSpan(const char *api, const char *what, const LocalRef &r, uint64_t span, uint64_t align)
{
    CheckLocal(api, what, static_cast<Buf>(r.buf), r.p, span);
    if (span > r.bytes)
        Fail(api, "%s needs %llu bytes but the %s tensor has %llu", what, (unsigned long long)span, BufName(r.buf),
             (unsigned long long)r.bytes);
    const uint64_t off = LocalOffset(static_cast<Buf>(r.buf), r.p);
    if (off % align != 0)
        Fail(api, "%s address %s+%llu is not %llu-byte aligned", what, BufName(r.buf), (unsigned long long)off,
             (unsigned long long)align);
}

// `count` contiguous elements of type t to float.
void ConvertRun(DType t, const uint8_t *src, float *dst, uint32_t count)
{
    if (t == DType::F16) {
        HalfToFloatN(reinterpret_cast<const uint16_t *>(src), dst, count);
    } else if (t == DType::BF16) {
        for (uint32_t i = 0; i < count; ++i) {
            uint16_t b;
            std::memcpy(&b, src + 2 * i, 2);
            dst[i] = Bf16BitsToFloat(b);
        }
    } else {
        std::memcpy(dst, src, count * sizeof(float));
    }
}

// C[m][n] += A[m][k] * B[k][n], row-major floats. Every C element is updated in ascending k
// with a rounded multiply then a rounded add, so all code paths give identical bits.
__attribute__((optimize("fp-contract=off"))) void GemmScalar(const float *A, const float *B, float *C, uint32_t m,
                                                             uint32_t n, uint32_t k)
{
    for (uint32_t i = 0; i < m; ++i) {
        float *crow = C + static_cast<size_t>(i) * n;
        const float *arow = A + static_cast<size_t>(i) * k;
        for (uint32_t kk = 0; kk < k; ++kk) {
            const float av = arow[kk];
            const float *brow = B + static_cast<size_t>(kk) * n;
            for (uint32_t j = 0; j < n; ++j) crow[j] += av * brow[j];
        }
    }
}

#if defined(__x86_64__)
// AVX2 (no FMA, to keep the multiply and the add separately rounded): 4 x 16 register tiles.
__attribute__((target("avx2"))) void GemmAvx2(const float *A, const float *B, float *C, uint32_t m, uint32_t n,
                                              uint32_t k)
{
    uint32_t i = 0;
    for (; i + 4 <= m; i += 4) {
        uint32_t j = 0;
        for (; j + 16 <= n; j += 16) {
            __m256 c[4][2];
            for (int r = 0; r < 4; ++r) {
                c[r][0] = _mm256_loadu_ps(C + static_cast<size_t>(i + r) * n + j);
                c[r][1] = _mm256_loadu_ps(C + static_cast<size_t>(i + r) * n + j + 8);
            }
            for (uint32_t kk = 0; kk < k; ++kk) {
                const __m256 b0 = _mm256_loadu_ps(B + static_cast<size_t>(kk) * n + j);
                const __m256 b1 = _mm256_loadu_ps(B + static_cast<size_t>(kk) * n + j + 8);
                for (int r = 0; r < 4; ++r) {
                    const __m256 a = _mm256_broadcast_ss(A + static_cast<size_t>(i + r) * k + kk);
                    c[r][0] = _mm256_add_ps(c[r][0], _mm256_mul_ps(a, b0));
                    c[r][1] = _mm256_add_ps(c[r][1], _mm256_mul_ps(a, b1));
                }
            }
            for (int r = 0; r < 4; ++r) {
                _mm256_storeu_ps(C + static_cast<size_t>(i + r) * n + j, c[r][0]);
                _mm256_storeu_ps(C + static_cast<size_t>(i + r) * n + j + 8, c[r][1]);
            }
        }
        for (; j < n; ++j)
            for (uint32_t r = 0; r < 4; ++r) {
                float acc = C[static_cast<size_t>(i + r) * n + j];
                for (uint32_t kk = 0; kk < k; ++kk)
                    acc += A[static_cast<size_t>(i + r) * k + kk] * B[static_cast<size_t>(kk) * n + j];
                C[static_cast<size_t>(i + r) * n + j] = acc;
            }
    }
    if (i < m) GemmScalar(A + static_cast<size_t>(i) * k, B, C + static_cast<size_t>(i) * n, m - i, n, k);
}
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif

void Gemm(const float *A, const float *B, float *C, uint32_t m, uint32_t n, uint32_t k)
{
#if defined(__x86_64__)
    if (kHasAvx2) return GemmAvx2(A, B, C, m, n, k);
#endif
    GemmScalar(A, B, C, m, n, k);
}

}  // namespace

void LoadData2D(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int es,
                const AscendC::LoadData2DParams &p)
{
    if (p.repeatTimes == 0 || Ctx().mem[dst.buf] == nullptr) return;
    const Buf db = static_cast<Buf>(dst.buf), sb = static_cast<Buf>(srcBuf);
    const bool toL0 = db == Buf::L0A || db == Buf::L0B;
    if (!(toL0 && sb == Buf::L1) && !(sb == Buf::GM && (toL0 || db == Buf::L1)))
        Fail(api, "%s -> %s is not a LoadData 2D path (L1 -> L0A/L0B, GM -> L1/L0A/L0B)", BufName(srcBuf),
             BufName(dst.buf));
    if (p.ifTranspose && (es != 2 || sb != Buf::L1))
        Fail(api, "ifTranspose needs 16-bit elements loaded from L1 (got %d-byte elements from %s)", es,
             BufName(srcBuf));
    const bool down = p.addrMode == 1 && sb == Buf::GM;
    const uint64_t n = p.repeatTimes;
    const int64_t lastSrc = down ? static_cast<int64_t>(p.startIndex) - static_cast<int64_t>((n - 1) * p.srcStride)
                                 : static_cast<int64_t>(p.startIndex + (n - 1) * p.srcStride);
    if (lastSrc < 0)
        Fail(api, "addrMode 1 walks below fractal 0 (startIndex %u, srcStride %u)", p.startIndex, p.srcStride);
    const uint64_t srcSpan = (static_cast<uint64_t>(down ? p.startIndex : lastSrc) + 1) * 512;
    if (sb == Buf::GM)
        CheckGm(api, "source", src, srcSpan);
    else
        CheckSpan(api, "source", LocalRef{const_cast<void *>(src), srcBytes, srcBuf}, srcSpan, 32);
    CheckSpan(api, "destination", dst, ((n - 1) * (p.dstGap + 1ull) + 1) * 512, 512);
    if (sb != Buf::GM) {
        const int64_t lo = down ? lastSrc : p.startIndex, hi = down ? p.startIndex : lastSrc;
        RaceRead(api, Pipe::MTE1, srcBuf, static_cast<const uint8_t *>(src) + lo * 512,
                 static_cast<uint64_t>(hi - lo + 1) * 512);
    }
    RaceWrite(api, sb == Buf::GM ? Pipe::MTE2 : Pipe::MTE1, dst.buf, dst.p, ((n - 1) * (p.dstGap + 1ull) + 1) * 512);
    if (sb == Buf::GM) {
        const int64_t lo = down ? lastSrc : p.startIndex;
        RaceGm(api, Pipe::MTE2, static_cast<const uint8_t *>(src) + lo * 512, n, 512,
               static_cast<uint64_t>(p.srcStride) * 512, false);
        TimeGmRead(Pipe::MTE2, static_cast<const uint8_t *>(src) + lo * 512, n, 512,
                   static_cast<uint64_t>(p.srcStride) * 512, api);
    } else {
        TimeLoadData(db == Buf::L0B, n * 512, api);
    }
    for (uint64_t i = 0; i < n && !TimingOnly(); ++i) {
        const int64_t si = down ? p.startIndex - static_cast<int64_t>(i * p.srcStride)
                                : p.startIndex + static_cast<int64_t>(i * p.srcStride);
        const uint8_t *s = static_cast<const uint8_t *>(src) + si * 512;
        uint8_t *d = static_cast<uint8_t *>(dst.p) + i * (p.dstGap + 1ull) * 512;
        if (!p.ifTranspose) {
            std::memcpy(d, s, 512);
        } else {
            uint16_t in[256], out[256];
            std::memcpy(in, s, 512);
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < 16; ++c) out[c * 16 + r] = in[r * 16 + c];
            std::memcpy(d, out, 512);
        }
    }
    Count(sb == Buf::GM ? Pipe::MTE2 : Pipe::MTE1, n * 512);
}

void LoadDataSparse(const char *api, LocalRef dst, LocalRef src, LocalRef idx, const AscendC::LoadData2DParams &p)
{
    if (p.repeatTimes == 0 || Ctx().mem[dst.buf] == nullptr) return;
    if (static_cast<Buf>(dst.buf) != Buf::L0B || static_cast<Buf>(src.buf) != Buf::L1 ||
        static_cast<Buf>(idx.buf) != Buf::L1)
        Fail(api, "dst must be in B2, src and idx in B1; got %s, %s, %s", BufName(dst.buf), BufName(src.buf),
             BufName(idx.buf));
    if (p.ifTranspose) Fail(api, "ifTranspose is not supported by the sparse load");
    if (p.addrMode != 0) Fail(api, "addrMode 1 is not supported by the sparse load");
    const uint64_t n = p.repeatTimes;
    const uint64_t lastSrc = p.startIndex + (n - 1) * p.srcStride;
    CheckSpan(api, "idx", idx, (lastSrc + 1) * 128, 32);
    RaceRead(api, Pipe::MTE1, idx.buf, static_cast<const uint8_t *>(idx.p) + p.startIndex * 128ull,
             (lastSrc + 1 - p.startIndex) * 128);
    LoadData2D(api, dst, src.p, src.buf, src.bytes, 1, p);
    if (TimingOnly()) return;
    const uint64_t at = LocalOffset(Buf::L0B, dst.p);
    for (uint64_t i = 0; i < n; ++i)
        std::memcpy(Ctx().sparseIndex + (at + i * (p.dstGap + 1ull) * 512) / 4,
                    static_cast<const uint8_t *>(idx.p) + (p.startIndex + i * p.srcStride) * 128, 128);
    Count(Pipe::MTE1, n * 128);
}

void SetFixQuant(const char *api, LocalRef params)
{
    if (Ctx().mem[params.buf] == nullptr) return;
    if (static_cast<Buf>(params.buf) != Buf::FB)
        Fail(api, "the quantisation parameters must be in the Fixpipe buffer (C2PIPE2GM), not %s", BufName(params.buf));
    Ctx().fixQuant = params.p;
}

void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], int mode)
{
    CoreCtx &c = Ctx();
    c.fmapH[mode] = l1H;
    c.fmapW[mode] = l1W;
    for (int i = 0; i < 4; ++i) c.fmapPad[mode][i] = padList[i];
}

// Element (m, k) of the image-to-column matrix of an NC1HWC0 feature map: m = ho * Wo + wo (the
// output position), k = ((c1 * filterH + kh) * filterW + kw) * C0 + c0 (the FracZ order of the
// weights); positions in the padding read the pad value, channels past channelSize read 0.
void LoadData3D(const char *api, LocalRef dst, LocalRef src, int es, const Load3dGeom &g)
{
    if (g.l1H == 0 || g.l1W == 0 || g.channelSize == 0 || g.kExtension == 0 || g.mExtension == 0 || g.filterW == 0 ||
        g.filterH == 0 || Ctx().mem[dst.buf] == nullptr)
        return;  // documented NOPs; a wrong-core call is a NOP too
    const Buf db = static_cast<Buf>(dst.buf);
    if (static_cast<Buf>(src.buf) != Buf::L1 || (db != Buf::L0A && db != Buf::L0B))
        Fail(api, "%s -> %s is not a LoadData 3D path (L1 -> L0A/L0B)", BufName(src.buf), BufName(dst.buf));
    if (db == Buf::L0B && es == 1)
        Fail(api, "8-bit elements cannot be loaded into L0B (B2) by LoadData 3D on Atlas A2");
    if (db == Buf::L0A && g.transpose && es == 1)
        Fail(api, "enTranspose with 8-bit elements is not supported on Atlas A2");
    if (g.strideW == 0 || g.strideH == 0 || g.dilationW == 0 || g.dilationH == 0)
        Fail(api, "strideW %u, strideH %u, dilationFilterW %u, dilationFilterH %u must be >= 1", g.strideW, g.strideH,
             g.dilationW, g.dilationH);
    const uint32_t c0 = 32 / es;
    if (g.kStartPt % c0 != 0) Fail(api, "kStartPt %u is not a multiple of %u (one 32-byte C0)", g.kStartPt, c0);
    const int64_t H = g.l1H, W = g.l1W;
    const int64_t effW = (static_cast<int64_t>(g.filterW) - 1) * g.dilationW + 1,
                  effH = (static_cast<int64_t>(g.filterH) - 1) * g.dilationH + 1;
    const int64_t wo = (W + g.pad[0] + g.pad[1] - effW) / g.strideW + 1;
    const int64_t ho = (H + g.pad[2] + g.pad[3] - effH) / g.strideH + 1;
    if (wo <= 0 || ho <= 0)
        Fail(api, "the %ux%u filter does not fit the %lldx%lld feature map with its padding", g.filterH, g.filterW,
             (long long)H, (long long)W);
    const uint32_t c1 = (g.channelSize + c0 - 1) / c0;
    const uint64_t kTotal = static_cast<uint64_t>(c1) * g.filterH * g.filterW * c0,
                   mTotal = static_cast<uint64_t>(ho) * wo;
    if (g.kStartPt + static_cast<uint64_t>(g.kExtension) > kTotal)
        Fail(api, "kStartPt %u + kExtension %u exceed the %llu columns of the expanded matrix", g.kStartPt,
             g.kExtension, (unsigned long long)kTotal);
    const uint64_t srcSpan = static_cast<uint64_t>(c1) * H * W * 32;
    CheckSpan(api, "source (L1 feature map)", src, srcSpan, 32);
    // The destination matrix: the window itself (L0A) or its transpose (L0A with enTranspose, L0B).
    const bool tr = g.transpose || db == Buf::L0B;
    const uint32_t rows = tr ? g.kExtension : g.mExtension, cols = tr ? g.mExtension : g.kExtension;
    uint64_t dstSpan;
    std::function<uint64_t(uint32_t, uint32_t)> at;  // element offset of (row, col) in dst
    if (db == Buf::L0A) {                            // Zz: 16 x C0 fractals, row-major
        const uint32_t colBlocks = (cols + c0 - 1) / c0;
        dstSpan = static_cast<uint64_t>((rows + 15) / 16) * colBlocks * 512;
        at = [=](uint32_t r, uint32_t c) {
            return ((static_cast<uint64_t>(r / 16) * colBlocks + c / c0) * 16 + r % 16) * c0 + c % c0;
        };
    } else {  // Zn of B[rows = K][cols = N]: C0 x 16 fractals, K-block-major, N contiguous in rows of C0
        const uint32_t nBlocks = (cols + 15) / 16;
        dstSpan = static_cast<uint64_t>((rows + c0 - 1) / c0) * nBlocks * 512;
        at = [=](uint32_t r, uint32_t c) {
            return ((static_cast<uint64_t>(r / c0) * nBlocks + c / 16) * 16 + c % 16) * c0 + r % c0;
        };
    }
    CheckSpan(api, "destination", dst, dstSpan, 512);
    RaceRead(api, Pipe::MTE1, src.buf, src.p, srcSpan);
    RaceWrite(api, Pipe::MTE1, dst.buf, dst.p, dstSpan);
    TimeLoadData(db == Buf::L0B, static_cast<uint64_t>(g.mExtension) * g.kExtension * es, api);
    Count(Pipe::MTE1, static_cast<uint64_t>(g.mExtension) * g.kExtension * es);
    if (TimingOnly()) return;
    const auto *S = static_cast<const uint8_t *>(src.p);
    auto *D = static_cast<uint8_t *>(dst.p);
    const uint64_t zero = 0;
    for (uint32_t i = 0; i < g.mExtension; ++i) {
        const uint64_t m = g.mStartPt + static_cast<uint64_t>(i);
        const int64_t oh = static_cast<int64_t>(m / wo), ow = static_cast<int64_t>(m % wo);
        for (uint32_t j = 0; j < g.kExtension; ++j) {
            const uint64_t k = g.kStartPt + static_cast<uint64_t>(j);
            const uint64_t cc0 = k % c0, rest = k / c0;
            const uint64_t kw = rest % g.filterW, kh = (rest / g.filterW) % g.filterH,
                           cc1 = rest / (static_cast<uint64_t>(g.filterW) * g.filterH);
            const int64_t h = oh * g.strideH - g.pad[2] + static_cast<int64_t>(kh) * g.dilationH;
            const int64_t w = ow * g.strideW - g.pad[0] + static_cast<int64_t>(kw) * g.dilationW;
            const void *v;
            if (m >= mTotal || cc1 * c0 + cc0 >= g.channelSize)
                v = &zero;
            else if (h < 0 || h >= H || w < 0 || w >= W)
                v = &g.padBits;
            else
                v = S + ((static_cast<uint64_t>(cc1) * H + h) * W + w) * 32 + cc0 * es;
            std::memcpy(D + at(tr ? j : i, tr ? i : j) * es, v, es);
        }
    }
}

// Square i (fractals startIndex + i * srcStride, in squares) -> destination fractal
// i * (dstGap + 1); a square of 8- or 32-bit elements gives two fractals, of int4b_t four (a
// 64 x 64 square of four 16 x 64 fractals), each dstFracGap + 1 fractals after the previous.
void LoadDataTranspose(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int bits,
                       const AscendC::LoadData2dTransposeParams &p)
{
    const int es = bits / 8;  // 0 for int4b_t
    if (p.repeatTimes == 0 || Ctx().mem[dst.buf] == nullptr) return;
    const Buf db = static_cast<Buf>(dst.buf), sb = static_cast<Buf>(srcBuf);
    if (sb != Buf::L1 || (db != Buf::L0A && db != Buf::L0B))
        Fail(api, "%s -> %s is not a LoadDataWithTranspose path (L1 -> L0A/L0B)", BufName(srcBuf), BufName(dst.buf));
    if (bits != 4 && bits != 8 && bits != 16 && bits != 32)
        Fail(api, "%d-bit elements: only the 4-, 8-, 16- and 32-bit forms exist", bits);
    if (p.addrMode != 0) Fail(api, "addrMode 1 (decreasing addresses) is not implemented by the emulator");
    const uint64_t n = p.repeatTimes;
    const uint64_t dstFracs = bits == 16 ? 1 : bits == 4 ? 4 : 2;
    const uint64_t square = dstFracs * 512;  // bytes per repeat
    const uint64_t srcSpan = (p.startIndex + (n - 1) * p.srcStride + 1) * square;
    const uint64_t lastDst = (n - 1) * (p.dstGap + 1ull) + (dstFracs - 1) * (p.dstFracGap + 1ull);
    CheckSpan(api, "source", LocalRef{const_cast<void *>(src), srcBytes, srcBuf}, srcSpan, 32);
    CheckSpan(api, "destination", dst, (lastDst + 1) * 512, 512);
    const auto *s0 = static_cast<const uint8_t *>(src) + p.startIndex * square;
    RaceRead(api, Pipe::MTE1, srcBuf, s0, srcSpan - p.startIndex * square);
    RaceWrite(api, Pipe::MTE1, dst.buf, dst.p, (lastDst + 1) * 512);
    TimeLoadData(db == Buf::L0B, n * square, api);
    for (uint64_t i = 0; i < n && !TimingOnly(); ++i) {
        const uint8_t *sq = s0 + i * p.srcStride * square;
        uint8_t *d = static_cast<uint8_t *>(dst.p) + i * (p.dstGap + 1ull) * 512;
        if (bits == 4) {  // S[r][c] (64 x 64): rows 16f..16f+15 are source fractal f, two per byte
            uint8_t out[4][512] = {};
            for (int r = 0; r < 64; ++r)
                for (int c = 0; c < 64; ++c) {
                    const int v = (sq[(r / 16) * 512 + (r % 16) * 32 + c / 2] >> (c % 2 * 4)) & 0xf;
                    out[c / 16][(c % 16) * 32 + r / 2] |= static_cast<uint8_t>(v << (r % 2 * 4));  // S^T[c][r]
                }
            for (int f = 0; f < 4; ++f) std::memcpy(d + f * (p.dstFracGap + 1ull) * 512, out[f], 512);
            continue;
        }
        if (es == 2) {
            uint16_t in[256], out[256];
            std::memcpy(in, sq, 512);
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < 16; ++c) out[c * 16 + r] = in[r * 16 + c];
            std::memcpy(d, out, 512);
            continue;
        }
        if (es == 1) {  // the square S (32 x 32): rows 0-15 are the first 16x32 fractal, 16-31 the second
            uint8_t out[2][512];
            for (int r = 0; r < 32; ++r)
                for (int c = 0; c < 32; ++c) out[c / 16][(c % 16) * 32 + r] = sq[(r / 16) * 512 + (r % 16) * 32 + c];
            std::memcpy(d, out[0], 512);
            std::memcpy(d + (p.dstFracGap + 1ull) * 512, out[1], 512);
            continue;
        }
        // The square S (16 x 16): columns 0-7 are the first 16x8 fractal, 8-15 the second.
        uint32_t in[256], out[2][128];
        std::memcpy(in, sq, 1024);
        for (int r = 0; r < 16; ++r)
            for (int c = 0; c < 16; ++c) {
                const uint32_t v = in[(c / 8) * 128 + r * 8 + c % 8];  // S[r][c]
                out[r / 8][c * 8 + r % 8] = v;                         // S^T[c][r]
            }
        std::memcpy(d, out[0], 512);
        std::memcpy(d + (p.dstFracGap + 1ull) * 512, out[1], 512);
    }
    Count(Pipe::MTE1, n * square);
}

void Fill(const char *api, LocalRef dst, int es, uint64_t bits, uint32_t repeat, uint32_t blockNum, uint32_t dstGap)
{
    if (repeat == 0 || blockNum == 0 || Ctx().mem[dst.buf] == nullptr) return;
    const Buf db = static_cast<Buf>(dst.buf);
    if (db != Buf::L1 && db != Buf::L0A && db != Buf::L0B)
        Fail(api, "destination must be in L1, L0A or L0B, not %s", BufName(dst.buf));
    if (es == 1) Fail(api, "8-bit elements are not supported on Atlas A2");
    const uint64_t block = db == Buf::L1 ? 32 : 512;
    const uint64_t pitch = (static_cast<uint64_t>(blockNum) + dstGap) * block;
    const uint64_t span = (repeat - 1ull) * pitch + blockNum * block;
    CheckSpan(api, "destination", dst, span, block);
    const Pipe pipe = db == Buf::L1 ? Pipe::MTE2 : Pipe::MTE1;
    RaceWrite(api, pipe, dst.buf, dst.p, span);
    TimeLocalCopy(pipe, repeat * blockNum * block, api);
    Count(pipe, repeat * blockNum * block);
    for (uint32_t r = 0; r < repeat; ++r) {
        uint8_t *row = static_cast<uint8_t *>(dst.p) + r * pitch;
        for (uint64_t e = 0; e < blockNum * block / es; ++e) std::memcpy(row + e * es, &bits, es);
    }
}

void Mmad(LocalRef c, DType ct, LocalRef a, DType at, LocalRef b, DType bt, const AscendC::MmadParams &p,
          const LocalRef *bias, bool sparse)
{
    const char *api = sparse ? "MmadWithSparse" : "Mmad";
    if (p.m == 0 || p.n == 0 || p.k == 0 || Ctx().mem[c.buf] == nullptr) return;
    if (static_cast<Buf>(c.buf) != Buf::L0C || static_cast<Buf>(a.buf) != Buf::L0A ||
        static_cast<Buf>(b.buf) != Buf::L0B)
        Fail(api, "operands must be dst in L0C (CO1), fm in L0A (A2), filter in L0B (B2); got %s, %s, %s",
             BufName(c.buf), BufName(a.buf), BufName(b.buf));
    const bool fp = (at == DType::F16 && bt == DType::F16) || (at == DType::BF16 && bt == DType::BF16) ||
                    (at == DType::F32 && bt == DType::F32);
    const bool i4 = at == DType::I4 && bt == DType::I4;
    const bool i8 = (at == DType::I8 && bt == DType::I8) || i4;
    if (sparse && !(at == DType::I8 && bt == DType::I8 && ct == DType::I32))
        Fail(api, "%s x %s -> %s: the sparse matmul is int8_t x int8_t -> int32_t", DTypeName(at), DTypeName(bt),
             DTypeName(ct));
    if (!((fp && ct == DType::F32) || (i8 && ct == DType::I32)))
        Fail(api, "%s x %s -> %s is not a supported cube type combination on Atlas A2", DTypeName(at), DTypeName(bt),
             DTypeName(ct));
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) Fail(api, "m %u, n %u, k %u must each be <= 4095", p.m, p.n, p.k);
    if (p.cmatrixSource)
        Fail(api, "cmatrixSource (C initialised from the bias table) is not implemented by the emulator");
    const int es = DTypeSize(at);  // bytes per element; int4b_t: two elements per byte
    const int K0 = i4 ? 64 : 32 / es;
    // Bytes of `elems` contiguous elements.
    auto bytesOf = [&](uint64_t elems) -> uint64_t { return i4 ? (elems + 1) / 2 : elems * es; };
    const uint32_t m = p.m, n = p.n, k = p.k;
    const bool gemv = m == 1;  // A2 switches to GEMV: L0A is a plain vector of k elements
    const uint32_t M1 = (m + 15) / 16, N1 = (n + 15) / 16;
    const uint32_t kAlign = (at == DType::F32 && p.kDirectionAlign) ? 16 : K0;
    const uint32_t K1 = (k + kAlign - 1) / kAlign * kAlign / K0;
    // The densified filter of MmadWithSparse keeps two of every four K elements.
    const uint32_t kB = sparse ? (k + 3) / 4 * 2 : k, KB1 = (kB + K0 - 1) / K0;
    CheckSpan(api, "fm (L0A)", a, gemv ? bytesOf(k) : static_cast<uint64_t>(M1) * K1 * 512, 512);
    CheckSpan(api, "filter (L0B)", b, static_cast<uint64_t>(KB1) * N1 * 512, 512);
    CheckSpan(api, "dst (L0C)", c, static_cast<uint64_t>(M1) * N1 * 1024, 1024);
    const bool init = p.cmatrixInitVal && !p.isBias && bias == nullptr;
    if (bias != nullptr) {
        if (!fp) Fail(api, "a bias-table bias needs a floating-point Mmad (got %s)", DTypeName(at));
        CheckSpan(api, "bias (BT)", *bias, static_cast<uint64_t>(n) * 4, 64);
    }
    const uint64_t cOff = LocalOffset(Buf::L0C, c.p);
    const L0cRange unit{cOff, cOff + static_cast<uint64_t>(M1) * N1 * 1024};
    UnitFlagBegin(api, false, p.unitFlag, &unit, 1);
    RaceRead(api, Pipe::M, a.buf, a.p, gemv ? bytesOf(k) : static_cast<uint64_t>(M1) * K1 * 512);
    RaceRead(api, Pipe::M, b.buf, b.p, static_cast<uint64_t>(KB1) * N1 * 512);
    if (!init && bias == nullptr) RaceRead(api, Pipe::M, c.buf, c.p, static_cast<uint64_t>(M1) * N1 * 1024);
    RaceWrite(api, Pipe::M, c.buf, c.p, static_cast<uint64_t>(M1) * N1 * 1024);
    TimeMmad(m, n, k, i8 ? 1 : (at == DType::F32 ? 2 : 0));  // assumption: int4b_t at the int8 rate
    UnitFlagEnd(false, p.unitFlag, &unit, 1);
    const auto *A = static_cast<const uint8_t *>(a.p);
    const auto *B = static_cast<const uint8_t *>(b.p);
    // Element indices in L0A (Zz fractals, or the GEMV vector) and L0B (Zn fractals).
    auto aElem = [&](uint32_t i, uint32_t kk) -> uint64_t {
        if (gemv) return kk;
        return (((static_cast<uint64_t>(i / 16) * K1 + kk / K0) * 16 + i % 16) * K0) + kk % K0;
    };
    auto bElem = [&](uint32_t kk, uint32_t j) -> uint64_t {
        return (((static_cast<uint64_t>(kk / K0) * N1 + j / 16) * 16 + j % 16) * K0) + kk % K0;
    };
    // MmadWithSparse: the fm column of kept filter element kd (group kd / 2), from its 2-bit index.
    const uint8_t *sparseIdx = sparse ? Ctx().sparseIndex + LocalOffset(Buf::L0B, b.p) / 4 : nullptr;
    auto sparseCol = [&](uint32_t kd, uint32_t j) -> uint32_t {
        const uint64_t e = bElem(kd, j);
        const uint32_t index = (sparseIdx[e / 4] >> (e % 4 * 2)) & 3;
        return kd / 2 * 4 + (kd % 2) + index;
    };
    auto aOff = [&](uint32_t i, uint32_t kk) -> uint64_t { return aElem(i, kk) * es; };
    auto bOff = [&](uint32_t kk, uint32_t j) -> uint64_t { return bElem(kk, j) * es; };
    // An integer operand element: int8_t, or the nibble of an int4b_t (element 2j low), sign-extended.
    auto intAt = [&](const uint8_t *base, uint64_t e) -> int64_t {
        if (!i4) return static_cast<int8_t>(base[e]);
        const int v = (base[e / 2] >> (e % 2 * 4)) & 0xf;
        return v >= 8 ? v - 16 : v;
    };
    auto cIdx = [&](uint32_t i, uint32_t j) -> uint64_t {
        return ((static_cast<uint64_t>(j / 16) * M1 + i / 16) * 16 + i % 16) * 16 + j % 16;
    };
    if (TimingOnly()) {
        // timing-only mode: no arithmetic
    } else if (fp) {
        // Convert once to dense row-major float, fractal row by fractal row (K0 contiguous
        // elements each), then run the GEMM core.
        // Per-thread scratch reused across calls (a fresh allocation per Mmad costs page faults).
        thread_local std::vector<float> Af, Bf, Cf;
        Af.resize(static_cast<size_t>(m) * k);
        Bf.resize(static_cast<size_t>(k) * n);
        Cf.resize(static_cast<size_t>(m) * n);
        float run[32];
        if (gemv) {
            ConvertRun(at, A, Af.data(), k);
        } else {
            for (uint32_t i = 0; i < m; ++i)
                for (uint32_t k1 = 0; k1 * K0 < k; ++k1) {
                    const uint32_t len = std::min<uint32_t>(K0, k - k1 * K0);
                    ConvertRun(at, A + aOff(i, k1 * K0), &Af[static_cast<size_t>(i) * k + k1 * K0], len);
                }
        }
        for (uint32_t j = 0; j < n; ++j)
            for (uint32_t k1 = 0; k1 * K0 < k; ++k1) {
                const uint32_t len = std::min<uint32_t>(K0, k - k1 * K0);
                ConvertRun(bt, B + bOff(k1 * K0, j), run, len);
                for (uint32_t k0 = 0; k0 < len; ++k0) Bf[static_cast<size_t>(k1 * K0 + k0) * n + j] = run[k0];
            }
        float *C = static_cast<float *>(c.p);
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t n1 = 0; n1 * 16 < n; ++n1) {
                const uint32_t len = std::min<uint32_t>(16, n - n1 * 16);
                float *row = &Cf[static_cast<size_t>(i) * n + n1 * 16];
                if (bias != nullptr)
                    std::memcpy(row, static_cast<const float *>(bias->p) + n1 * 16, len * sizeof(float));
                else if (init)
                    std::fill(row, row + len, 0.0f);
                else
                    std::memcpy(row, C + cIdx(i, n1 * 16), len * sizeof(float));
            }
        Gemm(Af.data(), Bf.data(), Cf.data(), m, n, k);
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t n1 = 0; n1 * 16 < n; ++n1) {
                const uint32_t len = std::min<uint32_t>(16, n - n1 * 16);
                std::memcpy(C + cIdx(i, n1 * 16), &Cf[static_cast<size_t>(i) * n + n1 * 16], len * sizeof(float));
            }
    } else {
        int32_t *C = static_cast<int32_t *>(c.p);
        for (uint32_t i = 0; i < m; ++i)
            for (uint32_t j = 0; j < n; ++j) {
                int64_t acc = init ? 0 : C[cIdx(i, j)];
                if (sparse) {
                    for (uint32_t kd = 0; kd < kB; ++kd) {
                        const uint32_t col = sparseCol(kd, j);
                        if (col < k) acc += intAt(A, aElem(i, col)) * intAt(B, bElem(kd, j));
                    }
                } else {
                    for (uint32_t kk = 0; kk < k; ++kk) acc += intAt(A, aElem(i, kk)) * intAt(B, bElem(kk, j));
                }
                acc = acc > INT32_MAX   ? INT32_MAX
                      : acc < INT32_MIN ? INT32_MIN
                                        : acc;  // integer accumulation saturates
                C[cIdx(i, j)] = static_cast<int32_t>(acc);
            }
    }
    PipeCounter &pc = Ctx().counters[static_cast<int>(Pipe::M)];
    pc.ops += 1;
    pc.macs += static_cast<uint64_t>(m) * n * k;
    pc.bytes += bytesOf(static_cast<uint64_t>(m) * k) + bytesOf(static_cast<uint64_t>(k) * n);
}

void Fixpipe(const char *api, void *dst, int dstBuf, uint64_t dstBytes, DType dt, LocalRef src, DType st, int layout,
             const AscendC::FixpipeParamsV220 &p)
{
    if (p.mSize == 0 || p.nSize == 0 || p.ndNum == 0 || Ctx().mem[src.buf] == nullptr) return;
    if (static_cast<Buf>(src.buf) != Buf::L0C) Fail(api, "source must be in L0C (CO1), not %s", BufName(src.buf));
    const int q = static_cast<int>(p.quantPre);
    using QM = QuantMode_t;
    bool ok = false;
    if (p.quantPre == QM::NoQuant)
        ok = dt == st && (st == DType::F32 || st == DType::I32);
    else if (p.quantPre == QM::F322F16)
        ok = st == DType::F32 && dt == DType::F16;
    else if (p.quantPre == QM::F322BF16)
        ok = st == DType::F32 && dt == DType::BF16;
    else if (p.quantPre == QM::DEQF16 || p.quantPre == QM::VDEQF16)
        ok = st == DType::I32 && dt == DType::F16;
    else
        Fail(api, "quantPre %d is not implemented by the emulator (NoQuant, F322F16, F322BF16, DEQF16, VDEQF16)", q);
    const uint64_t *channelScale = nullptr;  // VDEQF16: one 64-bit parameter per column, from SetFixPipeConfig
    if (p.quantPre == QM::VDEQF16) {
        channelScale = static_cast<const uint64_t *>(Ctx().fixQuant);
        if (channelScale == nullptr) Fail(api, "VDEQF16 needs the per-channel scales of SetFixPipeConfig first");
        CheckLocal(api, "per-channel scales (FB)", Buf::FB, channelScale, static_cast<uint64_t>(p.nSize) * 8);
    }
    if (!ok)
        Fail(api, "quantPre %d does not convert L0C %s to %s (fp32->half needs F322F16, fp32->bf16 F322BF16)", q,
             DTypeName(st), DTypeName(dt));
    if (layout == 2) Fail(api, "CFG_COLUMN_MAJOR is not available on Atlas A2");
    if (layout == 0 && p.nSize % 16 != 0) Fail(api, "nSize %u must be a multiple of 16 for the NZ layout", p.nSize);
    if (layout == 1 && p.mSize > 8192) Fail(api, "mSize %u exceeds 8192 for NZ2ND", p.mSize);
    if (p.srcStride < p.mSize && (p.nSize > 16))
        Fail(api, "srcStride %u (rows between fractal columns in L0C) is smaller than mSize %u", p.srcStride, p.mSize);
    const uint32_t N1 = (p.nSize + 15) / 16;
    const uint64_t ndSrc =
        static_cast<uint64_t>(p.srcNdStride) * 256;  // units of one 16x16 fractal (see docs/emulator.md)
    const uint64_t srcSpan = ((p.ndNum - 1ull) * ndSrc + ((N1 - 1ull) * p.srcStride + p.mSize) * 16) * 4;
    CheckSpan(api, "source (L0C)", src, srcSpan, 64);
    std::vector<L0cRange> unit;  // the L0C rows the Fixpipe reads, per matrix and fractal column
    if (p.unitFlag == 2 || p.unitFlag == 3) {
        const uint64_t off = LocalOffset(Buf::L0C, src.p);
        for (uint32_t nd = 0; nd < p.ndNum; ++nd)
            for (uint32_t kb = 0; kb < N1; ++kb) {
                const uint64_t begin = off + (nd * ndSrc + static_cast<uint64_t>(kb) * p.srcStride * 16) * 4;
                unit.push_back({begin, begin + (p.mSize + 15ull) / 16 * 16 * 64});  // whole 16-row fractals
            }
    }
    UnitFlagBegin(api, true, p.unitFlag, unit.data(), static_cast<int>(unit.size()));
    RaceRead(api, Pipe::FIXP, src.buf, src.p, srcSpan);
    const int des = DTypeSize(dt);
    uint64_t dstSpan;
    if (layout == 1)
        dstSpan = ((p.ndNum - 1ull) * p.dstNdStride + (p.mSize - 1ull) * p.dstStride + p.nSize) * des;
    else
        dstSpan = ((N1 - 1ull) * p.dstStride * 32 + static_cast<uint64_t>(p.mSize) * 16 * des);
    if (static_cast<Buf>(dstBuf) == Buf::GM) {
        CheckGm(api, "destination", dst, dstSpan);
        if (layout == 1)  // ndNum matrices of mSize rows of nSize elements
            for (uint32_t nd = 0; nd < p.ndNum; ++nd)
                RaceGm(api, Pipe::FIXP, static_cast<uint8_t *>(dst) + static_cast<uint64_t>(nd) * p.dstNdStride * des,
                       p.mSize, static_cast<uint64_t>(p.nSize) * des, static_cast<uint64_t>(p.dstStride) * des, true);
        else  // NZ: N1 column blocks of mSize x 16 elements
            RaceGm(api, Pipe::FIXP, dst, N1, static_cast<uint64_t>(p.mSize) * 16 * des,
                   static_cast<uint64_t>(p.dstStride) * 32, true);
    } else if (static_cast<Buf>(dstBuf) == Buf::L1) {
        CheckSpan(api, "destination", LocalRef{dst, dstBytes, dstBuf}, dstSpan, 32);
        RaceWrite(api, Pipe::FIXP, dstBuf, dst, dstSpan);
    } else
        Fail(api, "destination must be GM or L1 (A1/B1), not %s", BufName(dstBuf));
    {
        const bool gm = static_cast<Buf>(dstBuf) == Buf::GM;
        const uint64_t elems = static_cast<uint64_t>(p.ndNum) * p.mSize * p.nSize;
        const int qc = p.quantPre == QM::NoQuant ? 0 : 1;
        if (layout == 1)  // ND rows of nSize elements (ndNum matrices approximated as consecutive rows)
            TimeFixpipe(gm ? dst : nullptr, static_cast<uint64_t>(p.ndNum) * p.mSize,
                        static_cast<uint64_t>(p.nSize) * des, static_cast<uint64_t>(p.dstStride) * des, elems, qc, api);
        else  // NZ: N1 column blocks of mSize x 16 elements
            TimeFixpipe(gm ? dst : nullptr, N1, static_cast<uint64_t>(p.mSize) * 16 * des,
                        static_cast<uint64_t>(p.dstStride) * 32, elems, qc, api);
        UnitFlagEnd(true, p.unitFlag, unit.data(), static_cast<int>(unit.size()));
        if (TimingOnly()) return Count(Pipe::FIXP, elems * des);
    }
    float scale = 1.0f;
    if (p.quantPre == QM::DEQF16) scale = BitsFloat(static_cast<uint32_t>(p.deqScalar) & 0xffffe000u);
    const auto *S = static_cast<const uint8_t *>(src.p);
    auto convert = [&](uint64_t srcElem, uint32_t col, uint8_t *out) {
        float v;
        if (st == DType::F32) {
            std::memcpy(&v, S + srcElem * 4, 4);
        } else {
            int32_t iv;
            std::memcpy(&iv, S + srcElem * 4, 4);
            const float sc = channelScale ? BitsFloat(static_cast<uint32_t>(channelScale[col]) & 0xffffe000u) : scale;
            v = static_cast<float>(iv) * sc;
            if (dt == DType::I32) {
                if (p.reluEn && iv < 0) iv = 0;
                std::memcpy(out, &iv, 4);
                return;
            }
        }
        if (p.reluEn && v < 0) v = 0;
        switch (dt) {
            case DType::F16: {
                const uint16_t b = FloatToHalfBits(v);
                std::memcpy(out, &b, 2);
                break;
            }
            case DType::BF16: {
                const uint16_t b = FloatToBf16Bits(v);
                std::memcpy(out, &b, 2);
                break;
            }
            default:
                std::memcpy(out, &v, 4);
                break;
        }
    };
    std::vector<uint8_t> row(static_cast<size_t>(p.nSize) * des);
    auto store = [&](uint8_t *d, const uint8_t *s, uint64_t bytes) {
        if (static_cast<Buf>(dstBuf) == Buf::GM)
            GmStore(api, d, s, bytes);
        else
            std::memcpy(d, s, bytes);
    };
    for (uint32_t nd = 0; nd < p.ndNum; ++nd)
        for (uint32_t j = 0; j < p.mSize; ++j) {
            if (layout == 1) {
                for (uint32_t col = 0; col < p.nSize; ++col)
                    convert(nd * ndSrc + (static_cast<uint64_t>(col / 16) * p.srcStride + j) * 16 + col % 16, col,
                            &row[static_cast<size_t>(col) * des]);
                store(static_cast<uint8_t *>(dst) +
                          (static_cast<uint64_t>(nd) * p.dstNdStride + static_cast<uint64_t>(j) * p.dstStride) * des,
                      row.data(), row.size());
            } else {
                for (uint32_t kb = 0; kb < N1; ++kb) {
                    uint8_t frag[64];
                    for (int c0 = 0; c0 < 16; ++c0)
                        convert((static_cast<uint64_t>(kb) * p.srcStride + j) * 16 + c0, kb * 16 + c0, frag + c0 * des);
                    store(static_cast<uint8_t *>(dst) + kb * p.dstStride * 32ull + static_cast<uint64_t>(j) * 16 * des,
                          frag, 16ull * des);
                }
            }
        }
    Count(Pipe::FIXP, static_cast<uint64_t>(p.ndNum) * p.mSize * p.nSize * des);
}

}  // namespace emu
