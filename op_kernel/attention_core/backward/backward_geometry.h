// Geometry of the backward core, shared by its cube and vector sides so both walk the same
// steps: the units (batch, kv head, kv block) of a core, the per-batch sparse-mode band and
// the query rows a kv block is visible to.
//
// The band of a batch comes from sparse_mode.h (modes 0-8); the element-wise mask inside a
// block is the forward core's MaskMod<MaskSparseMode> (backward_vector.h).
#pragma once
#include "kernel_operator.h"
#include "backward_params.h"
#include "../common/sync.h"
#include "../common/sparse_mode.h"

namespace AttentionCore {

// The GM tensors of a backward launch (nullptr for absent optional ones).
struct BackwardTensors {
    GM_ADDR query;
    GM_ADDR key;
    GM_ADDR value;
    GM_ADDR dy;
    GM_ADDR pse;
    GM_ADDR dropMask;
    GM_ADDR mask;
    GM_ADDR softmaxMax;
    GM_ADDR softmaxSum;
    GM_ADDR attentionIn;
    GM_ADDR seqQ;
    GM_ADDR seqKv;
    GM_ADDR prefix;
    GM_ADDR sink;
    GM_ADDR qStartIdx;
    GM_ADDR kvStartIdx;
    GM_ADDR queryRope;
    GM_ADDR keyRope;
    GM_ADDR dq;
    GM_ADDR dk;
    GM_ADDR dv;
    GM_ADDR dsink;
    GM_ADDR dqRope;
    GM_ADDR dkRope;
    GM_ADDR workspace;  // the user workspace (after GetUserWorkspace)
};

// One unit: keys [k0, k0 + cols) of kv head nkv in batch b, whose query rows [rowLo, rowHi)
// (batch-relative) may see them.
struct BackwardUnit {
    uint32_t b;
    uint32_t nkv;
    uint64_t qStart;   // first T row of the batch in query
    uint64_t kvStart;  // first T row of the batch in key
    int64_t sq;
    int64_t sk;
    int64_t k0;
    uint32_t cols;
    int64_t rowLo;
    int64_t rowHi;
};

class BackwardSchedule {
public:
    __aicore__ inline void Init(const BackwardParams *p, GM_ADDR seqQ, GM_ADDR seqKv, GM_ADDR prefix)
    {
        p_ = p;
        cumQ_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqQ));
        cumKv_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqKv));
        if (p->mask.hasPrefix != 0) {
            prefix_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(prefix));
        }
    }

    // Positions the walk on `unit` (units are numbered batch-major, then kv head, then kv block,
    // then query slice).
    __aicore__ inline void Seek(uint64_t unit)
    {
        b_ = 0;
        nkv_ = 0;
        blk_ = 0;
        LoadBatch();
        while (b_ < p_->batch) {
            const uint64_t inBatch = static_cast<uint64_t>(blocks_) * p_->numKvHeads;
            if (unit < inBatch) {
                nkv_ = static_cast<uint32_t>(unit / blocks_);
                blk_ = static_cast<uint32_t>(unit % blocks_);  // kv block * qSplit + slice
                return;
            }
            unit -= inBatch;
            ++b_;
            LoadBatch();
        }
    }

    __aicore__ inline void Advance()
    {
        if (++blk_ < blocks_) {
            return;
        }
        blk_ = 0;
        if (++nkv_ < p_->numKvHeads) {
            return;
        }
        nkv_ = 0;
        do {
            ++b_;
            LoadBatch();
        } while (b_ < p_->batch && blocks_ == 0);
    }

    __aicore__ inline void Current(BackwardUnit &u) const
    {
        u.b = b_;
        u.nkv = nkv_;
        u.qStart = qStart_;
        u.kvStart = kvStart_;
        u.sq = sq_;
        u.sk = sk_;
        u.k0 = static_cast<int64_t>(blk_ / p_->qSplit) * p_->blockKv;
        const int64_t left = sk_ - u.k0;
        u.cols = left < static_cast<int64_t>(p_->blockKv) ? static_cast<uint32_t>(left) : p_->blockKv;
        const SparseMaskParams &m = p_->mask;
        const int64_t prefix = m.hasPrefix != 0 ? prefix_.GetValue(b_) : 0;
        const SparseBand band = MakeSparseBand(m.sparseMode, m.hasMask != 0, m.preTokens, m.nextTokens, sq_, sk_,
                                               prefix, static_cast<int64_t>(b_) == m.bandBatch);
        BackwardVisibleRows(band, u.k0, u.cols, sq_, u.rowLo, u.rowHi);
        // Query slice: whole query blocks [q0, q1) of the visible rows.
        const uint32_t slice = blk_ % p_->qSplit;
        const int64_t nb = (u.rowHi - u.rowLo + p_->blockQ - 1) / p_->blockQ;
        const int64_t q0 = nb * slice / p_->qSplit;
        const int64_t q1 = nb * (slice + 1) / p_->qSplit;
        const int64_t lo = u.rowLo + q0 * p_->blockQ;
        const int64_t hi = u.rowLo + q1 * p_->blockQ;
        u.rowLo = lo;
        u.rowHi = hi < u.rowHi ? hi : u.rowHi;
    }

    // Query-row blocks of one head in a unit (steps of blockQ from rowLo).
    __aicore__ inline uint32_t QBlocks(const BackwardUnit &u) const
    {
        return static_cast<uint32_t>((u.rowHi - u.rowLo + p_->blockQ - 1) / p_->blockQ);
    }

private:
    __aicore__ inline void LoadBatch()
    {
        if (b_ >= p_->batch) {
            blocks_ = 0;
            return;
        }
        qStart_ = b_ == 0 ? 0 : static_cast<uint64_t>(cumQ_.GetValue(b_ - 1));
        kvStart_ = b_ == 0 ? 0 : static_cast<uint64_t>(cumKv_.GetValue(b_ - 1));
        sq_ = cumQ_.GetValue(b_) - static_cast<int64_t>(qStart_);
        sk_ = cumKv_.GetValue(b_) - static_cast<int64_t>(kvStart_);
        blocks_ = static_cast<uint32_t>((sk_ + p_->blockKv - 1) / p_->blockKv) * p_->qSplit;  // (kv block, slice)
    }

    const BackwardParams *p_ = nullptr;
    AscendC::GlobalTensor<int64_t> cumQ_, cumKv_, prefix_;
    uint32_t b_ = 0, nkv_ = 0, blk_ = 0, blocks_ = 0;
    uint64_t qStart_ = 0, kvStart_ = 0;
    int64_t sq_ = 0, sk_ = 0;
};

// One step of a core: query head n, query rows [q0, q0 + rows) (batch-relative) against the
// kv block of unit u; `unitSeq` counts the units with steps this core has entered (the cube
// stages K/V when it changes); `shared`: another core takes other steps of this unit (the
// dK/dV sums of both are added).
struct BackwardStep {
    BackwardUnit u;
    uint32_t n;
    uint32_t q0;
    uint32_t rows;
    uint32_t unitSeq;
    bool shared;
};

// The steps of one core in order: from step coreStepStart[core] of unit coreUnitStart[core]
// up to (not including) step coreStepStart[core + 1] of unit coreUnitStart[core + 1]; in each
// unit the heads of the GQA group, in each head the query blocks. Cube and vector cores walk
// the same sequence.
class BackwardSteps {
public:
    __aicore__ inline void Init(const BackwardParams *p, const BackwardTensors &t, uint32_t core)
    {
        p_ = p;
        sched_.Init(p, t.seqQ, t.seqKv, t.prefix);
        unit_ = p->coreUnitStart[core];
        firstUnit_ = unit_;
        firstStep_ = p->coreStepStart[core];
        endUnit_ = p->coreUnitStart[core + 1];
        endStep_ = p->coreStepStart[core + 1];
        k_ = firstStep_;
        if (unit_ < p->unitCount) {
            sched_.Seek(unit_);
            Load();
        }
    }

    // Fills the next step; false when the core has no more.
    __aicore__ inline bool Next(BackwardStep &s)
    {
        for (;;) {
            if (unit_ > endUnit_ || (unit_ == endUnit_ && k_ >= endStep_)) {
                return false;
            }
            if (k_ < steps_) {
                break;
            }
            ++unit_;  // the next unit, from its first step
            if (unit_ > endUnit_ || (unit_ == endUnit_ && endStep_ == 0)) {
                return false;
            }
            sched_.Advance();
            Load();
            k_ = 0;
            entered_ = false;
        }
        if (!entered_) {
            entered_ = true;
            ++unitSeq_;
        }
        const uint32_t g = k_ / qBlocks_;
        const uint32_t qb = k_ % qBlocks_;
        s.u = u_;
        s.n = u_.nkv * p_->groupSize + g;
        const int64_t q0 = u_.rowLo + static_cast<int64_t>(qb) * p_->blockQ;
        const int64_t left = u_.rowHi - q0;
        s.q0 = static_cast<uint32_t>(q0);
        s.rows = left < p_->blockQ ? static_cast<uint32_t>(left) : p_->blockQ;
        s.unitSeq = unitSeq_;
        s.shared = (unit_ == firstUnit_ && firstStep_ > 0) || (unit_ == endUnit_ && endStep_ > 0);
        ++k_;
        return true;
    }

private:
    __aicore__ inline void Load()
    {
        sched_.Current(u_);
        qBlocks_ = sched_.QBlocks(u_);
        steps_ = qBlocks_ * p_->groupSize;
    }

    const BackwardParams *p_ = nullptr;
    BackwardSchedule sched_;
    BackwardUnit u_{};
    uint64_t unit_ = 0, endUnit_ = 0, firstUnit_ = 0;
    uint32_t firstStep_ = 0, endStep_ = 0;
    uint32_t qBlocks_ = 0, steps_ = 0, k_ = 0, unitSeq_ = 0;
    bool entered_ = false;
};

}  // namespace AttentionCore
