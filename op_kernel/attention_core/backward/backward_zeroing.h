// BackwardVector (backward_vector.h): the zeroing of the fp32 accumulators (a share per vector
// core, under the D-term pass) and the dK/dV rows of the units the cube's flush does not write
// alone. Included by backward_vector.h after the class.
#pragma once

namespace AttentionCore {

// With accumKv and one query slice per kv block the cube writes every dK/dV row of a unit
// with steps, plain (dV straight into dv, backward_cube.h; dK cast in the main loop,
// FlushedKeys): only the units without a visible query row (zero dk/dv rows) and those cut
// between two cores (both add into zeroed accumulators, cast after the final barrier,
// CastCutKv) need a pass (UnflushedKvUnits).
// The other accumulators are zeroed under the D-term pass (ZeroShare).
template <typename T> __aicore__ inline void BackwardVector<T>::ZeroKvUnits()
{
    for (uint32_t a = 0; a < accCount_; ++a) {
        if (!OwnedKv() || a == 0 || a > 2) {
            uint64_t lo, hi;
            Share(accLen_[a], lo, hi);
            zeroTotal_ += hi - lo;
        }
    }
    if (!OwnedKv()) {
        return;
    }
    AscendC::Duplicate(s_, 0.0f, static_cast<int32_t>(rowCells_));
    PipeSync<AscendC::HardEvent::V_MTE3>();
    UnflushedKvUnits();
    PipeSync<AscendC::HardEvent::MTE3_V>();
}

// Zeros this core's shares of the accumulators (all but dK/dV with OwnedKv) from `zeros`
// (`len` floats) until `upto` of their zeroTotal_ elements are written.
template <typename T>
__aicore__ inline void BackwardVector<T>::ZeroShare(const AscendC::LocalTensor<float> &zeros, uint32_t len,
                                                    uint64_t upto)
{
    while (zeroDone_ < upto && zeroAcc_ < accCount_) {
        uint64_t lo, hi;
        Share(accLen_[zeroAcc_], lo, hi);
        zeroAt_ = zeroAt_ < lo ? lo : zeroAt_;
        if (zeroAt_ >= hi || (OwnedKv() && (zeroAcc_ == 1 || zeroAcc_ == 2))) {
            ++zeroAcc_;
            zeroAt_ = 0;
            continue;
        }
        const uint32_t n = hi - zeroAt_ < len ? static_cast<uint32_t>(hi - zeroAt_) : len;
        AscendC::DataCopyPad(acc_[zeroAcc_][zeroAt_], zeros, AscendC::DataCopyExtParams(1, n * 4, 0, 0, 0));
        zeroAt_ += n;
        zeroDone_ += n;
    }
}

// The units in this core's share whose dK/dV rows the cube's flush does not write alone:
// those no query row sees (their dk and dv rows := 0) and those whose steps two cores share
// (dK and dV accumulator rows := 0, both cores add). s_ holds zeros.
template <typename T> __aicore__ inline void BackwardVector<T>::UnflushedKvUnits()
{
    uint64_t lo, hi;
    Share(p_->unitCount, lo, hi);
    if (lo >= hi) {
        return;
    }
    BackwardSchedule sched;
    sched.Init(p_, seqQ_, seqKv_, prefix_);
    sched.Seek(lo);
    const uint32_t d = p_->headDim;
    const uint64_t pitch = static_cast<uint64_t>(p_->numKvHeads) * d;
    const uint32_t fit = rowCells_ / AlignUp(d, 8);  // rows of zeros s_ holds (32-byte rows)
    for (uint64_t unit = lo; unit < hi; ++unit) {
        if (unit != lo) {
            sched.Advance();
        }
        BackwardUnit u;
        sched.Current(u);
        const bool empty = u.rowHi <= u.rowLo;
        if (!empty && !CutBetweenCores(unit)) {
            continue;
        }
        const uint64_t off = KvOffset(u);
        for (uint32_t r = 0; r < u.cols; r += fit) {
            const uint32_t n = u.cols - r < fit ? u.cols - r : fit;
            const uint64_t x = off + r * pitch;
            for (uint32_t a = 1; a <= 2; ++a) {
                if (empty) {
                    AscendC::DataCopyPad(out_[a][x], s_.template ReinterpretCast<T>(), KvRows(n, sizeof(T)));
                } else {
                    AscendC::DataCopyPad(acc_[a][x], s_, KvRows(n, 4));
                }
            }
        }
    }
}

template <typename T> __aicore__ inline bool BackwardVector<T>::CutBetweenCores(uint64_t unit) const
{
    for (uint32_t c = 1; c < p_->usedCores; ++c) {
        if (p_->coreUnitStart[c] == unit && p_->coreStepStart[c] != 0) {
            return true;
        }
    }
    return false;
}

}  // namespace AttentionCore
