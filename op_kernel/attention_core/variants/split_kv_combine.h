// Split-KV decode (and the INT8 output): when (batch, KV head) units are too few to fill the cores, the host cuts each
// KV window into kvSplits chunks computed by different cores. Each chunk's vector core stores
// its unnormalised output rows O_s with the running max m_s and sum l_s (the split's
// StorePartialOutput, called by the forward vector stage); after a barrier the combine pass merges them per row:
//   M = max_s m_s,  w_s = exp(m_s - M),  out = sum_s w_s O_s / sum_s w_s l_s
// (0 for a row whose M shows no visible key). The partials' workspace and the pass's UB:
// split_kv_combine_layout.h.
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "split_kv_combine_layout.h"
#include "../common/sync.h"
#include "../common/row_ops.h"

namespace AttentionCore {

// Units store partials (and the combine pass writes the output) with KV splits or INT8 output.
__aicore__ inline bool StoresPartials(const DecodeParams &d) { return d.kvSplits > 1 || d.quantOut != 0; }

struct PartialLayout {
    __aicore__ inline PartialLayout(const ForwardParams *p, const DecodeParams &d, GM_ADDR workspace)
    {
        const PartialRows at = PartialRowsLayout(d.kvSplits, d.combineRows, p->headDimAlign);
        GM_ADDR base = workspace + d.wsPartialOffset;
        o.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(base + at.o));
        m.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(base + at.m));
        l.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(base + at.l));
    }
    AscendC::GlobalTensor<float> o, m, l;
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
    const uint32_t s = u.n % d.kvSplits;
    const uint64_t head = static_cast<uint64_t>(u.n / d.kvSplits) * p->groupSize + u.q0 + rowOff;
    const uint64_t i = (static_cast<uint64_t>(s) * p->batch + u.b) * p->numHeads + head;
    const PartialLayout ws(p, d, workspace_);
    PipeSync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopy(ws.o[i * p->headDimAlign], acc, rows * p->headDimAlign);
    CopyFloats(ws.m[i], m, rows);
    CopyFloats(ws.l[i], l, rows);
    PipeSync<AscendC::HardEvent::MTE3_V>();
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
        GM_ADDR out = t.out;
        AscendC::PipeBarrier<PIPE_ALL>();
        AscendC::SyncAll();  // every partial is in the workspace
        const uint32_t v = AscendC::GetBlockIdx();
        const uint64_t begin = d.combineRowStart[v];
        const uint64_t end = d.combineRowStart[v + 1];
        if (begin >= end) {
            return;
        }
        AscendC::TPipe pipe;
        const CombineUb ub = CombineUbLayout(d.kvSplits, p->headDimAlign, sizeof(T), d.quantOut != 0);
        pipe.InitBuffer(accBuf_, ub.acc);
        pipe.InitBuffer(partBuf_, ub.part);
        pipe.InitBuffer(outBuf_, ub.out);
        if (d.quantOut != 0) {
            pipe.InitBuffer(qScaleBuf_, ub.qScale);
            pipe.InitBuffer(qOffsetBuf_, ub.qOffset);
            pipe.InitBuffer(int8Buf_, ub.int8);
            outInt8_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(out));
            pipe.InitBuffer(qStageBuf_, ub.qStage);
            qScale_ = t.split.quantScale;
            qOffset_ = t.split.quantOffset;
        }
        pipe.InitBuffer(statBuf_, ub.stat);
        pipe.InitBuffer(bcastBuf_, ub.bcast);
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(out));
        const PartialLayout ws(p, d, t.workspace);
        rowsAtOnce_ = ub.rows;
        splitsPerCopy_ = ub.splitsPerCopy;
        for (uint64_t r0 = begin; r0 < end; r0 += rowsAtOnce_) {
            const uint32_t rows = end - r0 < rowsAtOnce_ ? static_cast<uint32_t>(end - r0) : rowsAtOnce_;
            MergeRows(ws, r0, rows);
        }
    }

private:
    __aicore__ inline void MergeRows(const PartialLayout &ws, uint64_t r0, uint32_t rows)
    {
        const DecodeParams &d = *d_;
        const uint32_t splits = d.kvSplits;
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<float> stats = statBuf_.Get<float>();
        const AscendC::LocalTensor<float> mAll = stats;  // splits x ROWS
        const AscendC::LocalTensor<float> lAll = stats[splits * ROWS];
        const AscendC::LocalTensor<float> mMax = stats[2 * splits * ROWS];
        const AscendC::LocalTensor<float> w = stats[(2 * splits + 1) * ROWS];
        const AscendC::LocalTensor<float> denom = stats[(2 * splits + 2) * ROWS];
        const AscendC::LocalTensor<float> inv = stats[(2 * splits + 3) * ROWS];
        const AscendC::LocalTensor<float> valid = stats[(2 * splits + 4) * ROWS];
        const uint64_t stride = d.combineRows;

        // m and l of every split for these rows: one strided copy each (ROWS apart in UB)
        const AscendC::DataCopyExtParams statCopy(static_cast<uint16_t>(splits), rows * 4,
                                                  static_cast<uint32_t>((stride - rows) * 4),
                                                  (ROWS * 4 - AlignUp(rows * 4, 32)) / 32, 0);
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopyPad(mAll, ws.m[r0], statCopy, AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        AscendC::DataCopyPad(lAll, ws.l[r0], statCopy, AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        // M = max_s m_s; denom = sum_s exp(m_s - M) * l_s
        AscendC::Adds(mMax, mAll, 0.0f, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
        for (uint32_t s = 1; s < splits; ++s) {
            AscendC::Max(mMax, mMax, mAll[s * ROWS], static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
        }
        AscendC::Duplicate(denom, 0.0f, static_cast<int32_t>(rows));
        for (uint32_t s = 0; s < splits; ++s) {
            const AscendC::LocalTensor<float> e = mAll[s * ROWS];  // becomes exp(m_s - M)
            AscendC::Sub(e, e, mMax, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Exp(e, e, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Mul(w, e, lAll[s * ROWS], static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Add(denom, denom, w, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
        }
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            const float l = denom.GetValue(r);
            const bool visible = mMax.GetValue(r) > MASKED_ROW_MAX && l > 0.0f;
            inv.SetValue(r, visible ? 1.0f / l : 0.0f);
            valid.SetValue(r, visible ? 1.0f : 0.0f);
        }
        PipeSync<AscendC::HardEvent::S_V>();

        const AscendC::LocalTensor<float> acc = accBuf_.Get<float>();
        const AscendC::LocalTensor<float> part = partBuf_.Get<float>();
        AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(rows * dp));
        // the partial rows of splitsPerCopy_ splits at a time: one strided copy
        for (uint32_t s0 = 0; s0 < splits; s0 += splitsPerCopy_) {
            const uint32_t n = splits - s0 < splitsPerCopy_ ? splits - s0 : splitsPerCopy_;
            PipeSync<AscendC::HardEvent::V_MTE2>();
            AscendC::DataCopyPad(part, ws.o[(s0 * stride + r0) * dp],
                                 AscendC::DataCopyExtParams(static_cast<uint16_t>(n), rows * dp * 4,
                                                            static_cast<uint32_t>((stride - rows) * dp * 4), 0, 0),
                                 AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
            PipeSync<AscendC::HardEvent::MTE2_V>();
            for (uint32_t k = 0; k < n; ++k) {
                AscendC::PipeBarrier<PIPE_V>();  // the previous split's broadcast has read w
                AscendC::Mul(w, mAll[(s0 + k) * ROWS], inv, static_cast<int32_t>(rows));
                ScaleRowsAdd(acc, part[k * rows * dp], w, rows);
            }
        }
        const uint32_t dd = p_->headDim;
        if (d.quantOut != 0) {
            WriteInt8(acc, valid, r0, rows);
            return;
        }
        const AscendC::LocalTensor<T> o = outBuf_.Get<T>();
        AscendC::Cast(o, acc, AscendC::RoundMode::CAST_RINT, rows * dp);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        // S = 1: output row i = b * N + n sits at i * D in every layout.
        AscendC::DataCopyPad(out_[r0 * dd], o,
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T), 0, 0, 0));
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
    uint32_t rowsAtOnce_ = ROWS, splitsPerCopy_ = 1;
    AscendC::GlobalTensor<T> out_;
    AscendC::GlobalTensor<int8_t> outInt8_;
    GM_ADDR qScale_ = nullptr;  // fp32 or bf16 (quantParamsBf16)
    GM_ADDR qOffset_ = nullptr;
    AscendC::TBuf<AscendC::TPosition::VECCALC> accBuf_, partBuf_, outBuf_, statBuf_, bcastBuf_, qScaleBuf_, qOffsetBuf_,
        int8Buf_, qStageBuf_;
};

}  // namespace AttentionCore
