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
// final barrier (`all`) the rest, in the cast-out's chunks from chunk k on (two buffer sets
// in turn: the units' rows in series took a load, a cast and a store each). Returns the next
// chunk's number.
template <typename T> __aicore__ inline uint32_t BackwardVector<T>::FlushedKeys(uint32_t i, bool all, uint32_t k)
{
    const uint64_t pitch = static_cast<uint64_t>(p_->numKvHeads) * p_->headDim;
    const uint32_t fit = CastFit(p_->headDim);
    while (pendHead_ != pendTail_) {
        const PendingKeys &unit = pending_[pendHead_ % PENDING];
        if (!all && unit.last + p_->pipelined + 1 > i) {
            break;
        }
        const uint32_t first = (unit.cols + 1) / 2;
        const uint64_t off = sub_ == 0 ? unit.off : unit.off + static_cast<uint64_t>(first) * pitch;
        const uint32_t rows = sub_ == 0 ? first : unit.cols - first;
        for (uint32_t r = 0; all && r < rows; r += fit) {
            CastChunk(k++, 1, off + r * pitch, rows - r < fit ? rows - r : fit, p_->headDim, pitch);
        }
        if (!all && rows != 0) {
            CastKvRows(1, off, rows);
        }
        ++pendHead_;
    }
    return k;
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
        k = CastCutDq(k);
    }
    if (ownedKv) {
        k = FlushedKeys(0, true, k);
        CastCutKv(k);
    }
    for (int32_t b = 0; b < 2; ++b) {
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_CAST + b);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_CAST + b);
    }
}

// With OwnedKv, after the final barrier: the dk and dv rows of the units two cores share
// (both added into the zeroed accumulators), in the cast-out's chunks from chunk k on. Their
// rows are shared over all vector cores (a unit's dK, then its dV, blockKv rows each), so
// that no vector core casts a whole unit after the others are done.
template <typename T> __aicore__ inline void BackwardVector<T>::CastCutKv(uint32_t k)
{
    uint64_t cut = 0;  // units cut between cores (a core inside one unit cuts it twice)
    for (uint32_t c = 1; c < p_->usedCores; ++c) {
        const bool again = p_->coreUnitStart[c] == p_->coreUnitStart[c - 1] && p_->coreStepStart[c - 1] != 0;
        cut += p_->coreStepStart[c] != 0 && !again ? 1 : 0;
    }
    uint64_t lo, hi;
    Share(cut * 2 * p_->blockKv, lo, hi);
    const uint32_t fit = CastFit(p_->headDim);
    const uint64_t pitch = static_cast<uint64_t>(p_->numKvHeads) * p_->headDim;
    uint64_t j = 0;
    for (uint32_t c = 1; c < p_->usedCores && lo < hi; ++c) {
        const bool again = p_->coreUnitStart[c] == p_->coreUnitStart[c - 1] && p_->coreStepStart[c - 1] != 0;
        if (p_->coreStepStart[c] == 0 || again) {
            continue;
        }
        const uint64_t base = j++ * 2 * p_->blockKv;  // this unit's rows [base, base + 2 blockKv)
        if (lo >= base + 2 * p_->blockKv) {
            continue;
        }
        BackwardSchedule sched;
        sched.Init(p_, seqQ_, seqKv_, prefix_);
        sched.Seek(p_->coreUnitStart[c]);
        BackwardUnit u;
        sched.Current(u);
        for (uint32_t a = 1; a <= 2 && lo < hi; ++a) {
            const uint64_t from = base + (a - 1) * p_->blockKv, to = from + u.cols;
            lo = lo < from ? from : lo;  // past the rows a short last block lacks
            while (lo < hi && lo < to) {
                const uint64_t end = hi < to ? hi : to;
                const uint32_t n = end - lo < fit ? static_cast<uint32_t>(end - lo) : fit;
                CastChunk(k++, a, KvOffset(u) + (lo - from) * pitch, n, p_->headDim, pitch);
                lo += n;
            }
        }
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
