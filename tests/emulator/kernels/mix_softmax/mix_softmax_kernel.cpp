// MIX proof kernel: Y = softmax_rows(A * B^T). The AIC computes a block of S = A * B^T into one
// of two fp32 GM workspace slots and signals its two AIVs (CrossCoreSetFlag mode 2); each AIV
// turns half of the block's rows into softmax rows of Y and hands the slot back.
#include "kernel_operator.h"
#include "mix_softmax_tiling_data.h"

using namespace AscendC;

namespace {

constexpr uint32_t FRACTAL = 16;
constexpr uint32_t FRACTAL_ELEMS = 256;
constexpr uint32_t K_STEP = 64;         // K per Mmad: L0B holds n (<= 512) x 64 halves
constexpr uint16_t FLAG_S_READY = 0;    // + slot: cube -> vector, S block written
constexpr uint16_t FLAG_SLOT_FREE = 2;  // + slot: vector -> cube, slot consumed
constexpr uint32_t SLOTS = 2;

__aicore__ inline uint32_t Align16(uint32_t v) { return (v + FRACTAL - 1) / FRACTAL * FRACTAL; }
__aicore__ inline uint32_t MinU(uint32_t a, uint32_t b) { return a < b ? a : b; }

class MixSoftmaxCube {
public:
    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR ws, const MixSoftmaxTilingData &tiling)
    {
        t_ = tiling;
        aGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(a), static_cast<uint64_t>(t_.m) * t_.k);
        bGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(b), static_cast<uint64_t>(t_.n) * t_.k);
        sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws),
                             static_cast<uint64_t>(GetBlockNum()) * SLOTS * t_.baseM * t_.nAlign);
        pipe_.InitBuffer(a1_, 1, t_.baseM * K_STEP * sizeof(half));
        pipe_.InitBuffer(b1_, 1, t_.nAlign * K_STEP * sizeof(half));
        pipe_.InitBuffer(a2_, 1, t_.baseM * K_STEP * sizeof(half));
        pipe_.InitBuffer(b2_, 1, t_.nAlign * K_STEP * sizeof(half));
        pipe_.InitBuffer(c1_, 1, t_.baseM * t_.nAlign * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        uint32_t iter = 0;
        for (uint32_t blk = static_cast<uint32_t>(GetBlockIdx()); blk < t_.rowBlocks;
             blk += static_cast<uint32_t>(GetBlockNum())) {
            const uint32_t slot = iter % SLOTS;
            if (iter >= SLOTS) {
                CrossCoreWaitFlag(FLAG_SLOT_FREE + slot);
            }
            ComputeBlock(blk, slot);
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_S_READY + slot);
            ++iter;
        }
        for (uint32_t i = (iter > SLOTS ? iter - SLOTS : 0); i < iter; ++i) {  // take back the last slots
            CrossCoreWaitFlag(FLAG_SLOT_FREE + i % SLOTS);
        }
    }

private:
    __aicore__ inline void ComputeBlock(uint32_t blk, uint32_t slot)
    {
        const uint32_t rows = MinU(t_.baseM, t_.m - blk * t_.baseM);
        const uint32_t rowsAlign = Align16(rows);
        const uint32_t m1 = rowsAlign / FRACTAL;
        const uint32_t n1 = t_.nAlign / FRACTAL;
        LocalTensor<float> c1 = c1_.AllocTensor<float>();
        for (uint32_t k0 = 0; k0 < t_.k; k0 += K_STEP) {
            const uint32_t kLen = MinU(K_STEP, t_.k - k0);
            const uint32_t k1 = Align16(kLen) / FRACTAL;
            LocalTensor<half> a1 = a1_.AllocTensor<half>();
            DataCopy(a1, aGm_[static_cast<uint64_t>(blk) * t_.baseM * t_.k + k0],
                     Nd2NzParams(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(kLen), 0,
                                 static_cast<uint16_t>(t_.k), static_cast<uint16_t>(rowsAlign), 1, 0));
            a1_.EnQue(a1);
            // B is [n, k] row-major: its Nz image (row pitch nAlign) is already the Zn layout of B^T.
            LocalTensor<half> b1 = b1_.AllocTensor<half>();
            DataCopy(b1, bGm_[k0],
                     Nd2NzParams(1, static_cast<uint16_t>(t_.n), static_cast<uint16_t>(kLen), 0,
                                 static_cast<uint16_t>(t_.k), static_cast<uint16_t>(t_.nAlign), 1, 0));
            b1_.EnQue(b1);
            a1 = a1_.DeQue<half>();
            LocalTensor<half> a2 = a2_.AllocTensor<half>();
            for (uint32_t i = 0; i < m1; ++i) {
                LoadData(a2[i * k1 * FRACTAL_ELEMS], a1,
                         LoadData2DParams(static_cast<uint16_t>(i), static_cast<uint8_t>(k1), static_cast<uint16_t>(m1),
                                          0, 0, false, 0));
            }
            a1_.FreeTensor(a1);
            a2_.EnQue(a2);
            b1 = b1_.DeQue<half>();
            LocalTensor<half> b2 = b2_.AllocTensor<half>();
            for (uint32_t i = 0; i < k1; ++i) {
                LoadData(b2[i * n1 * FRACTAL_ELEMS], b1,
                         LoadData2DParams(static_cast<uint16_t>(i * n1), static_cast<uint8_t>(n1), 1, 0, 0, false, 0));
            }
            b1_.FreeTensor(b1);
            b2_.EnQue(b2);
            a2 = a2_.DeQue<half>();
            b2 = b2_.DeQue<half>();
            MmadParams mm;
            mm.m = static_cast<uint16_t>(rows == 1 ? FRACTAL : rows);
            mm.n = static_cast<uint16_t>(t_.n);
            mm.k = static_cast<uint16_t>(kLen);
            mm.cmatrixInitVal = k0 == 0;
            Mmad(c1, a2, b2, mm);
            PipeBarrier<PIPE_M>();
            a2_.FreeTensor(a2);
            b2_.FreeTensor(b2);
        }
        c1_.EnQue(c1);
        c1 = c1_.DeQue<float>();
        FixpipeParamsV220 fix;
        fix.nSize = static_cast<uint16_t>(t_.n);
        fix.mSize = static_cast<uint16_t>(rows);
        fix.srcStride = static_cast<uint16_t>(rowsAlign);
        fix.dstStride = t_.nAlign;
        fix.quantPre = QuantMode_t::NoQuant;
        fix.ndNum = 1;
        Fixpipe(sGm_[(static_cast<uint64_t>(GetBlockIdx()) * SLOTS + slot) * t_.baseM * t_.nAlign], c1, fix);
        c1_.FreeTensor(c1);
    }

    MixSoftmaxTilingData t_;
    TPipe pipe_;
    TQue<TPosition::A1, 1> a1_;
    TQue<TPosition::B1, 1> b1_;
    TQue<TPosition::A2, 1> a2_;
    TQue<TPosition::B2, 1> b2_;
    TQue<TPosition::CO1, 1> c1_;
    GlobalTensor<half> aGm_;
    GlobalTensor<half> bGm_;
    GlobalTensor<float> sGm_;
};

class MixSoftmaxVector {
public:
    __aicore__ inline void Init(GM_ADDR y, GM_ADDR ws, const MixSoftmaxTilingData &tiling)
    {
        t_ = tiling;
        cube_ = static_cast<uint32_t>(GetBlockIdx() / GetTaskRation());
        sub_ = static_cast<uint32_t>(GetSubBlockIdx());
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(y), static_cast<uint64_t>(t_.m) * t_.n);
        sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws),
                             static_cast<uint64_t>(GetBlockNum()) * SLOTS * t_.baseM * t_.nAlign);
        pipe_.InitBuffer(inQ_, 2, t_.nAlign * sizeof(float));
        pipe_.InitBuffer(outQ_, 2, t_.nAlign * sizeof(float));
        pipe_.InitBuffer(tmp_, 256);
    }

    __aicore__ inline void Process()
    {
        uint32_t iter = 0;
        for (uint32_t blk = cube_; blk < t_.rowBlocks; blk += static_cast<uint32_t>(GetBlockNum())) {
            const uint32_t slot = iter % SLOTS;
            CrossCoreWaitFlag(FLAG_S_READY + slot);
            const uint32_t rows = MinU(t_.baseM, t_.m - blk * t_.baseM);
            const uint32_t half = t_.baseM / 2;
            const uint32_t first = sub_ * half;
            const uint32_t mine = rows > first ? MinU(half, rows - first) : 0;
            for (uint32_t r = first; r < first + mine; ++r) {
                SoftmaxRow((static_cast<uint64_t>(cube_) * SLOTS + slot) * t_.baseM * t_.nAlign + r * t_.nAlign,
                           static_cast<uint64_t>(blk * t_.baseM + r) * t_.n);
            }
            CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_SLOT_FREE + slot);
            ++iter;
        }
    }

private:
    __aicore__ inline void SoftmaxRow(uint64_t sOffset, uint64_t yOffset)
    {
        const int32_t n = static_cast<int32_t>(t_.n);
        LocalTensor<float> s = inQ_.AllocTensor<float>();
        DataCopy(s, sGm_[sOffset], t_.nAlign);
        inQ_.EnQue(s);
        s = inQ_.DeQue<float>();
        LocalTensor<float> y = outQ_.AllocTensor<float>();
        LocalTensor<float> tmp = tmp_.Get<float>();
        ReduceMax(tmp, s, y, n, false);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        const float rowMax = tmp.GetValue(0);
        Adds(y, s, -rowMax, n);
        PipeBarrier<PIPE_V>();
        Exp(y, y, n);
        PipeBarrier<PIPE_V>();
        ReduceSum(tmp, y, s, n);
        SetFlag<HardEvent::V_S>(0);
        WaitFlag<HardEvent::V_S>(0);
        const float rowSum = tmp.GetValue(0);
        Muls(y, y, 1.0f / rowSum, n);
        inQ_.FreeTensor(s);
        outQ_.EnQue(y);
        y = outQ_.DeQue<float>();
        DataCopyPad(yGm_[yOffset], y, DataCopyExtParams(1, static_cast<uint32_t>(n * sizeof(float)), 0, 0, 0));
        outQ_.FreeTensor(y);
    }

    MixSoftmaxTilingData t_;
    TPipe pipe_;
    TQue<TPosition::VECIN, 1> inQ_;
    TQue<TPosition::VECOUT, 1> outQ_;
    TBuf<TPosition::VECCALC> tmp_;
    GlobalTensor<float> sGm_;
    GlobalTensor<float> yGm_;
    uint32_t cube_ = 0;
    uint32_t sub_ = 0;
};

}  // namespace

extern "C" __global__ __aicore__ void mix_softmax(GM_ADDR a, GM_ADDR b, GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(MixSoftmaxTilingData, tilingData, tiling);
    GM_ADDR ws = GetUserWorkspace(workspace);
    if ASCEND_IS_AIC {
        MixSoftmaxCube op;
        op.Init(a, b, ws, tilingData);
        op.Process();
    }
    if ASCEND_IS_AIV {
        MixSoftmaxVector op;
        op.Init(y, ws, tilingData);
        op.Process();
    }
}
