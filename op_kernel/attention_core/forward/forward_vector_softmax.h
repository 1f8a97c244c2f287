// ForwardVector (forward_vector.h), the online softmax of a key block: sub-block by sub-block,
// the score and mask policies on S, the running max and sum, P = exp(S - reference) to the
// workspace for the cube, with the rows a band tile leaves dead skipped.
// Included by forward_vector.h after the class.
#pragma once

namespace AttentionCore {

// One key block: S -> P (online softmax) sub-block by sub-block, P to the workspace for the
// cube. With two S buffers the next sub-block's S loads during this one's softmax. Where the
// mask reads rows per block (the vector cores then pace the pipeline, the cube's S is
// ready early) the last sub-block's softmax also overlaps the load of the first S rows of
// `after` (the unit's next block, if any); elsewhere that wait for the next S would hold
// this block's P back from a cube that is waiting for it, so those rows load after P.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::SoftmaxBlock(const WorkUnit &u, const KvBlock &blk,
                                                                               uint32_t rowOff, uint32_t rows,
                                                                               uint32_t slot, const KvBlock *after)
{
    if (!prefetched_) {
        AscendC::CrossCoreWaitFlag(FLAG_S_READY);
        if (rows != 0) {
            LoadS(u, blk, slot, rowOff, SubRows(0, rows), sIdx_);
        }
    }
    prefetched_ = false;
    bool rescaled = false;
    if constexpr (LAZY_PV) {
        sumBound_ = after == nullptr && vMaxKnown_ && rows != 0;
        if (sumBound_) {
            StartSumBound(rows);
        }
    }
    for (uint32_t h0 = 0; h0 < rows; h0 += vecRows_) {
        const uint32_t cur = sIdx_;
        const uint32_t next = h0 + vecRows_;
        MaskRows ahead;  // the mask rows of the next Apply, when they are known here
        if (next < rows) {
            ahead = {u.q0 + rowOff + next, SubRows(next, rows), blk};
            if (sBufs_ == 2) {  // the next sub-block's S: now into the other buffer, else after this one
                LoadS(u, blk, slot, rowOff + next, ahead.rows, cur ^ 1u);
            }
        } else if (after != nullptr) {
            ahead = {u.q0 + rowOff, SubRows(0, rows), *after};
            if (sBufs_ == 2 && mask_.LoadsRows()) {
                AscendC::CrossCoreWaitFlag(FLAG_S_READY);
                LoadS(u, *after, (slot + 1) % WS_SLOTS, rowOff, ahead.rows, cur ^ 1u);
                prefetched_ = true;
            }
        }
        rescaled = SoftmaxRows(u, blk, rowOff, h0, SubRows(h0, rows), slot, cur, ahead) || rescaled;
        sIdx_ = sBufs_ == 2 ? cur ^ 1u : 0u;
        if (next < rows) {
            if (sBufs_ == 1) {
                LoadS(u, blk, slot, rowOff + next, ahead.rows, 0);
            }
            LoadMask(u, ahead);
        }
    }
    rescaled_[slot] = rescaled;
    if constexpr (LAZY_PV) {
        // A unit's last block: whether this core's rows allow the final sum in fp16.
        const int32_t unsafe = after == nullptr && !Fp16SumSafe(rows, blk.cols) ? CTRL_UNSAFE : 0;
        sumBound_ = false;
        WriteCtrl(ctrl_, CtrlRescaled(slot, sub_), (rescaled ? CTRL_MOVED : 0) | unsafe);
    }
    AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FlagPReady(slot));
}

// The online softmax of one sub-block: rows [h0, h0 + rows) of this core's rows (statistics
// at offset h0) from S buffer `cur`; P to the slot. Returns whether the rows' reference max
// moved (lazy P.V; always true otherwise). A sub-block that keeps its reference while another
// one of the block moves gets alpha = 1, so the block's rescale acts on every row alike.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline bool ForwardVector<T, Variant, LAZY_PV, KV_NZ>::SoftmaxRows(const WorkUnit &u, const KvBlock &blk,
                                                                              uint32_t rowOff, uint32_t h0,
                                                                              uint32_t rows, uint32_t slot,
                                                                              uint32_t cur, const MaskRows &ahead)
{
    const uint32_t c = p_->blockKv;
    // The leading rows that see no key of this block (a diagonal tile's upper rows) keep
    // their statistics (alpha 1) and get P = 0 without the softmax passes: `live` rows from
    // h0 + dead on take them. A multiple of 8 (32-byte aligned statistics); all rows only
    // where the cube wrote no S for any of them, else one row at least. The rows without S
    // (Unwritten: a multiple of 8 of those before the band, or all) never reach past `dead`.
    const uint32_t row0 = u.q0 + rowOff + h0;
    const uint32_t before = mask_.RowsBefore(u, row0, rows, blk.k0);
    const uint32_t dead = Unwritten(u, blk, row0, rows) == rows ? rows : (before < rows ? before : rows - 1) / 8 * 8;
    const uint32_t live = rows - dead;
    const AscendC::LocalTensor<float> sAll = sBuf_.Get<float>()[cur * sElems_];
    s_ = sAll[dead * c];
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_S + cur);
    if constexpr (Variant::Kv::Int8Digits()) {  // S from the digit products (no band: no dead rows)
        kv_.Digits().Scores(sAll, cur, u, rowOff + h0, rows);
    }
    // The previous block's P store reads pBuf_ until MTE3 is done: wait right before
    // pBuf_'s first use (as score or mask scratch, else the P cast), so the store
    // overlaps this block's softmax. The wait is the P store's own event: stores issued
    // after it (the K/V source's ring writes) do not hold this softmax back.
    bool pFree = false;
    bool rescale = !LAZY_PV;
    if (live != 0) {
        rescale = SoftmaxLive(u, blk, h0, dead, row0 + dead, live, slot, ahead, pFree);
    } else {
        if constexpr (!Variant::Softmax::UsesMaskBuffer()) {  // the mask buffer is free: the next rows now
            if (ahead.rows != 0) {
                IssueMask(u, ahead);
                maskAhead_ = true;
            }
        }
        if (vecRows_ < p_->rowsPerVec) {  // only lazy P.V leaves whole sub-blocks out: no rescale
            AscendC::Duplicate(alpha_[slot][h0], 1.0f, static_cast<int32_t>(rows));
        }
    }
    // The leading rows the cube does not load (Unstored) need no P at all.
    const uint32_t unstored = Unstored(u, blk, row0, rows);
    if (dead > unstored) {
        AscendC::Duplicate(sAll[unstored * c], 0.0f, static_cast<int32_t>((dead - unstored) * c));
        AscendC::PipeBarrier<PIPE_V>();
    }

    const AscendC::LocalTensor<T> pOut = pBuf_.Get<T>();
    const AscendC::GlobalTensor<T> pSlot = wsP_[slot * (p_->wsSlotP / sizeof(T))];
    if (!pFree) {
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
    }
    if constexpr (Variant::Kv::Int8Digits()) {  // P as int8 digit rows with their units (int8_digit_core.h)
        kv_.Digits().StoreP(sAll, pBuf_.Get<int8_t>(), slot, h0, rowOff + h0, rows, sum_[h0], rowTmp_);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_S + cur);  // done with this S buffer
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
        return rescale;
    }
    if constexpr (NzHandoff<T>::ENABLED) {  // P in the cube's Nz order (nz_handoff.h)
        // lazy P.V: no P past the columns the cube's P.V reads (SeenPCols), with pPieceFractals
        // none past those the rows' 16-row fractals see (SubBlockPCols; the cube zeroes the rest
        // of each fractal row in L0A, forward_cube_pv.h LoadPRows)
        const uint32_t pCols = !LAZY_PV                  ? c
                               : p_->pPieceFractals != 0 ? SubBlockPCols(mask_, u, rowOff + h0 + rows, blk.k0, blk.cols)
                                                         : AlignUp(SeenPCols(mask_, u, blk.k0, blk.cols), 16);
        if (unstored < rows) {
            NzHandoff<T>::CastArranged(pOut, sAll, rows, c, unstored);
        }
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_S + cur);  // done with this S buffer
        if (unstored < rows) {
            PipeSync<AscendC::HardEvent::V_MTE3>();
            if (p_->pStoreFractals != 0 && p_->pPieceFractals != 0) {
                // per 16-row fractal row of the unit, each with the columns it sees (the first
                // rows of a sub-block up to the next fractal boundary as one piece)
                const uint32_t base = rowOff + h0;
                uint32_t a = unstored;
                while (a < rows) {
                    uint32_t b = AlignUp(base + a + 1, 16) - base;
                    b = b < rows ? b : rows;
                    const uint32_t cols = SubBlockPCols(mask_, u, base + b, blk.k0, blk.cols);
                    if (cols >= pCols) {
                        b = rows;
                    }
                    NzHandoff<T>::StoreRows(pSlot, pOut, base, rows, cols < pCols ? cols : pCols, p_->blockQ, a, b);
                    a = b;
                }
            } else {
                NzHandoff<T>::Store(pSlot, pOut, rowOff + h0, rows, pCols, p_->blockQ, unstored);
            }
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
        return rescale;
    }
    CastFromFloat(pOut, sAll, rows * c);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_S + cur);  // done with this S buffer
    PipeSync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopy(pSlot[(rowOff + h0) * c], pOut, rows * c);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
    return rescale;
}

// SoftmaxRows on the `live` rows after its `dead` ones (s_, statistics at offset h0 + dead,
// query rows from row0): score and mask policies, running max and sum, P = exp(S -
// reference) in s_. pFree: whether it waited for the previous P store (it does where a
// policy takes the P buffer as scratch).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline bool ForwardVector<T, Variant, LAZY_PV, KV_NZ>::SoftmaxLive(const WorkUnit &u, const KvBlock &blk,
                                                                              uint32_t h0, uint32_t dead, uint32_t row0,
                                                                              uint32_t live, uint32_t slot,
                                                                              const MaskRows &ahead, bool &pFree)
{
    const uint32_t c = p_->blockKv;
    const uint32_t count = live * c;
    const uint32_t h = h0 + dead;
    const AscendC::LocalTensor<float> mOld = mOld_[h];
    const AscendC::LocalTensor<float> mNew = mNew_[h];
    const AscendC::LocalTensor<float> sum = sum_[h];
    const AscendC::LocalTensor<float> mTrue = mTrue_[h];
    const AscendC::LocalTensor<float> alpha = alpha_[slot][h];
    const bool scoreScratch = score_.UsesScratch();
    const bool maskScratch = mask_.UsesScratch();
    if (scoreScratch) {
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
    }
    score_.Apply(s_, tmp_, pBuf_.Get<T>(), u, row0, live, blk.k0, blk.cols, c);
    if (!scoreScratch && maskScratch) {
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
    }
    pFree = scoreScratch || maskScratch;
    mask_.Apply(s_, tmp_, maskBuf_.Get<uint8_t>()[dead * c], pBuf_.Get<half>(), u, row0, live, blk.k0, blk.cols, c);
    if constexpr (!Variant::Softmax::UsesMaskBuffer()) {  // the mask buffer is free: the next rows now
        if (ahead.rows != 0) {
            IssueMask(u, ahead);
            maskAhead_ = true;
        }
    }

    // m_new = max(m_old, rowmax(S)); alpha = exp(m_old - m_new); S = exp(S - m_new). Lazy
    // P.V keeps m_old (and alpha = 1) unless some row moved by more than the threshold.
    RowReduce<true>(live);
    AscendC::Max(mNew, mOld, rowTmp_, static_cast<int32_t>(live));
    AscendC::PipeBarrier<PIPE_V>();
    bool rescale = true;
    if constexpr (LAZY_PV) {
        AscendC::Max(mTrue, mTrue, rowTmp_, static_cast<int32_t>(live));
        rescale = Moved(mNew, mOld, live);
    }
    if (rescale) {
        AscendC::Sub(alpha, mOld, mNew, static_cast<int32_t>(live));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Exp(alpha, alpha, static_cast<int32_t>(live));
        AscendC::Adds(mOld, mNew, 0.0f, static_cast<int32_t>(live));
        if (dead != 0) {
            AscendC::Duplicate(alpha_[slot][h0], 1.0f, static_cast<int32_t>(dead));
        }
        AscendC::PipeBarrier<PIPE_V>();
    } else if (vecRows_ < p_->rowsPerVec) {
        AscendC::Duplicate(alpha_[slot][h0], 1.0f, static_cast<int32_t>(dead + live));
        AscendC::PipeBarrier<PIPE_V>();
    }
    BroadcastRows(bcast_, mOld, live);
    RowBroadcast<RowOp::Sub>(s_, bcast_, live, c, c);
    AscendC::Exp(s_, s_, static_cast<int32_t>(count));
    AscendC::PipeBarrier<PIPE_V>();

    // l = l * alpha + rowsum(P); the softmax extra (dropout) acts on P after the sum,
    // which stays the plain softmax denominator.
    RowReduce<false>(live);
    if (rescale) {
        AscendC::Mul(sum, sum, alpha, static_cast<int32_t>(live));
        AscendC::PipeBarrier<PIPE_V>();
    }
    AscendC::Add(sum, sum, rowTmp_, static_cast<int32_t>(live));
    AscendC::PipeBarrier<PIPE_V>();
    softmax_.AfterExp(s_, maskBuf_.Get<uint8_t>(), u, row0, live, blk.k0, blk.cols, c);
    return rescale;
}

// Lazy P.V: does some row's reference max mOld move by more than LAZY_RESCALE_TAU to mNew
// (a row's first visible key always does: its reference starts at MASKED_SCORE)?
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline bool ForwardVector<T, Variant, LAZY_PV, KV_NZ>::Moved(const AscendC::LocalTensor<float> &mNew,
                                                                        const AscendC::LocalTensor<float> &mOld,
                                                                        uint32_t rows)
{
    AscendC::Sub(rowTmp_, mNew, mOld, static_cast<int32_t>(rows));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::WholeReduceMax(inv_, rowTmp_, static_cast<int32_t>(rows), 1, 1, 1, 8,
                            AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    if (sumBound_) {  // exp of the move: the largest P of the rows where they keep their reference
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Exp(bcast_[SUM_BOUND_EXP], inv_, 1);
    }
    PipeSync<AscendC::HardEvent::V_S>();
    const float moved = inv_.GetValue(0);
    if (sumBound_) {
        TakeSumBound(moved > LAZY_RESCALE_TAU ? 1.0f : bcast_.GetValue(SUM_BOUND_EXP));
    }
    PipeSync<AscendC::HardEvent::S_V>();
    return moved > LAZY_RESCALE_TAU;
}

// rowTmp[r] = max (or sum) over the block's columns of row r. The 64-lane column groups of
// each row fold into tmp in plane order (block b of row r at tmp block b * rows + r: a
// destination block stride of `rows`), so the 8 blocks of every row then fold as the two
// contiguous halves of tmp (rows / 2, / 4, / 8 repeats) and one BlockReduce takes each
// row's last block to its value: 1 + 7/8 + 1/4 repeats per row (BlockReduce costs two),
// against 1 + 2 + 1/4 for a BlockReduce of all 8 blocks per row (docs/performance.md).
// A 64-column block has nothing to fold: two BlockReduce passes.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
template <bool isMax>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::RowReduce(uint32_t rows)
{
    const uint32_t c = p_->blockKv;
    const uint8_t rep = static_cast<uint8_t>(rows);
    const uint8_t pitch = static_cast<uint8_t>(c / 8);
    const int32_t groups = static_cast<int32_t>((rows + 7) / 8);
    if (c == 64) {
        BlockReduce<isMax>(bcast_, s_, static_cast<int32_t>(rows), pitch);
        AscendC::PipeBarrier<PIPE_V>();
        BlockReduce<isMax>(rowTmp_, bcast_, groups, 8);
        AscendC::PipeBarrier<PIPE_V>();
        return;
    }
    for (uint32_t c0 = 64; c0 < c; c0 += 64) {
        const bool first = c0 == 64;
        const AscendC::BinaryRepeatParams planes(rep, first ? 1 : rep, 1, 1, first ? pitch : 1, pitch);
        Fold<isMax>(tmp_, first ? s_ : tmp_, s_[c0], 64, rep, planes);
        AscendC::PipeBarrier<PIPE_V>();
    }
    for (uint32_t half = 4; half >= 1; half /= 2) {
        const uint32_t n = half * rows * 8;
        Fold<isMax>(tmp_, tmp_, tmp_[n], static_cast<int32_t>(n));
        AscendC::PipeBarrier<PIPE_V>();
    }
    BlockReduce<isMax>(rowTmp_, tmp_, groups, 8);
    AscendC::PipeBarrier<PIPE_V>();
}

// fp16 final sums: the unit's final P.V sum |sum_j p_j v_j| <= l max|V| per row (P >= 0, the
// sum covers part of the row's keys against the current reference), so it fits fp16 where
// max_rows(l) * max|V| < FP16_SUM_LIMIT; max|V| is known only where every vector core staged V
// before the barrier (ReadVMax). l after the unit's last block is bounded without waiting for
// it: l <= l_before + cols * max P, l_before's largest row reduced as the block starts (into
// bcast_[SUM_BOUND_L]), max P per sub-block 1 where it moved its reference, else exp(its
// largest move) (Moved: both read at the scalar read the lazy rescale makes anyway; a
// reduction of l after the block and a wait for it cost 0.6 us on the vector-bound B1 N8/2
// S2K causal).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::StartSumBound(uint32_t rows)
{
    // 64 rows per repeat, then the tail, one value each; those to one
    const uint32_t full = rows / 64;
    const uint32_t tail = rows % 64;
    const AscendC::LocalTensor<float> part = bcast_[SUM_BOUND_PARTS];
    AscendC::PipeBarrier<PIPE_V>();  // sum_ is complete, bcast_'s last reader is done
    if (full != 0) {
        AscendC::WholeReduceMax(part, sum_, 64, static_cast<int32_t>(full), 1, 1, 8,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    }
    if (tail != 0) {
        AscendC::WholeReduceMax(part[full], sum_[full * 64], static_cast<int32_t>(tail), 1, 1, 1, 8,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    }
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::WholeReduceMax(bcast_[SUM_BOUND_L], part, static_cast<int32_t>(full + (tail != 0 ? 1 : 0)), 1, 1, 1, 8,
                            AscendC::ReduceOrder::ORDER_ONLY_VALUE);
    lBefore_ = -1.0f;  // not read yet
    pMax_ = 0.0f;
}

// At a sub-block's scalar read (Moved, after its V_S wait): l_before once, and the sub-block's
// largest P.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::TakeSumBound(float pMax)
{
    if (lBefore_ < 0.0f) {
        lBefore_ = bcast_.GetValue(SUM_BOUND_L);
    }
    // NaN stays (then never safe, but for an all-zero V)
    pMax_ = pMax > pMax_ || pMax != pMax ? pMax : pMax_;
}

template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline bool ForwardVector<T, Variant, LAZY_PV, KV_NZ>::Fp16SumSafe(uint32_t rows, uint32_t cols)
{
    if (!vMaxKnown_) {
        return false;
    }
    if (rows == 0) {
        return true;
    }
    if (lBefore_ < 0.0f) {  // no sub-block reached Moved (every row dead in this block): read l now
        PipeSync<AscendC::HardEvent::V_S>();
        lBefore_ = bcast_.GetValue(SUM_BOUND_L);
        PipeSync<AscendC::HardEvent::S_V>();
    }
    const float p = pMax_ > 1.0f || pMax_ != pMax_ ? pMax_ : 1.0f;
    const float l = lBefore_ + static_cast<float>(cols) * p;
    // All-zero V (also what a timing-only model run, which skips vector arithmetic, leaves:
    // ReadVMax) makes every sum 0, whatever l.
    return vMax_ == 0.0f || l * vMax_ < FP16_SUM_LIMIT;
}

}  // namespace AttentionCore
