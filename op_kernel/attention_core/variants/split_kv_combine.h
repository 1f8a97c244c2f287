// Split-KV decode (and the INT8 output): when (batch, KV head) units are too few to fill the cores, the host cuts each
// KV window into kvSplits chunks computed by different cores. Each chunk's vector core stores
// its unnormalised output rows O_s with the running max m_s and sum l_s (the split's
// StorePartialOutput, called by the forward vector stage); after a barrier the combine pass merges them per row:
//   M = max_s m_s,  w_s = exp(m_s - M),  out = sum_s w_s O_s / sum_s w_s l_s
// (0 for a row whose M shows no visible key). With INT8 K/V the pass also applies the value
// antiquant the units left out (kv_antiquant.h): out * s_v + o_v * s_v on visible rows. The
// partials' workspace and the pass's UB:
// split_kv_combine_layout.h. PFA's split-KV tail (ForwardParams::tailSplits) stores and
// merges its pieces' rows the same way (KvSplitCombiner::RunTail), with the output rows
// placed in PFA's layout.
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "split_kv_combine_layout.h"
#include "kv_antiquant.h"
#include "../common/sync.h"
#include "../common/row_ops.h"

namespace AttentionCore {

// Units store partials (and the combine pass writes the output) with KV splits or INT8 output.
__aicore__ inline bool StoresPartials(const DecodeParams &d) { return d.kvSplits > 1 || d.quantOut != 0; }

// PFA's split-KV tail: the rows of every split unit (TailUnitRows apart), per piece.
__aicore__ inline uint64_t TailCombineRows(const ForwardParams &p)
{
    return uint64_t(p.tailPieces / p.tailSplits) * TailUnitRows(p);
}

struct PartialLayout {
    __aicore__ inline PartialLayout(const ForwardParams *p, const DecodeParams &d, GM_ADDR workspace)
        : PartialLayout(workspace + d.wsPartialOffset, d.kvSplits, d.combineRows, p->headDimAlign)
    {
    }
    __aicore__ inline PartialLayout(GM_ADDR base, uint32_t splits, uint64_t rowsPerSplit, uint32_t headDimAlign)
    {
        const PartialRows at = PartialRowsLayout(splits, rowsPerSplit, headDimAlign);
        o.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(base + at.o));
        m.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(base + at.m));
        l.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(base + at.l));
        mToL = at.l - at.m;
    }
    AscendC::GlobalTensor<float> o, m, l;
    uint64_t mToL;  // bytes from m[i] to l[i]
};

__aicore__ inline void CopyFloats(const AscendC::GlobalTensor<float> &dst, const AscendC::LocalTensor<float> &src,
                                  uint32_t count)
{
    AscendC::DataCopyPad(dst, src, AscendC::DataCopyExtParams(1, count * 4, 0, 0, 0));
}

__aicore__ inline void CopyFloats(const AscendC::LocalTensor<float> &dst, const AscendC::GlobalTensor<float> &src,
                                  uint32_t count)
{
    AscendC::DataCopyPad(dst, src, AscendC::DataCopyExtParams(1, count * 4, 0, 0, 0),
                         AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
}

// Partial row i of `ws` (and the rows after it) := acc (unless `withRows` is false: the cube
// wrote them), m and l of `rows` rows (pitch headDimAlign).
__aicore__ inline void StorePartialRows(const PartialLayout &ws, uint64_t i, uint32_t rows, uint32_t headDimAlign,
                                        const AscendC::LocalTensor<float> &acc, const AscendC::LocalTensor<float> &m,
                                        const AscendC::LocalTensor<float> &l, bool withRows = true)
{
    PipeSync<AscendC::HardEvent::V_MTE3>();
    if (withRows) {
        AscendC::DataCopy(ws.o[i * headDimAlign], acc, rows * headDimAlign);
    }
    // m and l with one copy where l lies a whole number of 32-byte blocks after m's rows in UB
    // (the vector stage's statistics rows): one DMA start less on the way to the combine.
    const uint32_t len = rows * 4;
    const uint64_t lenBlocks = (len + 31) / 32 * 32;
    const uint64_t mAt = static_cast<uint64_t>(m.GetPhyAddr());
    const uint64_t lAt = static_cast<uint64_t>(l.GetPhyAddr());
    if (lAt >= mAt + lenBlocks && (lAt - mAt) % 32 == 0) {
        AscendC::DataCopyPad(ws.m[i], m,
                             AscendC::DataCopyExtParams(2, len, static_cast<uint32_t>((lAt - mAt - lenBlocks) / 32),
                                                        static_cast<uint32_t>(ws.mToL - len), 0));
    } else {
        CopyFloats(ws.m[i], m, rows);
        CopyFloats(ws.l[i], l, rows);
    }
    PipeSync<AscendC::HardEvent::MTE3_V>();
}

// The partial row of unit u's first row: i = (split * B + b) * N + head.
__aicore__ inline uint64_t PartialRowIndex(const ForwardParams &p, const DecodeParams &d, const WorkUnit &u)
{
    const uint32_t s = u.n % d.kvSplits;
    const uint64_t head = static_cast<uint64_t>(u.n / d.kvSplits) * p.groupSize + u.q0;
    return (static_cast<uint64_t>(s) * p.batch + u.b) * p.numHeads + head;
}

// Rows [rowOff, rowOff + rows) of unit u (WorkSplitBase::StorePartialOutput).
__aicore__ inline bool WorkSplit<SplitKvCombine>::StorePartialOutput(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                                                     const AscendC::LocalTensor<float> &acc,
                                                                     const AscendC::LocalTensor<float> &m,
                                                                     const AscendC::LocalTensor<float> &l) const
{
    const ForwardParams *p = p_;
    const DecodeParams &d = *d_;
    if (!StoresPartials(d)) {
        return false;
    }
    StorePartialRows(PartialLayout(p, d, workspace_), PartialRowIndex(*p, d, u) + rowOff, rows, p->headDimAlign, acc, m,
                     l);
    return true;
}

__aicore__ inline bool WorkSplit<SplitKvCombine>::PartialRows(const WorkUnit &u,
                                                              AscendC::GlobalTensor<float> &rows) const
{
    const DecodeParams &d = *d_;
    if (!StoresPartials(d)) {
        return false;
    }
    rows = PartialLayout(p_, d, workspace_).o[PartialRowIndex(*p_, d, u) * p_->headDimAlign];
    return true;
}

__aicore__ inline void WorkSplit<SplitKvCombine>::StorePartialStats(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                                                    const AscendC::LocalTensor<float> &m,
                                                                    const AscendC::LocalTensor<float> &l) const
{
    const ForwardParams *p = p_;
    StorePartialRows(PartialLayout(p, *d_, workspace_), PartialRowIndex(*p, *d_, u) + rowOff, rows, p->headDimAlign, m,
                     m, l, false);
}

// PFA's split-KV tail: a piece's rows (piece c = u.piece - 1: split c % tailSplits of split
// unit c / tailSplits) at row (split unit) * TailUnitRows + row of its split's partials.
__aicore__ inline bool WorkSplit<SplitQBlocks>::StorePartialOutput(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                                                   const AscendC::LocalTensor<float> &acc,
                                                                   const AscendC::LocalTensor<float> &m,
                                                                   const AscendC::LocalTensor<float> &l) const
{
    if (u.piece == 0) {
        return false;
    }
    const ForwardParams &p = *p_;
    const uint64_t rowsAll = TailCombineRows(p);
    const uint32_t c = u.piece - 1;
    const uint64_t i = (c % p.tailSplits) * rowsAll + uint64_t(c / p.tailSplits) * TailUnitRows(p) + rowOff;
    StorePartialRows(PartialLayout(workspace_ + p.wsPartialOffset, p.tailSplits, rowsAll, p.headDimAlign), i, rows,
                     p.headDimAlign, acc, m, l);
    return true;
}

// The combine pass, run by every vector core after the forward core has finished; T is the
// query dtype (the output's unless quantOut: INT8).
template <typename T> class KvSplitCombiner {
public:
    static constexpr uint32_t ROWS = COMBINE_ROWS;

    template <class GmTensors> __aicore__ inline void Run(const DecodeTiling &td, const GmTensors &t)
    {
        const ForwardParams *p = &td.params;
        const DecodeParams &d = td.decode;
        p_ = p;
        d_ = &d;
        td_ = &td;
        const uint32_t v = AscendC::GetBlockIdx();
        const uint64_t begin = d.combineRowStart[v];
        const uint64_t end = d.combineRowStart[v + 1];
        AscendC::TPipe pipe;
        if (begin < end) {
            InitPass(pipe, t.out, d.kvSplits, d.combineRows, d.quantOut != 0);
            if (quant_) {
                qScale_ = t.split.quantScale;
                qOffset_ = t.split.quantOffset;
            }
            if (d.antiquant != 0) {  // the first rows' value antiquant rows load during the barrier
                pipe.InitBuffer(antiBuf_, CombineUbLayout(d.kvSplits, p->headDimAlign, sizeof(T), quant_, true).anti);
                antiScale_ = t.kv.antiScale;
                antiOffset_ = t.kv.antiOffset;
                LoadValueRows(KvHeadOf(begin));
            }
        }
        AscendC::PipeBarrier<PIPE_ALL>();
        // every partial is in the workspace: the cubes join (their last rows written straight
        // into the partials raise no flag, policies.h PartialRows)
        AscendC::SyncAll<false>();
        if (begin >= end) {
            return;
        }
        const PartialLayout ws(p, d, t.workspace);
        for (uint64_t r0 = begin; r0 < end; r0 += rowsAtOnce_) {
            const uint32_t rows = end - r0 < rowsAtOnce_ ? static_cast<uint32_t>(end - r0) : rowsAtOnce_;
            // S = 1: output row i = b * N + n sits at i * D in every layout.
            MergeRows(ws, r0, rows, r0 * p->headDim, p->headDim);
        }
    }

    // PFA's split-KV tail (ForwardParams::tailSplits > 1): the rows of the split units, cut
    // evenly over the vector cores, merged into the output (split: the launch's
    // WorkSplit<SplitQBlocks>, which places a split unit's rows).
    template <class Split, class GmTensors>
    __aicore__ inline void RunTail(const ForwardParams &p, const Split &split, const GmTensors &t)
    {
        p_ = &p;
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::SyncAll();  // every piece's partial rows are in the workspace
        const uint64_t all = TailCombineRows(p);
        const uint64_t vecs = 2ull * p.usedCores;
        const uint32_t v = AscendC::GetBlockIdx();
        if (v >= vecs) {  // a core past the plan (a launch wider than usedCores)
            return;
        }
        const uint64_t begin = all * v / vecs;
        const uint64_t end = all * (v + 1) / vecs;
        if (begin >= end) {
            return;
        }
        AscendC::TPipe pipe;
        InitPass(pipe, t.out, p.tailSplits, all, false);
        const PartialLayout ws(t.workspace + p.wsPartialOffset, p.tailSplits, all, p.headDimAlign);
        const uint32_t pitch = TailUnitRows(p);
        for (uint64_t r0 = begin; r0 < end;) {
            // split unit k's rows [r, unit rows): decoded from its piece 0
            const uint64_t k = r0 / pitch;
            const uint32_t r = static_cast<uint32_t>(r0 % pitch);
            WorkUnit u;
            split.Decode(TailPieceItem(p, k * p.tailSplits), u);
            const uint64_t unitEnd = k * pitch + u.rows;
            const uint64_t stop = end < unitEnd ? end : unitEnd;
            if (r0 >= stop) {  // the padding rows past a short unit
                r0 = (k + 1) * pitch;
                continue;
            }
            const uint32_t rows = stop - r0 < rowsAtOnce_ ? static_cast<uint32_t>(stop - r0) : rowsAtOnce_;
            const uint64_t at = u.b * p.oStrideB + u.n * p.oStrideN + (u.q0 + r) * p.oStrideS;
            MergeRows(ws, r0, rows, at, static_cast<uint32_t>(p.oStrideS));
            r0 += rows;
        }
    }

private:
    // The pass's UB (CombineUbLayout, in its order) and row bookkeeping for `splits` splits of
    // `stride` partial rows each: the same for Run and RunTail (p_ set).
    __aicore__ inline void InitPass(AscendC::TPipe &pipe, GM_ADDR out, uint32_t splits, uint64_t stride, bool quant)
    {
        const CombineUb ub = CombineUbLayout(splits, p_->headDimAlign, sizeof(T), quant);
        pipe.InitBuffer(accBuf_, ub.acc);
        pipe.InitBuffer(partBuf_, ub.part);
        pipe.InitBuffer(outBuf_, ub.out);
        if (quant) {
            pipe.InitBuffer(qScaleBuf_, ub.qScale);
            pipe.InitBuffer(qOffsetBuf_, ub.qOffset);
            pipe.InitBuffer(int8Buf_, ub.int8);
            outInt8_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(out));
            pipe.InitBuffer(qStageBuf_, ub.qStage);
        }
        pipe.InitBuffer(statBuf_, ub.stat);
        // lanes past a group's rows are broadcast too: defined once
        AscendC::Duplicate(statBuf_.Get<float>(), 0.0f, static_cast<int32_t>(ub.stat / 4));
        pipe.InitBuffer(bcastBuf_, ub.bcast);
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(out));
        rowsAtOnce_ = ub.rows;
        splitsPerCopy_ = ub.splitsPerCopy;
        splits_ = splits;
        stride_ = stride;
        quant_ = quant;
    }

    // Every split's statistics sit ROWS floats apart: one instruction covers all splits (a
    // repeat per split, `rows` lanes), and a sum or max over the splits folds halves onto each
    // other, so the pass costs a few instructions per row group rather than a few per split.
    // Output rows [r0, r0 + rows) of the partials to out_ from element `at`, `pitch` apart.
    __aicore__ inline void MergeRows(const PartialLayout &ws, uint64_t r0, uint32_t rows, uint64_t at, uint32_t pitch)
    {
        const uint32_t splits = splits_;
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<float> stats = statBuf_.Get<float>();
        const AscendC::LocalTensor<float> mAll = stats;  // splits x ROWS; becomes the weights
        const AscendC::LocalTensor<float> lAll = stats[splits * ROWS];
        const AscendC::LocalTensor<float> mMax = stats[2 * splits * ROWS];  // splits x ROWS folded
        const AscendC::LocalTensor<float> inv = stats[3 * splits * ROWS];
        const AscendC::LocalTensor<float> valid = stats[(3 * splits + 1) * ROWS];
        const AscendC::LocalTensor<float> &denom = lAll;  // l folded
        const uint64_t stride = stride_;
        const uint8_t reps = static_cast<uint8_t>(splits);
        constexpr uint8_t PITCH = ROWS / 8;
        const AscendC::UnaryRepeatParams each(1, 1, PITCH, PITCH);
        const AscendC::BinaryRepeatParams withRow(1, 1, 1, PITCH, PITCH, 0);  // src1: one row for all

        // m and l of every split for these rows: l follows m in the workspace (kvSplits x
        // combineRows each) and lAll follows mAll in UB, so one strided copy of 2 x splits runs
        // (ROWS apart in UB) takes both; the first splits' partial rows load behind it while the
        // weights are worked out.
        const AscendC::DataCopyExtParams statCopy(static_cast<uint16_t>(2 * splits), rows * 4,
                                                  static_cast<uint32_t>((stride - rows) * 4),
                                                  (ROWS * 4 - AlignUp(rows * 4, 32)) / 32, 0);
        const AscendC::LocalTensor<float> part = partBuf_.Get<float>();
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopyPad(mAll, ws.m[r0], statCopy, AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(COMBINE_EVT_STATS);
        LoadPartials(ws, part, 0, r0, rows);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(COMBINE_EVT_STATS);
        // M = max_s m_s; e_s = exp(m_s - M); denom = sum_s e_s * l_s
        AscendC::Adds(mMax, mAll, 0.0f, rows, reps, each);
        AscendC::PipeBarrier<PIPE_V>();
        FoldSplits<true>(mMax, splits, rows);
        AscendC::Sub(mAll, mAll, mMax, rows, reps, withRow);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Exp(mAll, mAll, rows, reps, each);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Mul(lAll, lAll, mAll, rows, reps, AscendC::BinaryRepeatParams(1, 1, 1, PITCH, PITCH, PITCH));
        AscendC::PipeBarrier<PIPE_V>();
        FoldSplits<false>(lAll, splits, rows);
        PipeSync<AscendC::HardEvent::V_S>();
        visibleRows_ = 0;
        for (uint32_t r = 0; r < rows; ++r) {
            const float l = denom.GetValue(r);
            const bool visible = mMax.GetValue(r) > MASKED_ROW_MAX && l > 0.0f;
            inv.SetValue(r, visible ? 1.0f / l : 0.0f);
            valid.SetValue(r, visible ? 1.0f : 0.0f);
            visibleRows_ |= visible ? (1u << r) : 0u;
        }
        PipeSync<AscendC::HardEvent::S_V>();
        // w_s = e_s / denom, each broadcast to a block: split s, row r -> block s * ROWS + r
        const AscendC::LocalTensor<float> bcast = bcastBuf_.Get<float>();
        AscendC::Mul(mAll, mAll, inv, rows, reps, withRow);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Brcb(bcast, mAll, static_cast<uint8_t>(splits * PITCH), AscendC::BrcbRepeatParams(1, 8));
        AscendC::PipeBarrier<PIPE_V>();

        // the partial rows of splitsPerCopy_ splits at a time: one strided copy; with one copy
        // for all the sum stays in part (no accumulator pass)
        const bool oneCopy = splitsPerCopy_ >= splits;
        const AscendC::LocalTensor<float> acc = oneCopy ? part : accBuf_.Get<float>();
        if (!oneCopy) {
            AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(rows * dp));
        }
        for (uint32_t s0 = 0; s0 < splits; s0 += splitsPerCopy_) {
            const uint32_t n = splits - s0 < splitsPerCopy_ ? splits - s0 : splitsPerCopy_;
            if (s0 != 0) {
                PipeSync<AscendC::HardEvent::V_MTE2>();
                LoadPartials(ws, part, s0, r0, rows);
            }
            PipeSync<AscendC::HardEvent::MTE2_V>();
            WeighSplits(part, bcast[s0 * ROWS * 8], n, rows);
            // acc += sum over the n splits (halves folded onto each other)
            for (uint32_t m = n; m > 1;) {
                const uint32_t h = m / 2;
                AscendC::Add(part, part, part[(m - h) * rows * dp], static_cast<int32_t>(h * rows * dp));
                AscendC::PipeBarrier<PIPE_V>();
                m -= h;
            }
            if (!oneCopy) {
                AscendC::Add(acc, acc, part, static_cast<int32_t>(rows * dp));
                AscendC::PipeBarrier<PIPE_V>();
            }
        }
        const uint32_t dd = p_->headDim;
        if (antiScale_ != nullptr) {
            ValueAntiquant(acc, r0, rows);
        }
        if (quant_) {
            WriteInt8(acc, valid, r0, rows);
            return;
        }
        const AscendC::LocalTensor<T> o = outBuf_.Get<T>();
        AscendC::Cast(o, acc, AscendC::RoundMode::CAST_RINT, rows * dp);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyPad(
            out_[at], o,
            AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T), 0, (pitch - dd) * sizeof(T), 0));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // y = out * scale + offset (per tensor, or per channel: row i is head i % N), through fp16
    // to int8 (round half to even, saturated); rows without a visible key output 0.
    __aicore__ inline void WriteInt8(const AscendC::LocalTensor<float> &acc, const AscendC::LocalTensor<float> &valid,
                                     uint64_t r0, uint32_t rows)
    {
        const DecodeParams &d = *d_;
        const uint32_t dp = p_->headDimAlign;
        const uint32_t dd = p_->headDim;
        const int32_t count = static_cast<int32_t>(rows * dp);
        if (d.quantPerChannel != 0) {
            const AscendC::LocalTensor<float> sc = qScaleBuf_.Get<float>();
            const AscendC::LocalTensor<float> of = qOffsetBuf_.Get<float>();
            PipeSync<AscendC::HardEvent::V_MTE2>();
            for (uint32_t r = 0; r < rows; ++r) {
                const uint64_t head = (r0 + r) % p_->numHeads;
                LoadQuantRow(qScale_, head * dd, sc[r * dp]);
                if (d.hasQuantOffset != 0) LoadQuantRow(qOffset_, head * dd, of[r * dp]);
            }
            PipeSync<AscendC::HardEvent::MTE2_V>();
            AscendC::Mul(acc, acc, sc, count);
            AscendC::PipeBarrier<PIPE_V>();
            if (d.hasQuantOffset != 0) {
                AscendC::Add(acc, acc, of, count);
                AscendC::PipeBarrier<PIPE_V>();
            }
        } else {
            PipeSync<AscendC::HardEvent::V_S>();
            const float scale = QuantValue(qScale_);
            const float offset = d.hasQuantOffset != 0 ? QuantValue(qOffset_) : 0.0f;
            PipeSync<AscendC::HardEvent::S_V>();
            AscendC::Muls(acc, acc, scale, count);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Adds(acc, acc, offset, count);
            AscendC::PipeBarrier<PIPE_V>();
        }
        ScaleRowsAdd(acc, acc, valid, rows, false);  // zero the rows without a visible key
        const AscendC::LocalTensor<half> h = outBuf_.Get<half>();
        AscendC::Cast(h, acc, AscendC::RoundMode::CAST_RINT, rows * dp);
        AscendC::PipeBarrier<PIPE_V>();
        const AscendC::LocalTensor<int8_t> q = int8Buf_.Get<int8_t>();
        AscendC::Cast(q, h, AscendC::RoundMode::CAST_RINT, rows * dp);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        // int8 rows of headDimAlign (a multiple of 32) bytes: each starts on a 32-byte block
        AscendC::DataCopyPad(outInt8_[r0 * dd], q,
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd, 0, 0, 0));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // The KV head of output row i = b * N + head.
    __aicore__ inline uint32_t KvHeadOf(uint64_t i) const
    {
        return static_cast<uint32_t>(i % p_->numHeads) / p_->groupSize;
    }

    // kvHead's value scale row and, with an offset, its shift o_v * s_v (fp32) -> antiBuf_.
    __aicore__ inline void LoadValueRows(uint32_t kvHead)
    {
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<float> scale = antiBuf_.Get<float>();
        const AscendC::LocalTensor<float> shift = scale[dp];
        const AscendC::LocalTensor<T> stage = antiBuf_.Get<T>()[2 * dp * (4 / sizeof(T))];
        LoadAntiRow<T>(*td_, antiScale_, 1, kvHead, stage, scale);
        if (antiOffset_ != nullptr) {
            LoadAntiRow<T>(*td_, antiOffset_, 1, kvHead, stage, shift);
            AscendC::Mul(shift, shift, scale, static_cast<int32_t>(p_->headDim));
            AscendC::PipeBarrier<PIPE_V>();
        }
        valueHead_ = kvHead;
    }

    // INT8 K/V: merged rows [r0, r0 + rows) (already divided by the weights' sum; rows without a
    // visible key are 0) := acc * s_v + o_v * s_v, the latter on visible rows only.
    __aicore__ inline void ValueAntiquant(const AscendC::LocalTensor<float> &acc, uint64_t r0, uint32_t rows)
    {
        const uint32_t dp = p_->headDimAlign;
        const int32_t dd = static_cast<int32_t>(p_->headDim);
        const AscendC::LocalTensor<float> scale = antiBuf_.Get<float>();
        const AscendC::LocalTensor<float> shift = scale[dp];
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t kvHead = KvHeadOf(r0 + r);
            if (kvHead != valueHead_) {
                AscendC::PipeBarrier<PIPE_V>();
                LoadValueRows(kvHead);
            }
            AscendC::Mul(acc[r * dp], acc[r * dp], scale, dd);
            if (antiOffset_ != nullptr && (visibleRows_ >> r & 1u) != 0) {
                AscendC::PipeBarrier<PIPE_V>();
                AscendC::Add(acc[r * dp], acc[r * dp], shift, dd);
            }
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // Element 0 of a quantisation parameter (fp32 or bf16) as fp32.
    __aicore__ inline float QuantValue(GM_ADDR src) const
    {
        AscendC::GlobalTensor<float> f;
        AscendC::GlobalTensor<bfloat16_t> h;
        f.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(src));
        h.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t *>(src));
        return d_->quantParamsBf16 != 0 ? static_cast<float>(h.GetValue(0)) : f.GetValue(0);
    }

    // D parameters from element `at` (fp32 or bf16) -> fp32 UB row `dst`.
    __aicore__ inline void LoadQuantRow(GM_ADDR src, uint64_t at, const AscendC::LocalTensor<float> &dst)
    {
        const uint32_t dd = p_->headDim;
        if (d_->quantParamsBf16 == 0) {
            AscendC::GlobalTensor<float> f;
            f.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(src));
            CopyFloats(dst, f[at], dd);
            return;
        }
        AscendC::GlobalTensor<bfloat16_t> h;
        h.SetGlobalBuffer(reinterpret_cast<__gm__ bfloat16_t *>(src));
        const AscendC::LocalTensor<bfloat16_t> stage = qStageBuf_.Get<bfloat16_t>();
        AscendC::DataCopyPad(stage, h[at], AscendC::DataCopyExtParams(1, dd * 2, 0, 0, 0),
                             AscendC::DataCopyPadExtParams<bfloat16_t>(false, 0, 0, bfloat16_t()));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Cast(dst, stage, AscendC::RoundMode::CAST_NONE, dd);
        PipeSync<AscendC::HardEvent::V_MTE2>();
    }

    // The partial rows [r0, r0 + rows) of splits [s0, s0 + splitsPerCopy_) -> part: one strided copy.
    __aicore__ inline void LoadPartials(const PartialLayout &ws, const AscendC::LocalTensor<float> &part, uint32_t s0,
                                        uint64_t r0, uint32_t rows)
    {
        const uint32_t splits = splits_;
        const uint32_t n = splits - s0 < splitsPerCopy_ ? splits - s0 : splitsPerCopy_;
        const uint32_t dp = p_->headDimAlign;
        const uint64_t stride = stride_;
        AscendC::DataCopyPad(part, ws.o[(s0 * stride + r0) * dp],
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(n), rows * dp * 4,
                                                        static_cast<uint32_t>((stride - rows) * dp * 4), 0, 0),
                             AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
    }

    // x[0..rows) := max (or sum) over the first `splits` rows of ROWS floats (halves folded).
    template <bool isMax>
    __aicore__ inline static void FoldSplits(const AscendC::LocalTensor<float> &x, uint32_t splits, uint32_t rows)
    {
        constexpr uint8_t PITCH = ROWS / 8;
        const AscendC::BinaryRepeatParams rep(1, 1, 1, PITCH, PITCH, PITCH);
        for (uint32_t m = splits; m > 1;) {
            const uint32_t h = m / 2;
            if constexpr (isMax) {
                AscendC::Max(x, x, x[(m - h) * ROWS], rows, static_cast<uint8_t>(h), rep);
            } else {
                AscendC::Add(x, x, x[(m - h) * ROWS], rows, static_cast<uint8_t>(h), rep);
            }
            AscendC::PipeBarrier<PIPE_V>();
            m -= h;
        }
    }

    // part row r of split k (n splits of `rows` rows of headDimAlign) *= block k * ROWS + r of
    // `blocks`: one repeat per row; a single row per split takes every split in one pass.
    __aicore__ inline void WeighSplits(const AscendC::LocalTensor<float> &part,
                                       const AscendC::LocalTensor<float> &blocks, uint32_t n, uint32_t rows)
    {
        const uint32_t dp = p_->headDimAlign;
        const uint8_t rowPitch = static_cast<uint8_t>(dp / 8);
        const uint32_t passes = rows == 1 ? 1 : n;
        const uint8_t reps = static_cast<uint8_t>(rows == 1 ? n : rows);
        const AscendC::BinaryRepeatParams rep(1, 1, 0, rowPitch, rowPitch, rows == 1 ? ROWS : 1);
        for (uint32_t k = 0; k < passes; ++k) {
            for (uint32_t c0 = 0; c0 < dp; c0 += 64) {
                const uint64_t lanes = dp - c0 < 64 ? dp - c0 : 64;
                const uint32_t at = k * rows * dp + c0;
                AscendC::Mul(part[at], part[at], blocks[k * ROWS * 8], lanes, reps, rep);
            }
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // part[r][:] *= w[r], then (add) acc += part
    __aicore__ inline void ScaleRowsAdd(const AscendC::LocalTensor<float> &acc, const AscendC::LocalTensor<float> &part,
                                        const AscendC::LocalTensor<float> &w, uint32_t rows, bool add = true)
    {
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<float> bcast = bcastBuf_.Get<float>();
        AscendC::PipeBarrier<PIPE_V>();
        BroadcastRows(bcast, w, rows);
        RowBroadcast<RowOp::Mul>(part, bcast, rows, dp, dp);
        if (add) {
            AscendC::Add(acc, acc, part, static_cast<int32_t>(rows * dp));
            AscendC::PipeBarrier<PIPE_V>();
        }
    }

    const ForwardParams *p_ = nullptr;
    const DecodeParams *d_ = nullptr;
    const DecodeTiling *td_ = nullptr;
    GM_ADDR antiScale_ = nullptr;  // INT8 K/V: the value antiquant rows ([2, N_kv, D], or per tensor)
    GM_ADDR antiOffset_ = nullptr;
    uint32_t valueHead_ = 0xFFFFFFFFu;  // the KV head whose rows are in antiBuf_
    uint32_t visibleRows_ = 0;          // bit r: merged row r has a visible key (rows <= COMBINE_ROWS)
    uint32_t rowsAtOnce_ = ROWS, splitsPerCopy_ = 1, splits_ = 1;
    uint64_t stride_ = 0;  // partial rows per split
    bool quant_ = false;
    AscendC::GlobalTensor<T> out_;
    AscendC::GlobalTensor<int8_t> outInt8_;
    GM_ADDR qScale_ = nullptr;  // fp32 or bf16 (quantParamsBf16)
    GM_ADDR qOffset_ = nullptr;
    AscendC::TBuf<AscendC::TPosition::VECCALC> accBuf_, partBuf_, outBuf_, statBuf_, bcastBuf_, qScaleBuf_, qOffsetBuf_,
        int8Buf_, qStageBuf_, antiBuf_;
};

}  // namespace AttentionCore
