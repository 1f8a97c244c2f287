// BackwardVector (backward_vector.h): the K/V prefetch that brings a unit's K and V into L2
// ahead of the cube's staging copies. Included by backward_vector.h after the class.
#pragma once

namespace AttentionCore {

// The cube stages a unit's K and V with Nd2Nz copies when its first step is staged, in
// front of the P/dS load its dQ Mmads wait for; a unit's first touch of K/V reads HBM (32
// B/cycle against 110 from L2) and the cube's MTE2 is ~90 % busy, so each unit start
// stalled its Fixpipe. At step i the vector cores read K (sub-block 0) and V (sub-block 1)
// of every unit that starts by step i + PREFETCH_AHEAD into UB, which brings them into L2
// for the cube's copies, and drop them. The units of the first tileSets steps are staged
// before the loop. A hint only: nothing waits for these reads.
template <typename T> __aicore__ inline void BackwardVector<T>::PrefetchKv(uint32_t i)
{
    if (p_->prefetchRows == 0) {
        return;
    }
    for (; aheadAt_ <= i + PREFETCH_AHEAD; ++aheadAt_) {
        BackwardStep s;
        if (!ahead_.Next(s)) {
            aheadAt_ = ~0u - PREFETCH_AHEAD;  // the walk is over
            return;
        }
        if (s.u.k0 == 0 && aheadAt_ > PREFETCH_AHEAD) {
            PrefetchRows(s);
        }
        if (s.unitSeq == aheadUnit_) {
            continue;
        }
        aheadUnit_ = s.unitSeq;
        if (aheadAt_ >= p_->tileSets) {
            const uint32_t d = p_->headDim;
            const uint32_t gap = (p_->numKvHeads - 1) * d * sizeof(T);
            AscendC::DataCopyPad(prefBuf_.Get<T>(), kv_[sub_][KvOffset(s.u)],
                                 AscendC::DataCopyExtParams(static_cast<uint16_t>(s.u.cols), d * sizeof(T), gap, 0, 0),
                                 AscendC::DataCopyPadExtParams<T>(false, 0, 0, 0));
        }
    }
}

// A head's first kv block is the first of its units to read the step's Q and dO rows (the
// D-term pass read dO long before): HBM, so the cube's Nd2Nz copies of those steps took ~1.7
// us against ~1.0 from L2 and stalled its Fixpipe for the head's first unit. The vector cores
// read them ahead like K/V: Q on sub-block 0, dO on sub-block 1, prefetchRows rows per copy.
template <typename T> __aicore__ inline void BackwardVector<T>::PrefetchRows(const BackwardStep &s)
{
    const uint32_t d = p_->headDim;
    const uint32_t gap = (p_->numHeads - 1) * d * sizeof(T);
    const uint64_t row = (s.u.qStart + s.q0) * p_->numHeads + s.n;
    const AscendC::GlobalTensor<T> &src = sub_ == 0 ? q_ : dy_;
    for (uint32_t r = 0; r < s.rows; r += p_->prefetchRows) {
        const uint32_t n = s.rows - r < p_->prefetchRows ? s.rows - r : p_->prefetchRows;
        AscendC::DataCopyPad(prefBuf_.Get<T>(), src[(row + static_cast<uint64_t>(r) * p_->numHeads) * d],
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(n), d * sizeof(T), gap, 0, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, 0));
    }
}

// The walk's tensors (BackwardSteps reads the sequence lengths and prefix).
template <typename T> __aicore__ inline BackwardTensors BackwardVector<T>::StepTensors() const
{
    BackwardTensors t{};
    t.seqQ = seqQ_;
    t.seqKv = seqKv_;
    t.prefix = prefix_;
    return t;
}

}  // namespace AttentionCore
