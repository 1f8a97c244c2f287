// ForwardVector (forward_vector.h), the output: the cube's P.V blocks folded into the fp32
// accumulator with the rescale factors, and at the end of a unit the normalisation, the cast
// and the stores of the output rows and the softmax statistics.
// Included by forward_vector.h after the class.
#pragma once

namespace AttentionCore {

// O = O * alpha(block) + P.V(block), once the cube has written the block's P.V. Lazy P.V:
// O = (O + the sum the cube wrote) * alpha(block) when the cube flushed before this block
// (alpha only if this core rescaled there), nothing otherwise; O is the written sum itself at
// the unit's first flush (acc_ holds nothing of the unit before).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::AccumulateO(uint32_t rowOff, uint32_t rows,
                                                                              uint32_t slot)
{
    AscendC::CrossCoreWaitFlag(FLAG_O_READY);
    if (rows == 0) {
        return;
    }
    if constexpr (LAZY_PV) {
        const int32_t word = ReadCtrl(ctrl_, CtrlFlushed(slot));
        if (blockLast_[slot]) {  // the cube's choice for the unit's final sum
            fp16Final_[blockSet_[slot]] = (word & CTRL_FP16) != 0;
        }
        if ((word & CTRL_MOVED) != 0) {
            const bool load = !flushedAny_[blockSet_[slot]];
            flushedAny_[blockSet_[slot]] = true;
            AddSlot(rowOff, rows, slot, load);
            if (rescaled_[slot]) {
                BroadcastRows(bcast_, alpha_[slot], rows);
                ScaleRows(acc_, rows);
            }
        }
    } else {
        BroadcastRows(bcast_, alpha_[slot], rows);
        ScaleRows(acc_, rows);
        if constexpr (Variant::Kv::Int8Digits()) {  // the block's P.V digit products (int8_digit_core.h)
            kv_.Digits().FoldO(acc_, bcast_, slot, rowOff, rows);
            return;
        }
        AddSlot(rowOff, rows, slot);
    }
}

// Lazy P.V: O += the unit's final sum (the cube's last write-out, in the final O slot,
// relative to the current reference); O := the final sum of a unit the cube never flushed.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::AddFinalSum(uint32_t rowOff, uint32_t rows,
                                                                              uint32_t lastSlot, bool load)
{
    if (finalFp16_) {
        AddHalfSlot(rowOff, rows, WS_SLOTS + lastSlot, load);
    } else {
        AddSlot(rowOff, rows, WS_SLOTS + lastSlot, load);
    }
}

// AddSlot of an O slot the cube wrote in fp16 rows (a final sum found safe in fp16): the rows
// through part_ (half elements in its upper part) and a cast to fp32.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::AddHalfSlot(uint32_t rowOff, uint32_t rows,
                                                                              uint32_t slot, bool load)
{
    const uint32_t dp = p_->headDimAlign;
    FinishStored();
    // load: halves at the start of part_, cast straight into acc_; else n rows' halves after n
    // rows of fp32 in part_ (3 n <= 2 partRows_), cast there and added.
    const uint32_t step = load ? 2 * partRows_ : (2 * partRows_) / 3;
    for (uint32_t r0 = 0; r0 < rows; r0 += step) {
        const uint32_t n = rows - r0 < step ? rows - r0 : step;
        const AscendC::LocalTensor<half> h = part_[load ? 0 : n * dp].template ReinterpretCast<half>();
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopy(h, wsOh_[slot * (p_->wsSlotO / 2) + (rowOff + r0) * dp], n * dp);
        PipeSync<AscendC::HardEvent::MTE2_V>();
        if (load) {
            AscendC::Cast(acc_[r0 * dp], h, AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(n * dp));
        } else {
            AscendC::Cast(part_, h, AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(n * dp));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Add(acc_[r0 * dp], acc_[r0 * dp], part_, static_cast<int32_t>(n * dp));
        }
        AscendC::PipeBarrier<PIPE_V>();
    }
}

// acc_ += this core's rows of O slot `slot` (WS_SLOTS: the final slot), partRows_ rows per
// load; load: acc_ := the rows, one copy straight into acc_ (no O-slot staging and add, which
// sat between the unit's last P.V and the next unit's first P at every unit boundary).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::AddSlot(uint32_t rowOff, uint32_t rows, uint32_t slot,
                                                                          bool load)
{
    const uint32_t dp = p_->headDimAlign;
    if (load) {
        PipeSync<AscendC::HardEvent::V_MTE2>();  // the vector is done with acc_
        AscendC::DataCopy(acc_, wsO_[slot * (p_->wsSlotO / 4) + rowOff * dp], rows * dp);
        PipeSync<AscendC::HardEvent::MTE2_V>();
        return;
    }
    FinishStored();
    for (uint32_t r0 = 0; r0 < rows; r0 += partRows_) {
        const uint32_t n = rows - r0 < partRows_ ? rows - r0 : partRows_;
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopy(part_, wsO_[slot * (p_->wsSlotO / 4) + (rowOff + r0) * dp], n * dp);
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Add(acc_[r0 * dp], acc_[r0 * dp], part_, static_cast<int32_t>(n * dp));
        AscendC::PipeBarrier<PIPE_V>();
    }
}

// O / l, zero for rows past the query length or without any visible key; cast; store. Then
// acc_ starts over for the next unit (lazy P.V: the unit's first write-out loads it instead).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::FinishUnit(uint32_t set, uint32_t lastSlot)
{
    const WorkUnit &u = units_[set].u;
    const uint32_t rowOff = units_[set].rowOff;
    const uint32_t rows = units_[set].rows;
    const uint32_t blocks = units_[set].blocks;
    // Lazy P.V: the cube wrote the whole sum of a unit it never flushed into the split's
    // partial rows (acc_ is still zero then), the same decision as the cube's.
    AscendC::GlobalTensor<float> partial;
    const bool direct = LAZY_PV && blocks > 0 && !flushedAny_[set] && split_.PartialRows(u, partial);
    const bool last = units_[set].unit + 1 == split_.End(core_);
    if (LAZY_PV && blocks == 0 && rows != 0) {  // no sum to load: zero rows (O / l of no key)
        AscendC::Duplicate(acc_, 0.0f, static_cast<int32_t>(rows * p_->headDimAlign));
        AscendC::PipeBarrier<PIPE_V>();
    }
    finalFp16_ = fp16Final_[set];
    FinishRows(u, rowOff, rows, blocks, lastSlot, direct, !flushedAny_[set]);
    if (direct && last) {  // the combine's barrier, which the cube joins after the rows, orders them
        return;
    }
    if (direct) {
        AscendC::CrossCoreWaitFlag(FLAG_O_READY);  // the rows are in place
    }
    // The core's last unit leaves acc_ as it is: nothing accumulates after it, and the zeroing
    // would sit between its output stores and the end of the core (split-KV: the combine's SyncAll).
    if (!LAZY_PV && rows != 0 && !last) {
        AscendC::Duplicate(acc_, 0.0f, static_cast<int32_t>(rows * p_->headDimAlign));
        AscendC::PipeBarrier<PIPE_V>();
    }
}

template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void
ForwardVector<T, Variant, LAZY_PV, KV_NZ>::FinishRows(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                                      uint32_t blocks, uint32_t lastSlot, bool direct, bool unflushed)
{
    if constexpr (LAZY_PV) {
        if (direct) {  // only the statistics, while the cube writes the rows (FinishUnit waits)
            if (rows != 0) {
                split_.StorePartialStats(u, rowOff, rows, mOld_, sum_);
            }
            return;
        }
        if (blocks > 0) {
            AscendC::CrossCoreWaitFlag(FLAG_O_READY);  // the unit's final P.V sum
            if (rows != 0) {
                AddFinalSum(rowOff, rows, lastSlot, unflushed);
            }
        }
    }
    if (rows == 0) {
        return;
    }
    if (split_.StorePartialOutput(u, rowOff, rows, acc_, mOld_, sum_)) {
        return;  // split-KV decode: a combine pass finishes (kv_.FinishRows' part too), normalises and writes
    }
    kv_.FinishRows(u, rows, acc_, sum_);
    // Lazy P.V: the statistics are reported against the true max (sum * exp(ref - max)).
    const bool trueStats = LAZY_PV && p_->hasSoftmaxStats != 0;
    // PFA without mask or band: every valid row of a unit with keys saw them all, so it is visible and 1 / l
    // goes through one vector division instead of a scalar pass over the rows (which sat between
    // a unit's last P.V and the next unit's softmax).
    if constexpr (AscendC::IsSameType<typename Variant::Split, WorkSplit<SplitQBlocks>>::value) {
        if (p_->hasSoftmaxStats == 0 && rowOff + rows <= u.qValid && u.kvEnd > u.kvBegin && !mask_.LoadsRows() &&
            !mask_.HasRowsBefore()) {
            AscendC::Duplicate(inv_, 1.0f, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Div(inv_, inv_, sum_, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            StoreRows(u, rowOff, rows);
            return;
        }
    }
    if (trueStats) {  // rowTmp_ := l * exp(reference - true max), the sum against the true max
        AscendC::Sub(rowTmp_, mOld_, mTrue_, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Exp(rowTmp_, rowTmp_, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Mul(rowTmp_, rowTmp_, sum_, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
    }
    VisibleRows(u, rowOff, rows, trueStats);
    StoreRows(u, rowOff, rows);
}

// acc_ * inv_ per row, cast, to the output rows; then the softmax statistics mOld_ and sum_
// (8 replicated copies of each row's value into GM rows of pitch statsStrideS floats). Where
// part_ holds the cast rows (and the statistics: forward_layout.h sizes it so), the stores
// leave from there and nothing waits for them here: the vector core waited at every unit's
// finish (the statistics' 32-byte rows cost a whole minimum transfer each, as long again as
// the output rows), and part_ is next written by an O-slot load, which waits on EVT_FINISH.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::StoreRows(const WorkUnit &u, uint32_t rowOff,
                                                                            uint32_t rows)
{
    BroadcastRows(bcast_, inv_, rows);
    ScaleRows(acc_, rows);
    const uint32_t dp = p_->headDimAlign;
    AscendC::LocalTensor<T> o = tmpBuf_.Get<T>();
    if (asyncOut_) {
        FinishStored();
        o = part_.template ReinterpretCast<T>();
    }
    CastFromFloat(o, acc_, rows * dp);
    const bool stats = p_->hasSoftmaxStats != 0;  // then asyncOut_ (forward_vector.h Init)
    AscendC::LocalTensor<float> statMax, statSum;
    if (stats) {
        statMax = part_[rows * dp * sizeof(T) / 4];
        statSum = statMax[AlignUp(rows, 8) * 8];
        BroadcastRows(statMax, mOld_, rows);
        BroadcastRows(statSum, sum_, rows);
    }
    PipeSync<AscendC::HardEvent::V_MTE3>();
    const uint32_t d = p_->headDim;
    // UB rows are dp elements apart: skip the blocks past the row's own (fp32 with D % 16 == 8)
    const uint32_t rowGap = (dp * sizeof(T) - AlignUp(d * sizeof(T), 32)) / 32;
    AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), d * sizeof(T), rowGap,
                                    (kv_.OutRowPitch() - d) * sizeof(T), 0);
    AscendC::DataCopyPad(out_[kv_.OutOffset(u.b, u.n, static_cast<uint32_t>(u.qBase) + u.q0 + rowOff)], o, copy);
    if (stats) {
        const uint64_t at = (u.qBase + u.q0 + rowOff) * p_->statsStrideS + u.n * p_->statsStrideN;
        AscendC::DataCopyExtParams statCopy(static_cast<uint16_t>(rows), 32, 0,
                                            static_cast<uint32_t>((p_->statsStrideS - 8) * 4), 0);
        AscendC::DataCopyPad(statMax_[at], statMax, statCopy);
        AscendC::DataCopyPad(statSum_[at], statSum, statCopy);
    }
    if (asyncOut_) {
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_FINISH);
        finishInFlight_ = true;
    } else {
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }
}

// inv_ := 1 / l for the visible rows (before the query length, some key seen: m above
// MASKED_ROW_MAX and l > 0), 0 for the others; with the statistics reported, mOld_ / sum_ :=
// the true max and rowTmp_ (trueStats) and fp32 lowest / max for the invisible rows. In vector
// instructions: a scalar pass over the rows sat between a unit's final sum and the next unit's
// first P at every unit boundary (~0.5 us for 96 rows). The compares run on copies in tmp_ of
// whole 256-byte repeats, the rows past the query length left invisible there. A few rows (a
// decode unit's heads) take the scalar pass, shorter than the vector pass's dozen instructions.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::VisibleRows(const WorkUnit &u, uint32_t rowOff,
                                                                              uint32_t rows, bool trueStats)
{
    if (rows <= SCALAR_FINISH_ROWS) {
        const bool stats = p_->hasSoftmaxStats != 0;
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            const float l = sum_.GetValue(r);
            const bool visible = rowOff + r < u.qValid && mOld_.GetValue(r) > MASKED_ROW_MAX && l > 0.0f;
            inv_.SetValue(r, visible ? 1.0f / l : 0.0f);
            if (stats) {
                mOld_.SetValue(r, !visible ? INVALID_ROW_STAT_MAX : trueStats ? mTrue_.GetValue(r) : mOld_.GetValue(r));
                sum_.SetValue(r, !visible ? INVALID_ROW_STAT_SUM : trueStats ? rowTmp_.GetValue(r) : l);
            }
        }
        PipeSync<AscendC::HardEvent::S_V>();
        return;
    }
    constexpr uint32_t PER_REPEAT = 256 / sizeof(float);
    const uint32_t n = AlignUp(rows, PER_REPEAT);
    const uint32_t valid = rowOff >= u.qValid ? 0 : (u.qValid - rowOff < rows ? u.qValid - rowOff : rows);
    const AscendC::LocalTensor<float> m = tmp_;
    const AscendC::LocalTensor<float> l = tmp_[n];
    const uint32_t bitFloats = AlignUp(n / 8, 32) / sizeof(float);  // one compare's bits, 32-byte aligned
    const AscendC::LocalTensor<uint8_t> keep = tmp_[2 * n].template ReinterpretCast<uint8_t>();
    const AscendC::LocalTensor<uint8_t> positive = tmp_[2 * n + bitFloats].template ReinterpretCast<uint8_t>();
    AscendC::Duplicate(m, MASKED_SCORE, static_cast<int32_t>(n));
    AscendC::Duplicate(l, 0.0f, static_cast<int32_t>(n));
    AscendC::Duplicate(inv_, 1.0f, static_cast<int32_t>(rows));
    AscendC::PipeBarrier<PIPE_V>();
    if (valid != 0) {
        AscendC::Adds(m, mOld_, 0.0f, static_cast<int32_t>(valid));
        AscendC::Adds(l, sum_, 0.0f, static_cast<int32_t>(valid));
    }
    AscendC::Div(inv_, inv_, sum_, static_cast<int32_t>(rows));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::CompareScalar(keep, m, MASKED_ROW_MAX, AscendC::CMPMODE::GT, n);
    AscendC::CompareScalar(positive, l, 0.0f, AscendC::CMPMODE::GT, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::And(keep.template ReinterpretCast<uint16_t>(), keep.template ReinterpretCast<uint16_t>(),
                 positive.template ReinterpretCast<uint16_t>(), static_cast<int32_t>(n / 16));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Select(inv_, keep, inv_, 0.0f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, rows);
    if (p_->hasSoftmaxStats != 0) {
        AscendC::Select(mOld_, keep, trueStats ? mTrue_ : mOld_, INVALID_ROW_STAT_MAX,
                        AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, rows);
        AscendC::Select(sum_, keep, trueStats ? rowTmp_ : sum_, INVALID_ROW_STAT_SUM,
                        AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, rows);
    }
    AscendC::PipeBarrier<PIPE_V>();
}

// x[r][:] *= bcast_[r] over rows of pitch headDimAlign.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::ScaleRows(const AscendC::LocalTensor<float> &x,
                                                                            uint32_t rows)
{
    RowBroadcast<RowOp::Mul>(x, bcast_, rows, p_->headDimAlign, p_->headDimAlign);
}

}  // namespace AttentionCore
