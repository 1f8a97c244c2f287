// INT8 KV cache (antiquant): before the forward core runs, the vector cores dequantise the key
// and value tensors into the workspace, element order unchanged,
//   x = (x_int8 + offset) * scale   (fp32, rounded to the query dtype T),
// and the forward core then reads these copies with the usual addressing (contiguous or
// paged). Per tensor: scale/offset shape (2) = [key, value]; per channel: (2, N, 1, D),
// (2, N, D) or (2, H) = key then value, index head * D + d. A tensor is viewed as rows of D
// elements; row r belongs to KV head (r / antiHeadRun) % numKvHeads (token-major caches have
// runs of 1 row, head-major caches runs of S or blockSize rows).
// This pass costs a full read and write of the cache: fusing the dequantisation into the
// cube's K/V load is the performance step left (docs/ops/incre_flash_attention_v4.md).
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "sync.h"

namespace AttentionCore {

template <typename T>
class KvAntiquant {
public:
    static constexpr uint32_t ROWS = 64;  // most rows per pass (8 KiB of int8 at D = 128)
    // UB the pass may use: 15 bytes per element of a pass (int8 in, fp16 stage, fp32 value,
    // scale and offset), under the 192 KiB of an Atlas A2 vector core.
    static constexpr uint32_t UB_BYTES = 160 * 1024;

    // keyIn/valueIn: int8 tensors; scale/offset: T; the copies go to keyOut/valueOut.
    __aicore__ inline void Run(const ForwardParams *p, GM_ADDR keyIn, GM_ADDR valueIn, GM_ADDR scale, GM_ADDR offset,
                               GM_ADDR keyOut, GM_ADDR valueOut)
    {
        p_ = p;
        const DecodeParams &d = DecodeOf(p);
        const uint32_t dd = p->headDim;
        dp_ = AlignUp(dd, 32);  // int8 rows start on 32-byte blocks
        rows_ = UB_BYTES / (15 * dp_);
        rows_ = rows_ > ROWS ? ROWS : (rows_ == 0 ? 1 : rows_);
        AscendC::TPipe pipe;
        pipe.InitBuffer(inBuf_, rows_ * dp_);
        pipe.InitBuffer(halfBuf_, rows_ * dp_ * 2);
        pipe.InitBuffer(accBuf_, rows_ * dp_ * 4);
        pipe.InitBuffer(scaleBuf_, rows_ * dp_ * 4);
        pipe.InitBuffer(offsetBuf_, rows_ * dp_ * 4);
        pipe.InitBuffer(paramBuf_, dp_ * sizeof(T));
        for (uint32_t r = 0; r < rows_; ++r) {
            paramKey_[r] = NO_PARAMS;
        }
        scale_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(scale));
        hasOffset_ = offset != nullptr;
        if (hasOffset_) offset_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(offset));

        const uint64_t rows = d.antiRows;
        const uint32_t v = AscendC::GetBlockIdx();
        const uint32_t cores = AscendC::GetBlockNum() * 2;  // MIX 1:2: two vector cores per block
        const uint64_t begin = rows * v / cores;
        const uint64_t end = rows * (v + 1) / cores;
        for (uint32_t which = 0; which < 2; ++which) {
            in_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(which == 0 ? keyIn : valueIn));
            out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(which == 0 ? keyOut : valueOut));
            for (uint64_t r0 = begin; r0 < end; r0 += rows_) {
                const uint32_t n = end - r0 < rows_ ? static_cast<uint32_t>(end - r0) : rows_;
                DequantRows(which, r0, n);
            }
        }
    }

private:
    __aicore__ inline void DequantRows(uint32_t which, uint64_t r0, uint32_t rows)
    {
        const DecodeParams &d = DecodeOf(p_);
        const uint32_t dd = p_->headDim;
        const int32_t count = static_cast<int32_t>(rows * dp_);
        const AscendC::LocalTensor<int8_t> in = inBuf_.Get<int8_t>();
        const AscendC::LocalTensor<half> h = halfBuf_.Get<half>();
        const AscendC::LocalTensor<float> acc = accBuf_.Get<float>();
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopyPad(in, in_[r0 * dd], AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd, 0, 0, 0),
                             AscendC::DataCopyPadExtParams<int8_t>(false, 0, 0, 0));
        if (d.antiPerChannel != 0) LoadChannelParams(which, r0, rows);
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Cast(h, in, AscendC::RoundMode::CAST_NONE, static_cast<uint32_t>(count));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Cast(acc, h, AscendC::RoundMode::CAST_NONE, static_cast<uint32_t>(count));
        AscendC::PipeBarrier<PIPE_V>();
        if (d.antiPerChannel != 0) {
            if (hasOffset_) {
                AscendC::Add(acc, acc, offsetBuf_.Get<float>(), count);
                AscendC::PipeBarrier<PIPE_V>();
            }
            AscendC::Mul(acc, acc, scaleBuf_.Get<float>(), count);
        } else {
            PipeSync<AscendC::HardEvent::V_S>();
            const float s = ToFloat(scale_.GetValue(which));
            const float o = hasOffset_ ? ToFloat(offset_.GetValue(which)) : 0.0f;
            PipeSync<AscendC::HardEvent::S_V>();
            AscendC::Adds(acc, acc, o, count);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Muls(acc, acc, s, count);
        }
        AscendC::PipeBarrier<PIPE_V>();
        const AscendC::LocalTensor<T> o = halfBuf_.Get<T>();
        AscendC::Cast(o, acc, AscendC::RoundMode::CAST_RINT, static_cast<uint32_t>(count));
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyPad(out_[r0 * dd], o,
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T), 0, 0, 0));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // scale/offset rows (fp32, pitch dp_) of the KV heads of rows [r0, r0 + rows). A row slot
    // keeps what it holds while its (key/value, head) stays the same: a head-major cache has
    // runs of S rows of one head, and a token-major one repeats the same head pattern in every
    // pass when numKvHeads divides the rows per pass, so the parameters are loaded a few times per core,
    // not once per row.
    __aicore__ inline void LoadChannelParams(uint32_t which, uint64_t r0, uint32_t rows)
    {
        const DecodeParams &d = DecodeOf(p_);
        const uint32_t dd = p_->headDim;
        const uint64_t base = static_cast<uint64_t>(which) * p_->numKvHeads * dd;
        const AscendC::LocalTensor<T> param = paramBuf_.Get<T>();
        for (uint32_t r = 0; r < rows; ++r) {
            const uint64_t head = ((r0 + r) / d.antiHeadRun) % p_->numKvHeads;
            const uint64_t key = which * p_->numKvHeads + head;
            if (paramKey_[r] == key) {
                continue;
            }
            paramKey_[r] = key;
            LoadParamRow(scale_, base + head * dd, param, scaleBuf_.Get<float>()[r * dp_]);
            if (hasOffset_) LoadParamRow(offset_, base + head * dd, param, offsetBuf_.Get<float>()[r * dp_]);
        }
    }

    __aicore__ inline void LoadParamRow(const AscendC::GlobalTensor<T> &src, uint64_t at,
                                        const AscendC::LocalTensor<T> &stage, const AscendC::LocalTensor<float> &dst)
    {
        const uint32_t dd = p_->headDim;
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopyPad(stage, src[at], AscendC::DataCopyExtParams(1, dd * sizeof(T), 0, 0, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Cast(dst, stage, AscendC::RoundMode::CAST_NONE, dp_);
        AscendC::PipeBarrier<PIPE_V>();
    }

    __aicore__ inline static float ToFloat(T x) { return static_cast<float>(x); }

    static constexpr uint64_t NO_PARAMS = ~0ULL;
    const ForwardParams *p_ = nullptr;
    uint32_t dp_ = 0;
    uint32_t rows_ = 1;  // rows per pass
    uint64_t paramKey_[ROWS];  // per row slot of scaleBuf_/offsetBuf_: which * numKvHeads + head
    bool hasOffset_ = false;
    AscendC::GlobalTensor<int8_t> in_;
    AscendC::GlobalTensor<T> out_, scale_, offset_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf_, halfBuf_, accBuf_, scaleBuf_, offsetBuf_, paramBuf_;
};

}  // namespace AttentionCore
