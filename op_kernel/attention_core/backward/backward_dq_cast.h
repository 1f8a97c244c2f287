// BackwardVector (backward_vector.h): the dQ of the groups a core owns, cast in the main loop
// once final, the first rows of the group after them likewise (dqTailRows), and of the rest of
// the groups no core owns, after the final barrier. Included by
// backward_vector.h after the class.
#pragma once

namespace AttentionCore {

// Step i (s) done: where the next step is in a later group, the groups before it are done
// with at step i, and they are final once the S/dP of step i + pipelined + 1 came (those
// follow step i's dQ Fixpipes on the Fixpipe, backward_cube.h); groups before the first
// step's have no steps in this core, none in any other (the core owns them).
template <typename T>
__aicore__ inline void BackwardVector<T>::DqGroupsDone(const BackwardStep &s, const BackwardStep *next, uint32_t i)
{
    const uint64_t g = static_cast<uint64_t>(s.u.b) * p_->numKvHeads + s.u.nkv;
    if (i == 0) {
        readyUpto_ = g;
    }
    if (next != nullptr) {
        const uint64_t gn = static_cast<uint64_t>(next->u.b) * p_->numKvHeads + next->u.nkv;
        if (gn != g) {
            groupsDone_[groupsTail_++ % PENDING] = GroupsDone{gn, i};
        }
    }
    while (groupsHead_ != groupsTail_ && groupsDone_[groupsHead_ % PENDING].last + p_->pipelined + 1 <= i) {
        readyUpto_ = groupsDone_[groupsHead_++ % PENDING].upto;
    }
}

// dQ group rows (tokens) cast per step in the main loop: half a pass, so that the pass
// (load, scale, cast, store, in series) fits the vector cores' slack in a step. The
// planner's copy: PlanDqGroupCast.
template <typename T> __aicore__ inline uint32_t BackwardVector<T>::DqCastPass(uint32_t width) const
{
    const uint32_t fit = CastFit(width) / 2;
    return fit != 0 ? fit : 1;
}

// dQ of the groups this core owns (PlanDqGroupCast): group g = b * numKvHeads + kv head,
// its rows the batch's tokens, G x headDim elements each, numHeads x headDim apart; each
// vector core casts its half of the tokens. `budget`: at most this many rows now (in the
// main loop, a pass per step; after it, all). Groups below readyUpto_ have had their last
// dQ Fixpipe. Returns the budget left once every owned group is cast (else 0).
template <typename T> __aicore__ inline uint32_t BackwardVector<T>::CastOwnedDq(uint32_t budget)
{
    const uint32_t width = p_->groupSize * p_->headDim;
    const uint64_t pitch = static_cast<uint64_t>(p_->numHeads) * p_->headDim;
    const uint64_t hi = p_->dqCastHi[core_] < readyUpto_ ? p_->dqCastHi[core_] : readyUpto_;
    while (budget != 0 && castGroup_ < hi) {
        uint64_t first, count;
        GroupTokens(castGroup_, first, count);
        const uint64_t half = (count + 1) / 2;
        const uint64_t lo = sub_ == 0 ? 0 : half, end = sub_ == 0 ? half : count;
        if (lo + castTok_ >= end) {
            ++castGroup_;
            castTok_ = 0;
            continue;
        }
        const uint64_t left = end - lo - castTok_;
        const uint32_t n = left < budget ? static_cast<uint32_t>(left) : budget;
        const uint64_t off = ((first + lo + castTok_) * p_->numHeads +
                              static_cast<uint64_t>(castGroup_ % p_->numKvHeads) * p_->groupSize) *
                             p_->headDim;
        CastRows(0, off, n, width, pitch);
        castTok_ += n;
        budget -= n;
    }
    return castGroup_ >= p_->dqCastHi[core_] ? budget : 0;
}

// Step i (s) done: where the next step is in another unit, the rows of the tail group
// (dqTailRows) below the next unit's visible rows are final once the S/dP of step
// i + pipelined + 1 came (as in DqGroupsDone): later units see no row below their first,
// and no other core touches rows below dqTailRows.
template <typename T>
__aicore__ inline void BackwardVector<T>::TailRowsDone(const BackwardStep &s, const BackwardStep *next, uint32_t i)
{
    const uint64_t tail = p_->dqCastHi[core_];
    const uint64_t g = static_cast<uint64_t>(s.u.b) * p_->numKvHeads + s.u.nkv;
    if (g == tail && (next == nullptr || next->unitSeq != s.unitSeq)) {
        uint64_t upto = tailRows_;
        if (next != nullptr && static_cast<uint64_t>(next->u.b) * p_->numKvHeads + next->u.nkv == tail &&
            static_cast<uint64_t>(next->u.rowLo) < upto) {
            upto = static_cast<uint64_t>(next->u.rowLo);
        }
        tailDone_[tailTail_++ % PENDING] = GroupsDone{upto, i};
    }
    while (tailHead_ != tailTail_ && tailDone_[tailHead_ % PENDING].last + p_->pipelined + 1 <= i) {
        tailReady_ = tailDone_[tailHead_++ % PENDING].upto;
    }
}

// The final rows of the tail group below tailReady_, at most `budget` of them, in chunks of
// `pass` rows: chunk m on sub-block m % 2 (the planner's copy: PlanDqTailRows).
template <typename T> __aicore__ inline void BackwardVector<T>::CastTailDq(uint32_t budget, uint32_t pass)
{
    const uint64_t g = p_->dqCastHi[core_];
    const uint32_t width = p_->groupSize * p_->headDim;
    const uint64_t pitch = static_cast<uint64_t>(p_->numHeads) * p_->headDim;
    while (budget != 0 && tailChunk_ * pass < tailRows_) {
        const uint64_t end = (tailChunk_ + 1) * pass < tailRows_ ? (tailChunk_ + 1) * pass : tailRows_;
        const uint64_t from = tailChunk_ * pass + tailAt_, to = end < tailReady_ ? end : tailReady_;
        if (from >= to) {
            return;
        }
        const uint32_t n = to - from < budget ? static_cast<uint32_t>(to - from) : budget;
        uint64_t first, count;
        GroupTokens(g, first, count);
        const uint64_t off =
            ((first + from) * p_->numHeads + static_cast<uint64_t>(g % p_->numKvHeads) * p_->groupSize) * p_->headDim;
        CastRows(0, off, n, width, pitch);
        tailAt_ += n;
        budget -= n;
        if (from + n >= end) {
            tailChunk_ += 2;
            tailAt_ = 0;
        }
    }
}

// First token and token count of group g's batch (the last batch's kept: the groups of a
// batch come one after another, and a scalar GM read costs ~100 cycles).
template <typename T>
__aicore__ inline void BackwardVector<T>::GroupTokens(uint64_t g, uint64_t &first, uint64_t &count)
{
    const uint64_t b = g / p_->numKvHeads;
    if (b != tokBatch_) {
        AscendC::GlobalTensor<int64_t> cum;
        cum.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqQ_));
        tokBatch_ = b;
        tokFirst_ = b == 0 ? 0 : static_cast<uint64_t>(cum.GetValue(b - 1));
        tokCount_ = static_cast<uint64_t>(cum.GetValue(b)) - tokFirst_;
    }
    first = tokFirst_;
    count = tokCount_;
}

// After the final barrier: the dQ of the groups no core owns (between the ranges of
// PlanDqGroupCast) but the rows the cores cast in their loop (dqTailRows), their tokens
// shared over all vector cores, in the cast-out's chunks from chunk k on; returns the next
// chunk's number.
template <typename T> __aicore__ inline uint32_t BackwardVector<T>::CastCutDq(uint32_t k)
{
    const uint32_t fit = CastFit(p_->groupSize * p_->headDim);
    const uint32_t width = p_->groupSize * p_->headDim;
    const uint64_t pitch = static_cast<uint64_t>(p_->numHeads) * p_->headDim;
    uint64_t total = 0;
    for (uint32_t pass = 0; pass < 2; ++pass) {
        uint64_t lo = 0, hi = 0, at = 0;
        if (pass == 1) {
            Share(total, lo, hi);
        }
        for (uint32_t c = 0; c <= p_->usedCores; ++c) {
            const uint64_t from = c == 0 ? 0 : p_->dqCastHi[c - 1];
            const uint64_t to =
                c == p_->usedCores ? static_cast<uint64_t>(p_->batch) * p_->numKvHeads : p_->dqCastLo[c];
            for (uint64_t g = from; g < to; ++g) {
                uint64_t first, count;
                GroupTokens(g, first, count);
                if (c != 0 && g == from) {  // core c - 1 cast its first rows (CastTailDq)
                    first += p_->dqTailRows[c - 1];
                    count -= p_->dqTailRows[c - 1];
                }
                if (pass == 1) {
                    const uint64_t a = lo > at ? lo - at : 0;
                    const uint64_t e = hi - at < count ? hi - at : count;
                    for (uint64_t r = a; hi > at && r < e; r += fit) {
                        const uint64_t off =
                            ((first + r) * p_->numHeads + static_cast<uint64_t>(g % p_->numKvHeads) * p_->groupSize) *
                            p_->headDim;
                        CastChunk(k++, 0, off, static_cast<uint32_t>(e - r < fit ? e - r : fit), width, pitch);
                    }
                }
                at += count;
            }
        }
        total = at;
    }
    return k;
}

}  // namespace AttentionCore
