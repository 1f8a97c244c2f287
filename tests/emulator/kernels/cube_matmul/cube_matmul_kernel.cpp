// Cube proof kernel: C = A * B on the AIC cores. Per baseM x baseN tile of C and per baseK step:
// GM -> L1 with Nd2Nz, L1 -> L0A (Zz) and L1 -> L0B (Zn, transposed load), Mmad accumulating in
// L0C, then Fixpipe NZ -> ND with fp32 -> fp16/bf16 rounding.
#include "kernel_operator.h"
#include "cube_matmul_tiling_data.h"

using namespace AscendC;

namespace {

constexpr uint32_t FRACTAL = 16;
constexpr uint32_t FRACTAL_ELEMS = 256;

__aicore__ inline uint32_t Align16(uint32_t v) { return (v + FRACTAL - 1) / FRACTAL * FRACTAL; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

template <typename T, QuantMode_t QUANT> class CubeMatmul {
public:
    __aicore__ inline CubeMatmul() {}
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, const CubeMatmulTilingData &tiling)
    {
        t_ = tiling;
        aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(a), static_cast<uint64_t>(t_.m) * t_.k);
        bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(b), static_cast<uint64_t>(t_.k) * t_.n);
        cGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(c), static_cast<uint64_t>(t_.m) * t_.n);
        pipe_.InitBuffer(a1_, 1, t_.baseM * t_.baseK * sizeof(T));
        pipe_.InitBuffer(b1_, 1, t_.baseK * t_.baseN * sizeof(T));
        pipe_.InitBuffer(a2_, 1, t_.baseM * t_.baseK * sizeof(T));
        pipe_.InitBuffer(b2_, 1, t_.baseK * t_.baseN * sizeof(T));
        pipe_.InitBuffer(c1_, 1, t_.baseM * t_.baseN * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = t_.mTiles * t_.nTiles;
        for (uint32_t tile = static_cast<uint32_t>(GetBlockIdx()); tile < tiles;
             tile += static_cast<uint32_t>(GetBlockNum())) {
            ComputeTile(tile / t_.nTiles, tile % t_.nTiles);
        }
    }

private:
    __aicore__ inline void ComputeTile(uint32_t mi, uint32_t ni)
    {
        const uint32_t rows = MinU(t_.baseM, t_.m - mi * t_.baseM);
        const uint32_t cols = MinU(t_.baseN, t_.n - ni * t_.baseN);
        const uint32_t rowsAlign = Align16(rows);
        const uint32_t colsAlign = Align16(cols);
        const uint32_t kSteps = (t_.k + t_.baseK - 1) / t_.baseK;
        LocalTensor<float> c1 = c1_.AllocTensor<float>();
        for (uint32_t ks = 0; ks < kSteps; ++ks) {
            const uint32_t kLen = MinU(t_.baseK, t_.k - ks * t_.baseK);
            const uint32_t kAlign = Align16(kLen);
            // A block: rows x kLen of the row-major A -> Nz in L1 (row pitch rowsAlign).
            LocalTensor<T> a1 = a1_.AllocTensor<T>();
            Nd2NzParams aNd2Nz(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(kLen), 0,
                               static_cast<uint16_t>(t_.k), static_cast<uint16_t>(rowsAlign), 1, 0);
            DataCopy(a1, aGm_[static_cast<uint64_t>(mi) * t_.baseM * t_.k + ks * t_.baseK], aNd2Nz);
            a1_.EnQue(a1);
            // B block: kLen x cols of the row-major B -> Nz in L1 (row pitch kAlign).
            LocalTensor<T> b1 = b1_.AllocTensor<T>();
            Nd2NzParams bNd2Nz(1, static_cast<uint16_t>(kLen), static_cast<uint16_t>(cols), 0,
                               static_cast<uint16_t>(t_.n), static_cast<uint16_t>(kAlign), 1, 0);
            DataCopy(b1, bGm_[static_cast<uint64_t>(ks) * t_.baseK * t_.n + ni * t_.baseN], bNd2Nz);
            b1_.EnQue(b1);
            LoadAndMultiply(rows, cols, kLen, rowsAlign, colsAlign, kAlign, c1, ks == 0);
        }
        c1_.EnQue(c1);
        c1 = c1_.DeQue<float>();
        FixpipeParamsV220 fix;
        fix.nSize = static_cast<uint16_t>(cols);
        fix.mSize = static_cast<uint16_t>(rows);
        fix.srcStride = static_cast<uint16_t>(rowsAlign);
        fix.dstStride = t_.n;
        fix.quantPre = QUANT;
        fix.ndNum = 1;
        Fixpipe(cGm_[static_cast<uint64_t>(mi) * t_.baseM * t_.n + ni * t_.baseN], c1, fix);
        c1_.FreeTensor(c1);
    }

    __aicore__ inline void LoadAndMultiply(uint32_t rows, uint32_t cols, uint32_t kLen, uint32_t rowsAlign,
                                           uint32_t colsAlign, uint32_t kAlign, const LocalTensor<float> &c1,
                                           bool first)
    {
        const uint32_t m1 = rowsAlign / FRACTAL;
        const uint32_t n1 = colsAlign / FRACTAL;
        const uint32_t k1 = kAlign / FRACTAL;
        LocalTensor<T> a1 = a1_.DeQue<T>();
        LocalTensor<T> a2 = a2_.AllocTensor<T>();
        for (uint32_t i = 0; i < m1; ++i) {  // one row of fractals of A per load: Nz -> Zz
            LoadData2DParams load(static_cast<uint16_t>(i), static_cast<uint8_t>(k1), static_cast<uint16_t>(m1), 0, 0,
                                  false, 0);
            LoadData(a2[i * k1 * FRACTAL_ELEMS], a1, load);
        }
        a1_.FreeTensor(a1);
        a2_.EnQue(a2);
        LocalTensor<T> b1 = b1_.DeQue<T>();
        LocalTensor<T> b2 = b2_.AllocTensor<T>();
        for (uint32_t i = 0; i < k1; ++i) {  // one row of fractals of B per load, transposed: Nz -> Zn
            LoadData2DParams load(static_cast<uint16_t>(i), static_cast<uint8_t>(n1), static_cast<uint16_t>(k1), 0, 0,
                                  true, 0);
            LoadData(b2[i * n1 * FRACTAL_ELEMS], b1, load);
        }
        b1_.FreeTensor(b1);
        b2_.EnQue(b2);
        a2 = a2_.DeQue<T>();
        b2 = b2_.DeQue<T>();
        MmadParams mm;
        mm.m = static_cast<uint16_t>(rows == 1 ? FRACTAL : rows);  // m == 1 would switch the cube to GEMV
        mm.n = static_cast<uint16_t>(cols);
        mm.k = static_cast<uint16_t>(kLen);
        mm.cmatrixInitVal = first;
        Mmad(c1, a2, b2, mm);
        PipeBarrier<PIPE_M>();
        a2_.FreeTensor(a2);
        b2_.FreeTensor(b2);
    }

    CubeMatmulTilingData t_;
    TPipe pipe_;
    TQue<TPosition::A1, 1> a1_;
    TQue<TPosition::B1, 1> b1_;
    TQue<TPosition::A2, 1> a2_;
    TQue<TPosition::B2, 1> b2_;
    TQue<TPosition::CO1, 1> c1_;
    GlobalTensor<T> aGm_;
    GlobalTensor<T> bGm_;
    GlobalTensor<T> cGm_;
};

}  // namespace

extern "C" __global__ __aicore__ void cube_matmul(GM_ADDR a, GM_ADDR b, GM_ADDR c, GM_ADDR /* workspace */,
                                                  GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    GET_TILING_DATA_WITH_STRUCT(CubeMatmulTilingData, tilingData, tiling);
    if (TILING_KEY_IS(CUBE_MATMUL_KEY_HALF)) {
        CubeMatmul<half, QuantMode_t::F322F16> op;
        op.Init(a, b, c, tilingData);
        op.Process();
    } else if (TILING_KEY_IS(CUBE_MATMUL_KEY_BF16)) {
        CubeMatmul<bfloat16_t, QuantMode_t::F322BF16> op;
        op.Init(a, b, c, tilingData);
        op.Process();
    }
}
