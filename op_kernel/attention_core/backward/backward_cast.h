// BackwardVector (backward_vector.h): the casts of the fp32 accumulators into the gradients
// (input dtype; all but dV times the scale): the dK of a unit once its flush is out, in the
// main loop, and the cast-out pass after the final barrier. Included by backward_vector.h
// after the class.
#pragma once

namespace AttentionCore {

// dK of this core's units whose flush is out, into dk: each vector core its half of the
// unit's rows. In the main loop (`all` false) after step i, the units whose last step is at
// most i - pipelined - 1 (the cube issues the S/dP of step i only after the gradients, and
// so the flush, of that step: the Fixpipe runs them in order, backward_cube.h); after the
// final barrier (`all`) the rest.
template <typename T> __aicore__ inline void BackwardVector<T>::FlushedKeys(uint32_t i, bool all)
{
    while (pendHead_ != pendTail_) {
        const PendingKeys &k = pending_[pendHead_ % PENDING];
        if (!all && k.last + p_->pipelined + 1 > i) {
            return;
        }
        const uint32_t first = (k.cols + 1) / 2;
        if (sub_ == 0) {
            CastKvRows(1, k.off, first);
        } else if (k.cols > first) {
            CastKvRows(1, k.off + static_cast<uint64_t>(first) * p_->numKvHeads * p_->headDim, k.cols - first);
        }
        ++pendHead_;
    }
}

// `rows` rows of `width` elements of `bytes` bytes, `pitch` elements apart in GM, UB rows
// 32-byte aligned; `load`: GM -> UB, else UB -> GM.
template <typename T>
__aicore__ inline AscendC::DataCopyExtParams BackwardVector<T>::Rows(uint32_t rows, uint32_t width, uint64_t pitch,
                                                                     uint32_t bytes, bool load)
{
    const uint32_t gap = static_cast<uint32_t>((pitch - width) * bytes);
    return AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), width * bytes, load ? gap : 0, load ? 0 : gap, 0);
}

// `rows` dK/dV rows of headDim elements, numKvHeads rows apart in GM.
template <typename T>
__aicore__ inline AscendC::DataCopyExtParams BackwardVector<T>::KvRows(uint32_t rows, uint32_t bytes, bool load) const
{
    return Rows(rows, p_->headDim, static_cast<uint64_t>(p_->numKvHeads) * p_->headDim, bytes, load);
}

// Rows of `width` elements, `pitch` apart, that one pass of CastRows holds.
template <typename T> __aicore__ inline uint32_t BackwardVector<T>::CastFit(uint32_t width) const
{
    const uint32_t wa = AlignUp(width, 8);  // floats per UB row
    return (wa * sizeof(T)) % 32 == 0 ? rowCells_ / wa : 1;
}

// Output rows [off, + rows) of accumulator a (all but dV times the scale) from the
// accumulator, rows of `width` elements `pitch` apart, through s_ and tmp_: CastFit rows
// per pass. Between steps of the main loop s_ and tmp_ are free (the next step loads S into
// s_ after this V work, and casts into tmp_ after this store).
template <typename T>
__aicore__ inline void BackwardVector<T>::CastRows(uint32_t a, uint64_t off, uint32_t rows, uint32_t width,
                                                   uint64_t pitch)
{
    const uint32_t wa = AlignUp(width, 8);
    const uint32_t fit = CastFit(width);
    const AscendC::LocalTensor<T> outT = tmpBuf_.Get<T>();
    for (uint32_t r = 0; r < rows; r += fit) {
        const uint32_t n = rows - r < fit ? rows - r : fit;
        const int32_t count = static_cast<int32_t>(n * wa);
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopyPad(s_, acc_[a][off + r * pitch], Rows(n, width, pitch, 4, true),
                             AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        if (a != 2) {
            AscendC::Muls(s_, s_, p_->scaleValue, count);
            AscendC::PipeBarrier<PIPE_V>();
        }
        PipeSync<AscendC::HardEvent::MTE3_V>();
        CastFromFloat(outT, s_, count);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyPad(out_[a][off + r * pitch], outT, Rows(n, width, pitch, sizeof(T), false));
    }
}

template <typename T> __aicore__ inline void BackwardVector<T>::CastKvRows(uint32_t a, uint64_t off, uint32_t rows)
{
    CastRows(a, off, rows, p_->headDim, static_cast<uint64_t>(p_->numKvHeads) * p_->headDim);
}

// dq/dk/dv (input dtype) from the fp32 accumulators, flat, this core's share. Two buffer
// sets (s_ and the P-out buffer, dp_ and the dS-out buffer) take chunks in turn, each
// guarded by its own events, so the next chunk's load and the last one's store run under
// this one's cast (one set was MTE2, V and MTE3 in series).
template <typename T> __aicore__ inline void BackwardVector<T>::CastOut()
{
    const uint32_t chunk = p_->rowsPerVec * p_->tileKv;
    PipeSync<AscendC::HardEvent::MTE3_V>();  // the main loop's last stores left the buffers
    for (int32_t b = 0; b < 2; ++b) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_CAST + b);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_CAST + b);
    }
    const bool ownedKv = OwnedKv();  // dk and dv written in the main loop (but shared units)
    uint32_t k = 0;
    for (uint32_t a = 0; a < accCount_; ++a) {
        if ((ownedKv && (a == 1 || a == 2)) || (a == 0 && p_->dqGroupCast != 0)) {
            continue;
        }
        uint64_t lo, hi;
        Share(accLen_[a], lo, hi);
        for (uint64_t x = lo; x < hi; x += chunk) {
            const uint32_t len = hi - x < chunk ? static_cast<uint32_t>(hi - x) : chunk;
            CastChunk(k++, a, x, 1, len, len);
        }
    }
    if (p_->dqGroupCast != 0) {
        CastCutDq(k);
    }
    for (int32_t b = 0; b < 2; ++b) {
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_CAST + b);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_CAST + b);
    }
    if (ownedKv) {
        FlushedKeys(0, true);
        UnflushedKvUnits(true);
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }
}

// Chunk k of the cast-out: `rows` rows of `width` elements, `pitch` apart, of accumulator a
// from element `off` (all but dV times the scale), through buffer set k % 2.
template <typename T>
__aicore__ inline void BackwardVector<T>::CastChunk(uint32_t k, uint32_t a, uint64_t off, uint32_t rows, uint32_t width,
                                                    uint64_t pitch)
{
    const int32_t b = static_cast<int32_t>(k % 2);
    const AscendC::LocalTensor<float> in = b == 0 ? s_ : dp_;
    const AscendC::LocalTensor<T> outT = b == 0 ? pOutBuf_.Get<T>() : dsOutBuf_.Get<T>();
    const int32_t count = static_cast<int32_t>(rows * (rows == 1 ? width : AlignUp(width, 8)));
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_CAST + b);  // the cast read it
    AscendC::DataCopyPad(in, acc_[a][off], Rows(rows, width, pitch, 4, true),
                         AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_CAST + b);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_CAST + b);
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_CAST + b);  // its last store is out
    if (a != 2) {  // dQ, dK and the rope gradients carry the softmax scale
        AscendC::Muls(in, in, p_->scaleValue, count);
        AscendC::PipeBarrier<PIPE_V>();
    }
    CastFromFloat(outT, in, count);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_CAST + b);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT_CAST + b);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT_CAST + b);
    AscendC::DataCopyPad(out_[a][off], outT, Rows(rows, width, pitch, sizeof(T), false));
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_CAST + b);
}

}  // namespace AttentionCore
