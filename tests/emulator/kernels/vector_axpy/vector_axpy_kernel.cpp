// Vector proof kernel: z = alpha * x + y, a double-buffered TQue pipeline (copy-in, compute,
// copy-out) over the AIV cores; the short last tile of a core goes through DataCopyPad.
#include "kernel_operator.h"
#include "vector_axpy_tiling_data.h"

using namespace AscendC;

namespace {

constexpr int32_t BUFFER_NUM = 2;

template <typename T> class VectorAxpy {
public:
    __aicore__ inline VectorAxpy() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const VectorAxpyTilingData &tiling)
    {
        const uint32_t start = static_cast<uint32_t>(GetBlockIdx()) * tiling.perCoreLength;
        length_ = start >= tiling.totalLength
                      ? 0
                      : (tiling.totalLength - start < tiling.perCoreLength ? tiling.totalLength - start
                                                                           : tiling.perCoreLength);
        tileLength_ = tiling.tileLength;
        alpha_ = static_cast<T>(tiling.alpha);
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(x) + start, length_);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(y) + start, length_);
        zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(z) + start, length_);
        pipe_.InitBuffer(inX_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(inY_, BUFFER_NUM, tileLength_ * sizeof(T));
        pipe_.InitBuffer(outZ_, BUFFER_NUM, tileLength_ * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        const uint32_t tiles = (length_ + tileLength_ - 1) / tileLength_;
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t offset = i * tileLength_;
            const uint32_t len = length_ - offset < tileLength_ ? length_ - offset : tileLength_;
            CopyIn(offset, len);
            Compute(len);
            CopyOut(offset, len);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t offset, uint32_t len)
    {
        LocalTensor<T> x = inX_.template AllocTensor<T>();
        LocalTensor<T> y = inY_.template AllocTensor<T>();
        if (len == tileLength_) {
            DataCopy(x, xGm_[offset], len);
            DataCopy(y, yGm_[offset], len);
        } else {
            const DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            const DataCopyPadExtParams<T> pad{false, 0, 0, 0};
            DataCopyPad(x, xGm_[offset], copy, pad);
            DataCopyPad(y, yGm_[offset], copy, pad);
        }
        inX_.EnQue(x);
        inY_.EnQue(y);
    }

    __aicore__ inline void Compute(uint32_t len)
    {
        LocalTensor<T> x = inX_.template DeQue<T>();
        LocalTensor<T> y = inY_.template DeQue<T>();
        LocalTensor<T> z = outZ_.template AllocTensor<T>();
        Muls(z, x, alpha_, static_cast<int32_t>(len));
        PipeBarrier<PIPE_V>();
        Add(z, z, y, static_cast<int32_t>(len));
        outZ_.EnQue(z);
        inX_.FreeTensor(x);
        inY_.FreeTensor(y);
    }

    __aicore__ inline void CopyOut(uint32_t offset, uint32_t len)
    {
        LocalTensor<T> z = outZ_.template DeQue<T>();
        if (len == tileLength_) {
            DataCopy(zGm_[offset], z, len);
        } else {
            const DataCopyExtParams copy{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
            DataCopyPad(zGm_[offset], z, copy);
        }
        outZ_.FreeTensor(z);
    }

    TPipe pipe_;
    TQue<TPosition::VECIN, BUFFER_NUM> inX_;
    TQue<TPosition::VECIN, BUFFER_NUM> inY_;
    TQue<TPosition::VECOUT, BUFFER_NUM> outZ_;
    GlobalTensor<T> xGm_;
    GlobalTensor<T> yGm_;
    GlobalTensor<T> zGm_;
    uint32_t length_ = 0;
    uint32_t tileLength_ = 0;
    T alpha_;
};

}  // namespace

extern "C" __global__ __aicore__ void vector_axpy(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR /* workspace */,
                                                  GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA_WITH_STRUCT(VectorAxpyTilingData, tilingData, tiling);
    if (TILING_KEY_IS(VECTOR_AXPY_KEY_FLOAT)) {
        VectorAxpy<float> op;
        op.Init(x, y, z, tilingData);
        op.Process();
    } else if (TILING_KEY_IS(VECTOR_AXPY_KEY_HALF)) {
        VectorAxpy<half> op;
        op.Init(x, y, z, tilingData);
        op.Process();
    }
}
