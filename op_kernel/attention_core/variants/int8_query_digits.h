// The query side of the int8 x int8 decode core (int8 K/V kept in int8 up to the cube;
// int8_digits.h, int8_digit_layout.h): before the core, each core's vector cores turn the query
// rows of its units into digit rows for the cube.
//   S = Q . ((K + o_k) s_k)^T * scale = (Q s_k scale) . K^T + (a term per query row)
// (the key offset adds the same value to every score of a row and cancels in the softmax,
// kv_antiquant.h), so per (batch, KV head, head block) item the G rows Q s_k scale (fp32) get
// one fixed-point unit per row and become the item's digit tile: G hi rows from row 0, G lo
// rows from rowsPad / 2, rowsPad rows in the cube's int8 Nz order, followed by the G row units (fp32) that turn the
// cube's int32 products back into scores. The items of core c's units are written into its own
// region (DecodeParams::digits) from its first item on; its two vector cores take alternate
// items. The decode core leaves the score scale to its score policy (Run's withScore: the rows
// are then Q s_k).
#pragma once
#include "kernel_operator.h"
#include "decode_params.h"
#include "int8_digits.h"
#include "../common/sync.h"

namespace AttentionCore {

template <typename T> class QueryDigits {
public:
    // query: the query tensor; scale: antiquant_scale (key rows first; per tensor: its first
    // element); region: core `core`'s query digit region; vector core `sub` of `subs` takes
    // every subs-th item. withScore: the rows include the score scale (else Q s_k, where the
    // core's score policy scales S, as the decode core's does).
    __aicore__ inline void Run(const DecodeTiling &td, GM_ADDR query, GM_ADDR scale, GM_ADDR region, uint32_t core,
                               uint32_t sub, uint32_t subs, bool withScore = true)
    {
        const ForwardParams &p = td.params;
        const Int8DigitParams &g = td.decode.digits;
        const uint64_t u0 = p.coreUnitStart[core];
        const uint64_t u1 = p.coreUnitStart[core + 1];
        if (u1 <= u0) {
            return;
        }
        p_ = &p;
        g_ = &g;
        pitch_ = (p.headDim + 63) / 64 * 64;
        rows_ = p.groupSize < p.blockQ ? p.groupSize : p.blockQ;
        const uint32_t n = rows_ * pitch_;
        AscendC::TPipe pipe;
        pipe.InitBuffer(ioBuf_, n * sizeof(T));
        pipe.InitBuffer(xBuf_, n * 4);
        pipe.InitBuffer(hiBuf_, n * 4);
        pipe.InitBuffer(workBuf_, (n + (rows_ + 7) / 8 * 64) * 4);
        pipe.InitBuffer(rowBuf_, 3 * 64 * 4 + pitch_ * 4);  // unit, inv, inv blocks; the key scale row
        pipe.InitBuffer(stageBuf_, pitch_ * sizeof(T));
        pipe.InitBuffer(hBuf_, 2 * n * sizeof(half));
        pipe.InitBuffer(dBuf_, 2 * n);
        pipe.InitBuffer(nzBuf_, 2 * n);
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        scale_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(scale));
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(region));
        units_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(region));
        scoreScale_ = withScore ? td.score.scaleValue : 1.0f;
        perChannel_ = td.decode.antiPerChannel != 0;
        // columns past the head dim are never loaded: zero once (they must not count in a unit)
        AscendC::Duplicate(ioBuf_.Get<uint16_t>(), static_cast<uint16_t>(0), static_cast<int32_t>(n * sizeof(T) / 2));
        AscendC::Duplicate(rowBuf_.Get<float>()[3 * 64], 0.0f, static_cast<int32_t>(pitch_));
        AscendC::PipeBarrier<PIPE_V>();
        const uint64_t first = u0 / td.decode.kvSplits;
        const uint64_t last = (u1 - 1) / td.decode.kvSplits;
        for (uint64_t item = first + sub; item <= last; item += subs) {
            Item(item, item - first);
        }
        PipeSync<AscendC::HardEvent::MTE3_V>();  // the last stores are done before the buffers go
    }

private:
    __aicore__ inline void Item(uint64_t item, uint64_t slot)
    {
        const ForwardParams &p = *p_;
        const uint32_t dd = p.headDim;
        const uint32_t hb = static_cast<uint32_t>(item % p.qBlocksPerHead);
        const uint64_t bk = item / p.qBlocksPerHead;
        const uint32_t b = static_cast<uint32_t>(bk / p.numKvHeads);
        const uint32_t kvHead = static_cast<uint32_t>(bk % p.numKvHeads);
        const uint32_t left = p.groupSize - hb * p.blockQ;
        const uint32_t rows = left < rows_ ? left : rows_;
        const uint32_t head0 = kvHead * p.groupSize + hb * p.blockQ;
        const uint32_t n = rows * pitch_;
        const AscendC::LocalTensor<T> io = ioBuf_.Get<T>();
        const AscendC::LocalTensor<float> x = xBuf_.Get<float>();
        const AscendC::LocalTensor<float> rowf = rowBuf_.Get<float>();
        const AscendC::LocalTensor<float> unit = rowf;
        const AscendC::LocalTensor<float> inv = rowf[64];
        const AscendC::LocalTensor<float> blocks = rowf[128];
        const AscendC::LocalTensor<float> keyScale = rowf[192];
        const AscendC::LocalTensor<int8_t> d = dBuf_.Get<int8_t>();
        const AscendC::LocalTensor<int8_t> nz = nzBuf_.Get<int8_t>();

        PipeSync<AscendC::HardEvent::V_MTE2>();  // the previous item's casts have read io
        const uint64_t at = b * p.qStrideB + static_cast<uint64_t>(head0) * p.qStrideN;
        AscendC::DataCopyPad(io, q_[at],
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T),
                                                        static_cast<uint32_t>((p.qStrideN - dd) * sizeof(T)),
                                                        (pitch_ - dd) * sizeof(T) / 32, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        if (perChannel_ && kvHead != keyHead_) {
            AscendC::DataCopyPad(stageBuf_.Get<T>(), scale_[static_cast<uint64_t>(kvHead) * dd],
                                 AscendC::DataCopyExtParams(1, dd * sizeof(T), 0, 0, 0),
                                 AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        }
        PipeSync<AscendC::HardEvent::MTE2_V>();
        PipeSync<AscendC::HardEvent::MTE3_V>();   // the previous item's stores have read d, nz and unit
        if (perChannel_ && kvHead != keyHead_) {  // s_k * scale per channel
            AscendC::Cast(keyScale, stageBuf_.Get<T>(), AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(dd));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Muls(keyScale, keyScale, scoreScale_, static_cast<int32_t>(dd));
            keyHead_ = kvHead;
        }
        AscendC::Cast(x, io, AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(n));
        AscendC::PipeBarrier<PIPE_V>();
        if (perChannel_) {  // every row times the key scale row (a repeat per row, the row re-read)
            const uint8_t stride = static_cast<uint8_t>(pitch_ / 8);
            for (uint32_t c0 = 0; c0 < pitch_; c0 += 64) {
                AscendC::Mul(x[c0], x[c0], keyScale[c0], 64, static_cast<uint8_t>(rows),
                             AscendC::BinaryRepeatParams(1, 1, 1, stride, stride, 0));
            }
        } else {
            if (!tensorRead_) {  // the per-tensor key scale, once
                PipeSync<AscendC::HardEvent::V_S>();
                tensorScale_ = static_cast<float>(scale_.GetValue(0)) * scoreScale_;
                PipeSync<AscendC::HardEvent::S_V>();
                tensorRead_ = true;
            }
            AscendC::Muls(x, x, tensorScale_, static_cast<int32_t>(n));
        }
        AscendC::PipeBarrier<PIPE_V>();
        Int8DigitUnits(unit, inv, x, workBuf_.Get<float>(), rows, pitch_, pitch_);
        BroadcastRows(blocks, inv, rows);
        Int8DigitSplit(d, x, blocks, hiBuf_.Get<float>(), hBuf_.Get<half>(), rows, pitch_);
        // hi rows to tile rows 0.., lo rows to rowsPad / 2..; the units behind the tile
        const uint64_t base = slot * g_->queryItemBytes;
        const uint32_t rowsPad = g_->rowsPad;
        const AscendC::GlobalTensor<half> tile = out_[base / 2];
        Int8DigitStorePairNz(tile, nz, d, 0, rows, p.headDimAlign, rowsPad, pitch_);
        AscendC::DataCopyPad(units_[(base + static_cast<uint64_t>(rowsPad) * p.headDimAlign) / 4], unit,
                             AscendC::DataCopyExtParams(1, rows * 4, 0, 0, 0));
    }

    const ForwardParams *p_ = nullptr;
    const Int8DigitParams *g_ = nullptr;
    uint32_t pitch_ = 64;  // the row pitch in UB: the head dim up to whole 64-float groups
    uint32_t rows_ = 1;
    uint32_t keyHead_ = 0xFFFFFFFFu;  // KV head whose key scale row (times the score scale) is in UB
    float scoreScale_ = 1.0f;
    float tensorScale_ = 1.0f;  // per tensor: s_k * scale
    bool tensorRead_ = false;
    bool perChannel_ = false;
    AscendC::GlobalTensor<T> q_, scale_;
    AscendC::GlobalTensor<half> out_;  // the region as 16-bit pairs of int8 digits
    AscendC::GlobalTensor<float> units_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> ioBuf_, xBuf_, hiBuf_, workBuf_, rowBuf_, stageBuf_, hBuf_, dBuf_,
        nzBuf_;
};

}  // namespace AttentionCore
