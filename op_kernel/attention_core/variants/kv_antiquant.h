// INT8 KV cache (antiquant) of the decode operator, dequantised inside the kernel.
//
// The spec's dequantisation x = (x_int8 + offset) * scale is per tensor or per channel (index
// kvHead * D + d), so it folds out of the cache reads:
//   S = Q . ((K + o_k) * s_k)^T = (Q * s_k) . K^T + (Q * s_k) . o_k
// where the last term is the same for every key of a query row and cancels in the softmax, and
//   O = softmax . ((V + o_v) * s_v) = (softmax . V + o_v) * s_v
// because each softmax row sums to one. The cache itself is therefore only cast to the query
// dtype (exact: |x| <= 128 fits fp16 and bf16):
//   * QueryAntiquant: before the core, the vector cores write Q * s_k (fp32, rounded to the query
//     dtype) into the workspace (B x N rows, a few KiB; not a pass over the cache);
//   * KvSource<KvDecodeInt8<T>>: while the core runs, the vector cores cast each key block's K
//     and V rows (int8 from the cache, contiguous or paged) into the decode K/V ring the cube
//     reads (kv_ring.h). The int8 bytes are read once from HBM; the ring stays in L2. A2 has no
//     UB -> L1 path, so the cast rows make this one L2 round trip (2 bytes written + 2 read per
//     element).
//   * FinishRows (KvSourceBase hook): each unit's unnormalised output rows become
//     acc * s_v + (o_v * s_v) * l before the vector stage normalises them by l: the output is
//     (O + o_v) * s_v. Split-KV partials skip it; the combine pass (split_kv_combine.h) applies
//     it to the merged rows instead (its weights sum to one), so that the cube can write a
//     unit's P.V sum straight into its partial rows.
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "kv_ring.h"
#include "../common/sync.h"

namespace AttentionCore {

template <typename T> struct KvDecodeInt8 {};

// One antiquant parameter row (kvHead's D values of key (which 0) or value (which 1), or the
// per-tensor value broadcast) as fp32 into `dst`; `stage` holds D elements of T.
template <typename T>
__aicore__ inline void LoadAntiRow(const DecodeTiling &td, GM_ADDR src, uint32_t which, uint32_t kvHead,
                                   const AscendC::LocalTensor<T> &stage, const AscendC::LocalTensor<float> &dst)
{
    const uint32_t dd = td.params.headDim;
    AscendC::GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(src));
    PipeSync<AscendC::HardEvent::V_MTE2>();  // the previous row's users are done
    if (td.decode.antiPerChannel != 0) {
        const uint64_t at = (static_cast<uint64_t>(which) * td.params.numKvHeads + kvHead) * dd;
        AscendC::DataCopyPad(stage, g[at], AscendC::DataCopyExtParams(1, dd * sizeof(T), 0, 0, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Cast(dst, stage, AscendC::RoundMode::CAST_NONE, dd);
    } else {
        PipeSync<AscendC::HardEvent::V_S>();
        const float v = static_cast<float>(g.GetValue(which));
        PipeSync<AscendC::HardEvent::S_V>();
        AscendC::Duplicate(dst, v, static_cast<int32_t>(dd));
    }
    AscendC::PipeBarrier<PIPE_V>();
}

// The first batch of core `core`'s units: its Q * s_k region starts there (DecodeParams).
__aicore__ inline uint32_t QueryBatch0(const ForwardParams &p, const DecodeParams &d, uint32_t core)
{
    const uint64_t unitsPerBatch = static_cast<uint64_t>(d.kvSplits) * p.qBlocksPerHead * p.numKvHeads;
    return static_cast<uint32_t>(p.coreUnitStart[core] / unitsPerBatch);
}

// Q * s_k for the (batch, head) rows of one core's units, written into the core's own region
// `scaled` at the query's element offsets (S = 1) from its first batch on; its two vector cores
// take half the rows each, before the core starts. The cube reads only its own core's rows: a
// cross-core flag (FLAG_Q_SCALED) tells it they are written, with no barrier over all cores.
// A unit (b, kvHead, head block, split) reads query heads kvHead * G + q0 .. + rows of batch b,
// so the core's units cover the contiguous rows of the (batch, head) order from its first
// unit's to its last's.
template <typename T> class QueryAntiquant {
public:
    __aicore__ inline void Run(const DecodeTiling &td, GM_ADDR query, GM_ADDR scale, GM_ADDR scaled, uint32_t core)
    {
        td_ = &td;
        const ForwardParams *p = &td.params;
        p_ = p;
        const uint32_t dd = p->headDim;
        dp_ = AlignUp(dd, 16);
        chunk_ = 8192 / dp_;
        chunk_ = chunk_ == 0 ? 1 : chunk_;
        AscendC::TPipe pipe;
        pipe.InitBuffer(xBuf_, chunk_ * dp_ * 4);
        pipe.InitBuffer(ioBuf_, chunk_ * dp_ * sizeof(T));
        // per channel: the key scale rows of every KV head a chunk of rows meets (chunk_ / G + 2)
        const uint32_t tableRows = td.decode.antiPerChannel != 0 ? chunk_ / p->groupSize + 2 : 1;
        pipe.InitBuffer(scaleBuf_, tableRows * dp_ * 4);
        pipe.InitBuffer(stageBuf_, tableRows * dp_ * sizeof(T));
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(scaled));
        scaleAddr_ = scale;

        const uint64_t u0 = p->coreUnitStart[core];
        const uint64_t u1 = p->coreUnitStart[core + 1];
        if (u1 <= u0) {
            return;
        }
        batch0_ = QueryBatch0(*p, td.decode, core);
        const uint64_t first = FirstRow(u0 / td.decode.kvSplits);
        const uint64_t last = (u1 - 1) / td.decode.kvSplits;
        const uint32_t hb = static_cast<uint32_t>(last % p->qBlocksPerHead);
        const uint32_t left = p->groupSize - hb * p->blockQ;
        const uint64_t rows = FirstRow(last) + (left < p->blockQ ? left : p->blockQ) - first;
        const uint32_t sub = AscendC::GetSubBlockIdx();
        const uint64_t begin = first + rows * sub / 2;
        const uint64_t end = first + rows * (sub + 1) / 2;
        for (uint64_t r0 = begin; r0 < end;) {
            // rows of one batch at a time (their pitch is qStrideN)
            const uint64_t batchEnd = (r0 / p->numHeads + 1) * p->numHeads;
            uint64_t r1 = r0 + chunk_;
            r1 = r1 < end ? r1 : end;
            r1 = r1 < batchEnd ? r1 : batchEnd;
            ScaleRows(r0, static_cast<uint32_t>(r1 - r0));
            r0 = r1;
        }
    }

private:
    // The (batch, head) row of the first query head of `unit / kvSplits` = (b, kvHead, head block).
    __aicore__ inline uint64_t FirstRow(uint64_t rest) const
    {
        const uint32_t hb = static_cast<uint32_t>(rest % p_->qBlocksPerHead);
        const uint64_t bk = rest / p_->qBlocksPerHead;  // b * numKvHeads + kvHead
        return bk * p_->groupSize + hb * p_->blockQ;
    }

    __aicore__ inline void ScaleRows(uint64_t r0, uint32_t rows)
    {
        const uint32_t dd = p_->headDim;
        const uint32_t b = static_cast<uint32_t>(r0 / p_->numHeads);
        const uint32_t head0 = static_cast<uint32_t>(r0 % p_->numHeads);
        const uint64_t at = b * p_->qStrideB + head0 * p_->qStrideN;
        const AscendC::LocalTensor<T> io = ioBuf_.Get<T>();
        const AscendC::LocalTensor<float> x = xBuf_.Get<float>();
        const AscendC::LocalTensor<float> scale = scaleBuf_.Get<float>();
        const uint32_t padBlocks = 0;  // UB rows: D elements padded to 32 bytes = dp_
        PipeSync<AscendC::HardEvent::V_MTE2>();
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();
        AscendC::DataCopyPad(io, q_[at],
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T),
                                                        static_cast<uint32_t>((p_->qStrideN - dd) * sizeof(T)),
                                                        padBlocks, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        // Per channel: the key scale rows of the KV heads kv0.. of these rows, in one copy right
        // behind the query rows' (one wait for both).
        const bool table = td_->decode.antiPerChannel != 0;
        const uint32_t kv0 = head0 / p_->groupSize;
        if (table) {
            const uint32_t heads = (head0 + rows - 1) / p_->groupSize - kv0 + 1;
            AscendC::GlobalTensor<T> g;
            g.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(scaleAddr_));
            AscendC::DataCopyPad(stageBuf_.Get<T>(), g[static_cast<uint64_t>(kv0) * dd],
                                 AscendC::DataCopyExtParams(static_cast<uint16_t>(heads), dd * sizeof(T), 0, 0, 0),
                                 AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
            PipeSync<AscendC::HardEvent::MTE2_V>();
            AscendC::Cast(scale, stageBuf_.Get<T>(), AscendC::RoundMode::CAST_NONE, heads * dp_);
        } else {
            PipeSync<AscendC::HardEvent::MTE2_V>();
        }
        AscendC::Cast(x, io, AscendC::RoundMode::CAST_NONE, rows * dp_);
        AscendC::PipeBarrier<PIPE_V>();
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t kvHead = (head0 + r) / p_->groupSize;
            if (table) {
                AscendC::Mul(x[r * dp_], x[r * dp_], scale[(kvHead - kv0) * dp_], static_cast<int32_t>(dd));
                continue;
            }
            if (kvHead != cachedHead_) {
                LoadAntiRow<T>(*td_, scaleAddr_, 0, kvHead, stageBuf_.Get<T>(), scale);
                cachedHead_ = kvHead;
            }
            AscendC::Mul(x[r * dp_], x[r * dp_], scale, static_cast<int32_t>(dd));
        }
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Cast(io, x, AscendC::RoundMode::CAST_RINT, rows * dp_);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyPad(out_[at - static_cast<uint64_t>(batch0_) * p_->qStrideB], io,
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T), padBlocks,
                                                        static_cast<uint32_t>((p_->qStrideN - dd) * sizeof(T)), 0));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    static constexpr uint32_t NO_HEAD = 0xFFFFFFFFu;
    const DecodeTiling *td_ = nullptr;
    const ForwardParams *p_ = nullptr;
    uint32_t dp_ = 16;
    uint32_t chunk_ = 1;
    uint32_t cachedHead_ = NO_HEAD;
    uint32_t batch0_ = 0;  // the core's first batch: row 0 of its region
    GM_ADDR scaleAddr_ = nullptr;
    AscendC::GlobalTensor<T> q_, out_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf_, ioBuf_, scaleBuf_, stageBuf_;
};

// ------------------------------------------------------------------ KV source
// The ring source casting int8 rows (kv_ring.h), plus the value antiquant of each unit's rows.
// Its GM tensors: the ring's, with the antiquant scale (query dtype) and offset (null without
// antiquant_offset).
struct Int8KvTensors : RingKvTensors {
    GM_ADDR antiScale = nullptr;
    GM_ADDR antiOffset = nullptr;
};

// The value antiquant of a unit's output rows (FinishRows below) with its UB rows: a piece of
// every int8 K/V source (this cast ring's, and the int8 x int8 core's, int8_digit_core.h), on
// the operator's own tiling.
template <typename T> class ValueAntiquant {
public:
    // `bytes`: KvRingUb::value of the plan (kv_ring_layout.h).
    __aicore__ inline void Init(const DecodeTiling &td, AscendC::TPipe *pipe, GM_ADDR antiScale, GM_ADDR antiOffset,
                                uint32_t bytes)
    {
        td_ = &td;
        antiScale_ = antiScale;
        antiOffset_ = antiOffset;
        pipe->InitBuffer(valueBuf_, bytes);
        tableHeads_ = td.decode.antiTableHeads;
    }

    // Every KV head's value scale and offset rows, where the plan keeps them in UB (issued
    // behind the source's first reads: they are used at the first unit's finish).
    __aicore__ inline void LoadTables()
    {
        if (tableHeads_ != 0) {
            LoadTable(antiScale_, 0);
            if (antiOffset_ != nullptr) {
                LoadTable(antiOffset_, tableHeads_);
            }
            PipeSync<AscendC::HardEvent::MTE2_V>();
        }
    }

    // The value antiquant on a unit's rows before they are normalised (or stored as partials,
    // which the combine averages with weights summing to one): acc = acc * s_v + (o_v * s_v) * l,
    // so acc / l = (softmax . V + o_v) * s_v. Rows without a visible key (acc = 0, l = 0) stay 0.
    __aicore__ inline void FinishRows(const WorkUnit &u, uint32_t rows, const AscendC::LocalTensor<float> &acc,
                                      const AscendC::LocalTensor<float> &sum)
    {
        const uint32_t dp = td_->params.headDimAlign;
        const int32_t dd = static_cast<int32_t>(td_->params.headDim);
        const AscendC::LocalTensor<float> scale = valueBuf_.Get<float>();
        const AscendC::LocalTensor<float> shift = scale[dp];  // o_v * s_v
        const AscendC::LocalTensor<float> tmp = scale[2 * dp];
        const AscendC::LocalTensor<T> stage = valueBuf_.Get<T>()[3 * dp * 2];
        const bool hasOffset = antiOffset_ != nullptr;
        const uint32_t kvHead = u.n / td_->decode.kvSplits;
        AscendC::PipeBarrier<PIPE_V>();
        if (kvHead != valueHead_ && tableHeads_ != 0) {  // the rows are in UB: casts only
            AscendC::Cast(scale, Table(kvHead), AscendC::RoundMode::CAST_NONE, dd);
            if (hasOffset) {
                AscendC::Cast(shift, Table(tableHeads_ + kvHead), AscendC::RoundMode::CAST_NONE, dd);
                AscendC::PipeBarrier<PIPE_V>();
                AscendC::Mul(shift, shift, scale, dd);
            }
            AscendC::PipeBarrier<PIPE_V>();
            valueHead_ = kvHead;
        }
        if (kvHead != valueHead_) {
            LoadAntiRow<T>(*td_, antiScale_, 1, kvHead, stage, scale);
            if (hasOffset) {
                LoadAntiRow<T>(*td_, antiOffset_, 1, kvHead, stage, shift);
                AscendC::Mul(shift, shift, scale, dd);
                AscendC::PipeBarrier<PIPE_V>();
            }
            valueHead_ = kvHead;
        }
        for (uint32_t r = 0; r < rows; ++r) {
            AscendC::Mul(acc[r * dp], acc[r * dp], scale, dd);
        }
        AscendC::PipeBarrier<PIPE_V>();
        if (!hasOffset) {
            return;
        }
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            const float l = sum.GetValue(r);
            PipeSync<AscendC::HardEvent::S_V>();
            AscendC::Muls(tmp, shift, l, dd);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Add(acc[r * dp], acc[r * dp], tmp, dd);
            AscendC::PipeBarrier<PIPE_V>();
        }
    }

private:
    // Row `row` of the table (after the fp32 rows and the stage row, kv_ring_layout.h): rows
    // [0, heads) the value scales, [heads, 2 heads) the offsets, headDimAlign apart.
    __aicore__ inline AscendC::LocalTensor<T> Table(uint32_t row)
    {
        const uint32_t dp = td_->params.headDimAlign;
        return valueBuf_.Get<T>()[3 * dp * (4 / sizeof(T)) + (1 + row) * dp];
    }

    // The value rows ([2, N_kv, D]: key rows, then value rows) of `src` -> table rows from `row0`.
    __aicore__ inline void LoadTable(GM_ADDR src, uint32_t row0)
    {
        const uint32_t dd = td_->params.headDim;
        const uint32_t dp = td_->params.headDimAlign;
        AscendC::GlobalTensor<T> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(src));
        const uint32_t padElems = AlignUp(dd * sizeof(T), 32) / sizeof(T) - dd;
        AscendC::DataCopyPad(
            Table(row0), g[static_cast<uint64_t>(tableHeads_) * dd],
            AscendC::DataCopyExtParams(static_cast<uint16_t>(tableHeads_), dd * sizeof(T), 0,
                                       (dp * sizeof(T) - AlignUp(dd * sizeof(T), 32)) / 32, 0),
            AscendC::DataCopyPadExtParams<T>(padElems != 0, 0, static_cast<uint8_t>(padElems), static_cast<T>(0)));
    }

    const DecodeTiling *td_ = nullptr;
    uint32_t tableHeads_ = 0;  // KV heads whose value rows are in the table (0: loaded per unit)
    GM_ADDR antiScale_ = nullptr;
    GM_ADDR antiOffset_ = nullptr;  // null without antiquant_offset
    AscendC::TBuf<AscendC::TPosition::VECCALC> valueBuf_;
    uint32_t valueHead_ = 0xFFFFFFFFu;  // KV head whose value scale / shift rows are in valueBuf_
};

template <typename T> struct KvSource<KvDecodeInt8<T>> : public KvRingSource<T, int8_t> {
    using Ring = KvRingSource<T, int8_t>;
    using Tensors = Int8KvTensors;

    template <class GmTensors>
    __aicore__ inline void StreamInit(const DecodeTiling &td, AscendC::TPipe *pipe, const GmTensors &t)
    {
        const KvRingUb ub = KvRingUbLayout(td.decode.ringChunkElems, td.params.headDim, td.params.headDimAlign,
                                           sizeof(T), 1, Int8CastStages<T>::value, true, td.decode.ringInCopies,
                                           td.decode.ringOutCopies, td.decode.antiTableHeads);
        value_.Init(td, pipe, t.kv.antiScale, t.kv.antiOffset, ub.value);
        Ring::StreamInit(td, pipe, t);
        // the value rows behind the ring's first reads (the cube waits for the first ring block)
        value_.LoadTables();
    }

    // The cube's query rows: Q * s_k in this core's region (QueryAntiquant), from its first
    // batch on.
    __aicore__ inline uint64_t QOffset(uint32_t b, uint32_t n, uint32_t row) const
    {
        return Ring::QOffset(b - QueryBatch0(*this->p_, *this->d_, AscendC::GetBlockIdx()), n, row);
    }

    __aicore__ inline void FinishRows(const WorkUnit &u, uint32_t rows, const AscendC::LocalTensor<float> &acc,
                                      const AscendC::LocalTensor<float> &sum)
    {
        value_.FinishRows(u, rows, acc, sum);
    }

private:
    ValueAntiquant<T> value_;
};

}  // namespace AttentionCore
