// LoadData 2D, Mmad and Fixpipe on the real fractal layouts (asc-devkit API pages `矩阵计算（ISASI）/`):
// L0A Zz, L0B Zn, L0C Nz. A wrong layout or a wrong LoadData gives wrong numbers.
#include <immintrin.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>

#include "emu/core.h"
#include "emu/dtype.h"
#include "emu/race.h"
#include "half_convert.h"
#include "kernel_operator.h"

namespace emu {

void GmStore(const char *api, uint8_t *dst, const uint8_t *src, uint64_t bytes);

namespace {

const char *BufName(int b) {
    static const char *n[] = {"GM", "UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return n[b];
}

void CheckSpan(const char *api, const char *what, const LocalRef &r, uint64_t span, uint64_t align) {
    CheckLocal(api, what, static_cast<Buf>(r.buf), r.p, span);
    if (span > r.bytes)
        Fail(api, "%s needs %llu bytes but the %s tensor has %llu", what, (unsigned long long)span, BufName(r.buf),
             (unsigned long long)r.bytes);
    const uint64_t off = LocalOffset(static_cast<Buf>(r.buf), r.p);
    if (off % align != 0)
        Fail(api, "%s address %s+%llu is not %llu-byte aligned", what, BufName(r.buf), (unsigned long long)off, (unsigned long long)align);
}

// `count` contiguous elements of type t to float.
void ConvertRun(DType t, const uint8_t *src, float *dst, uint32_t count) {
    if (t == DType::F16) {
        HalfToFloatN(reinterpret_cast<const uint16_t *>(src), dst, count);
    } else if (t == DType::BF16) {
        for (uint32_t i = 0; i < count; ++i) { uint16_t b; std::memcpy(&b, src + 2 * i, 2); dst[i] = Bf16BitsToFloat(b); }
    } else {
        std::memcpy(dst, src, count * sizeof(float));
    }
}

// C[m][n] += A[m][k] * B[k][n], row-major floats. Every C element is updated in ascending k
// with a rounded multiply then a rounded add, so all code paths give identical bits.
__attribute__((optimize("fp-contract=off"))) void GemmScalar(const float *A, const float *B, float *C, uint32_t m, uint32_t n, uint32_t k) {
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
__attribute__((target("avx2"))) void GemmAvx2(const float *A, const float *B, float *C, uint32_t m, uint32_t n, uint32_t k) {
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
                for (uint32_t kk = 0; kk < k; ++kk) acc += A[static_cast<size_t>(i + r) * k + kk] * B[static_cast<size_t>(kk) * n + j];
                C[static_cast<size_t>(i + r) * n + j] = acc;
            }
    }
    if (i < m) GemmScalar(A + static_cast<size_t>(i) * k, B, C + static_cast<size_t>(i) * n, m - i, n, k);
}
const bool kHasAvx2 = __builtin_cpu_supports("avx2");
#endif

void Gemm(const float *A, const float *B, float *C, uint32_t m, uint32_t n, uint32_t k) {
#if defined(__x86_64__)
    if (kHasAvx2) return GemmAvx2(A, B, C, m, n, k);
#endif
    GemmScalar(A, B, C, m, n, k);
}

}  // namespace

void LoadData2D(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int es,
                const AscendC::LoadData2DParams &p) {
    if (p.repeatTimes == 0 || Ctx().mem[dst.buf] == nullptr) return;
    const Buf db = static_cast<Buf>(dst.buf), sb = static_cast<Buf>(srcBuf);
    const bool toL0 = db == Buf::L0A || db == Buf::L0B;
    if (!(toL0 && sb == Buf::L1) && !(sb == Buf::GM && (toL0 || db == Buf::L1)))
        Fail(api, "%s -> %s is not a LoadData 2D path (L1 -> L0A/L0B, GM -> L1/L0A/L0B)", BufName(srcBuf), BufName(dst.buf));
    if (p.ifTranspose && (es != 2 || sb != Buf::L1))
        Fail(api, "ifTranspose needs 16-bit elements loaded from L1 (got %d-byte elements from %s)", es, BufName(srcBuf));
    const bool down = p.addrMode == 1 && sb == Buf::GM;
    const uint64_t n = p.repeatTimes;
    const int64_t lastSrc = down ? static_cast<int64_t>(p.startIndex) - static_cast<int64_t>((n - 1) * p.srcStride)
                                 : static_cast<int64_t>(p.startIndex + (n - 1) * p.srcStride);
    if (lastSrc < 0) Fail(api, "addrMode 1 walks below fractal 0 (startIndex %u, srcStride %u)", p.startIndex, p.srcStride);
    const uint64_t srcSpan = (static_cast<uint64_t>(down ? p.startIndex : lastSrc) + 1) * 512;
    if (sb == Buf::GM) CheckGm(api, "source", src, srcSpan);
    else CheckSpan(api, "source", LocalRef{const_cast<void *>(src), srcBytes, srcBuf}, srcSpan, 32);
    CheckSpan(api, "destination", dst, ((n - 1) * (p.dstGap + 1ull) + 1) * 512, 512);
    if (sb != Buf::GM) {
        const int64_t lo = down ? lastSrc : p.startIndex, hi = down ? p.startIndex : lastSrc;
        RaceRead(api, Pipe::MTE1, srcBuf, static_cast<const uint8_t *>(src) + lo * 512, static_cast<uint64_t>(hi - lo + 1) * 512);
    }
    RaceWrite(api, sb == Buf::GM ? Pipe::MTE2 : Pipe::MTE1, dst.buf, dst.p, ((n - 1) * (p.dstGap + 1ull) + 1) * 512);
    if (sb == Buf::GM) {
        const int64_t lo = down ? lastSrc : p.startIndex;
        TimeGmRead(Pipe::MTE2, static_cast<const uint8_t *>(src) + lo * 512, n, 512, static_cast<uint64_t>(p.srcStride) * 512, api);
    } else {
        TimeLoadData(db == Buf::L0B, n * 512, api);
    }
    for (uint64_t i = 0; i < n && !TimingOnly(); ++i) {
        const int64_t si = down ? p.startIndex - static_cast<int64_t>(i * p.srcStride) : p.startIndex + static_cast<int64_t>(i * p.srcStride);
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

// Square i (fractals startIndex + i * srcStride, in squares) -> destination fractal
// i * (dstGap + 1); for 32-bit elements its second half goes dstFracGap + 1 fractals further.
void LoadDataTranspose(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int es,
                       const AscendC::LoadData2dTransposeParams &p) {
    if (p.repeatTimes == 0 || Ctx().mem[dst.buf] == nullptr) return;
    const Buf db = static_cast<Buf>(dst.buf), sb = static_cast<Buf>(srcBuf);
    if (sb != Buf::L1 || (db != Buf::L0A && db != Buf::L0B))
        Fail(api, "%s -> %s is not a LoadDataWithTranspose path (L1 -> L0A/L0B)", BufName(srcBuf), BufName(dst.buf));
    if (es != 2 && es != 4)
        Fail(api, "%d-byte elements: only the 16- and 32-bit forms are implemented by the emulator", es);
    if (p.addrMode != 0) Fail(api, "addrMode 1 (decreasing addresses) is not implemented by the emulator");
    const uint64_t n = p.repeatTimes;
    const uint64_t square = es == 4 ? 1024 : 512;  // bytes per repeat
    const uint64_t dstFracs = es == 4 ? 2 : 1;
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
        if (es == 2) {
            uint16_t in[256], out[256];
            std::memcpy(in, sq, 512);
            for (int r = 0; r < 16; ++r)
                for (int c = 0; c < 16; ++c) out[c * 16 + r] = in[r * 16 + c];
            std::memcpy(d, out, 512);
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

void Mmad(LocalRef c, DType ct, LocalRef a, DType at, LocalRef b, DType bt, const AscendC::MmadParams &p) {
    const char *api = "Mmad";
    if (p.m == 0 || p.n == 0 || p.k == 0 || Ctx().mem[c.buf] == nullptr) return;
    if (static_cast<Buf>(c.buf) != Buf::L0C || static_cast<Buf>(a.buf) != Buf::L0A || static_cast<Buf>(b.buf) != Buf::L0B)
        Fail(api, "operands must be dst in L0C (CO1), fm in L0A (A2), filter in L0B (B2); got %s, %s, %s", BufName(c.buf),
             BufName(a.buf), BufName(b.buf));
    const bool fp = (at == DType::F16 && bt == DType::F16) || (at == DType::BF16 && bt == DType::BF16) ||
                    (at == DType::F32 && bt == DType::F32);
    const bool i8 = at == DType::I8 && bt == DType::I8;
    if (!((fp && ct == DType::F32) || (i8 && ct == DType::I32)))
        Fail(api, "%s x %s -> %s is not a supported cube type combination on Atlas A2", DTypeName(at), DTypeName(bt), DTypeName(ct));
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) Fail(api, "m %u, n %u, k %u must each be <= 4095", p.m, p.n, p.k);
    if (p.cmatrixSource) Fail(api, "cmatrixSource (C initialised from the bias table) is not implemented by the emulator");
    const int es = DTypeSize(at);
    const int K0 = 32 / es;
    const uint32_t m = p.m, n = p.n, k = p.k;
    const bool gemv = m == 1;  // A2 switches to GEMV: L0A is a plain vector of k elements
    const uint32_t M1 = (m + 15) / 16, N1 = (n + 15) / 16;
    const uint32_t kAlign = (at == DType::F32 && p.kDirectionAlign) ? 16 : K0;
    const uint32_t K1 = (k + kAlign - 1) / kAlign * kAlign / K0;
    CheckSpan(api, "fm (L0A)", a, gemv ? static_cast<uint64_t>(k) * es : static_cast<uint64_t>(M1) * K1 * 512, 512);
    CheckSpan(api, "filter (L0B)", b, static_cast<uint64_t>(K1) * N1 * 512, 512);
    CheckSpan(api, "dst (L0C)", c, static_cast<uint64_t>(M1) * N1 * 1024, 1024);
    const bool init = p.cmatrixInitVal && !p.isBias;
    RaceRead(api, Pipe::M, a.buf, a.p, gemv ? static_cast<uint64_t>(k) * es : static_cast<uint64_t>(M1) * K1 * 512);
    RaceRead(api, Pipe::M, b.buf, b.p, static_cast<uint64_t>(K1) * N1 * 512);
    if (!init) RaceRead(api, Pipe::M, c.buf, c.p, static_cast<uint64_t>(M1) * N1 * 1024);
    RaceWrite(api, Pipe::M, c.buf, c.p, static_cast<uint64_t>(M1) * N1 * 1024);
    TimeMmad(m, n, k, i8 ? 1 : (at == DType::F32 ? 2 : 0));
    const auto *A = static_cast<const uint8_t *>(a.p);
    const auto *B = static_cast<const uint8_t *>(b.p);
    auto aOff = [&](uint32_t i, uint32_t kk) -> uint64_t {
        if (gemv) return static_cast<uint64_t>(kk) * es;
        return ((((static_cast<uint64_t>(i / 16) * K1 + kk / K0) * 16 + i % 16) * K0) + kk % K0) * es;
    };
    auto bOff = [&](uint32_t kk, uint32_t j) -> uint64_t {
        return ((((static_cast<uint64_t>(kk / K0) * N1 + j / 16) * 16 + j % 16) * K0) + kk % K0) * es;
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
                if (init) std::fill(row, row + len, 0.0f);
                else std::memcpy(row, C + cIdx(i, n1 * 16), len * sizeof(float));
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
                for (uint32_t kk = 0; kk < k; ++kk)
                    acc += static_cast<int64_t>(static_cast<int8_t>(A[aOff(i, kk)])) * static_cast<int8_t>(B[bOff(kk, j)]);
                acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;  // integer accumulation saturates
                C[cIdx(i, j)] = static_cast<int32_t>(acc);
            }
    }
    PipeCounter &pc = Ctx().counters[static_cast<int>(Pipe::M)];
    pc.ops += 1;
    pc.macs += static_cast<uint64_t>(m) * n * k;
    pc.bytes += (static_cast<uint64_t>(m) * k + static_cast<uint64_t>(k) * n) * es;
}

void Fixpipe(const char *api, void *dst, int dstBuf, uint64_t dstBytes, DType dt, LocalRef src, DType st, int layout,
             const AscendC::FixpipeParamsV220 &p) {
    if (p.mSize == 0 || p.nSize == 0 || p.ndNum == 0 || Ctx().mem[src.buf] == nullptr) return;
    if (static_cast<Buf>(src.buf) != Buf::L0C) Fail(api, "source must be in L0C (CO1), not %s", BufName(src.buf));
    const int q = static_cast<int>(p.quantPre);
    using QM = QuantMode_t;
    bool ok = false;
    if (p.quantPre == QM::NoQuant) ok = dt == st && (st == DType::F32 || st == DType::I32);
    else if (p.quantPre == QM::F322F16) ok = st == DType::F32 && dt == DType::F16;
    else if (p.quantPre == QM::F322BF16) ok = st == DType::F32 && dt == DType::BF16;
    else if (p.quantPre == QM::DEQF16) ok = st == DType::I32 && dt == DType::F16;
    else Fail(api, "quantPre %d is not implemented by the emulator (NoQuant, F322F16, F322BF16, DEQF16)", q);
    if (!ok)
        Fail(api, "quantPre %d does not convert L0C %s to %s (fp32->half needs F322F16, fp32->bf16 F322BF16)", q, DTypeName(st),
             DTypeName(dt));
    if (layout == 2) Fail(api, "CFG_COLUMN_MAJOR is not available on Atlas A2");
    if (layout == 0 && p.nSize % 16 != 0) Fail(api, "nSize %u must be a multiple of 16 for the NZ layout", p.nSize);
    if (layout == 1 && p.mSize > 8192) Fail(api, "mSize %u exceeds 8192 for NZ2ND", p.mSize);
    if (p.srcStride < p.mSize && (p.nSize > 16))
        Fail(api, "srcStride %u (rows between fractal columns in L0C) is smaller than mSize %u", p.srcStride, p.mSize);
    const uint32_t N1 = (p.nSize + 15) / 16;
    const uint64_t ndSrc = static_cast<uint64_t>(p.srcNdStride) * 256;  // units of one 16x16 fractal (see docs/emulator.md)
    const uint64_t srcSpan = ((p.ndNum - 1ull) * ndSrc + ((N1 - 1ull) * p.srcStride + p.mSize) * 16) * 4;
    CheckSpan(api, "source (L0C)", src, srcSpan, 64);
    RaceRead(api, Pipe::FIXP, src.buf, src.p, srcSpan);
    const int des = DTypeSize(dt);
    uint64_t dstSpan;
    if (layout == 1) dstSpan = ((p.ndNum - 1ull) * p.dstNdStride + (p.mSize - 1ull) * p.dstStride + p.nSize) * des;
    else dstSpan = ((N1 - 1ull) * p.dstStride * 32 + static_cast<uint64_t>(p.mSize) * 16 * des);
    if (static_cast<Buf>(dstBuf) == Buf::GM) CheckGm(api, "destination", dst, dstSpan);
    else if (static_cast<Buf>(dstBuf) == Buf::L1) {
        CheckSpan(api, "destination", LocalRef{dst, dstBytes, dstBuf}, dstSpan, 32);
        RaceWrite(api, Pipe::FIXP, dstBuf, dst, dstSpan);
    }
    else Fail(api, "destination must be GM or L1 (A1/B1), not %s", BufName(dstBuf));
    {
        const bool gm = static_cast<Buf>(dstBuf) == Buf::GM;
        const uint64_t elems = static_cast<uint64_t>(p.ndNum) * p.mSize * p.nSize;
        const int qc = p.quantPre == QM::NoQuant ? 0 : 1;
        if (layout == 1)  // ND rows of nSize elements (ndNum matrices approximated as consecutive rows)
            TimeFixpipe(gm ? dst : nullptr, static_cast<uint64_t>(p.ndNum) * p.mSize, static_cast<uint64_t>(p.nSize) * des,
                        static_cast<uint64_t>(p.dstStride) * des, elems, qc, api);
        else  // NZ: N1 column blocks of mSize x 16 elements
            TimeFixpipe(gm ? dst : nullptr, N1, static_cast<uint64_t>(p.mSize) * 16 * des, static_cast<uint64_t>(p.dstStride) * 32,
                        elems, qc, api);
        if (TimingOnly()) return Count(Pipe::FIXP, elems * des);
    }
    float scale = 1.0f;
    if (p.quantPre == QM::DEQF16) scale = BitsFloat(static_cast<uint32_t>(p.deqScalar) & 0xffffe000u);
    const auto *S = static_cast<const uint8_t *>(src.p);
    auto convert = [&](uint64_t srcElem, uint8_t *out) {
        float v;
        if (st == DType::F32) { std::memcpy(&v, S + srcElem * 4, 4); }
        else { int32_t iv; std::memcpy(&iv, S + srcElem * 4, 4); v = static_cast<float>(iv) * scale;
               if (dt == DType::I32) { if (p.reluEn && iv < 0) iv = 0; std::memcpy(out, &iv, 4); return; } }
        if (p.reluEn && v < 0) v = 0;
        switch (dt) {
            case DType::F16: { const uint16_t b = FloatToHalfBits(v); std::memcpy(out, &b, 2); break; }
            case DType::BF16: { const uint16_t b = FloatToBf16Bits(v); std::memcpy(out, &b, 2); break; }
            default: std::memcpy(out, &v, 4); break;
        }
    };
    std::vector<uint8_t> row(static_cast<size_t>(p.nSize) * des);
    auto store = [&](uint8_t *d, const uint8_t *s, uint64_t bytes) {
        if (static_cast<Buf>(dstBuf) == Buf::GM) GmStore(api, d, s, bytes);
        else std::memcpy(d, s, bytes);
    };
    for (uint32_t nd = 0; nd < p.ndNum; ++nd)
        for (uint32_t j = 0; j < p.mSize; ++j) {
            if (layout == 1) {
                for (uint32_t col = 0; col < p.nSize; ++col)
                    convert(nd * ndSrc + (static_cast<uint64_t>(col / 16) * p.srcStride + j) * 16 + col % 16, &row[static_cast<size_t>(col) * des]);
                store(static_cast<uint8_t *>(dst) + (static_cast<uint64_t>(nd) * p.dstNdStride + static_cast<uint64_t>(j) * p.dstStride) * des,
                      row.data(), row.size());
            } else {
                for (uint32_t kb = 0; kb < N1; ++kb) {
                    uint8_t frag[64];
                    for (int c0 = 0; c0 < 16; ++c0) convert((static_cast<uint64_t>(kb) * p.srcStride + j) * 16 + c0, frag + c0 * des);
                    store(static_cast<uint8_t *>(dst) + kb * p.dstStride * 32ull + static_cast<uint64_t>(j) * 16 * des, frag, 16ull * des);
                }
            }
        }
    Count(Pipe::FIXP, static_cast<uint64_t>(p.ndNum) * p.mSize * p.nSize * des);
}

}  // namespace emu
