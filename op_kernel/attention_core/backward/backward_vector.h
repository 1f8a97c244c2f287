// Vector side (AIV) of the backward core, in three passes separated by SyncAll:
//   1. compute D = rowsum(dO o O) per (token, head), stored replicated 8 times ([T, N, 8],
//      the layout of softmax_max/sum) so a row-wise broadcast reads it as is, and under its
//      reads zero the fp32 dQ/dK/dV accumulators;
//   2. per step of the cube (backward_cube.h), on its half of the rows:
//      P = exp(scale.S - max) / sum (masked entries 0), dS = P o (dP - D),
//      cast both and hand them to the cube; then (accumKv 0) add the cube's dQ partial of
//      the step before (its dQ slot) into the dQ accumulator with atomic MTE3 copies;
//   3. cast the accumulators into dq/dk/dv (and dq_rope/dk_rope; input dtype), all but dv
//      times the scale (with accumKv and one query slice the cube writes dv itself and the
//      vector cores cast a unit's dk in the main loop once its flush is out, but for the
//      units two cores share).
// The class declares its parts; their member functions live in a file each (included at the
// end): backward_zeroing.h, backward_row_terms.h (pass 1), backward_step.h and
// backward_prefetch.h (pass 2), backward_dq_cast.h and backward_cast.h (the casts of 2 and 3).
#pragma once
#include "kernel_operator.h"
#include "backward_geometry.h"
#include "backward_layout.h"
#include "../forward/policies.h"
#include "../common/float_cast.h"
#include "../common/row_ops.h"
#include "../common/nz_handoff.h"
#include "backward_cube.h"  // the flag ids

namespace AttentionCore {

template <typename T> class BackwardVector {
public:
    __aicore__ inline void Init(const BackwardParams *p, AscendC::TPipe *pipe, const BackwardTensors &t)
    {
        p_ = p;
        GM_ADDR workspace = t.workspace;
        seqQ_ = t.seqQ;
        seqKv_ = t.seqKv;
        prefix_ = t.prefix;
        InitPolicies(t);
        dy_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dy));
        o_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.attentionIn));
        kv_[0].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.key));
        kv_[1].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.value));
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.query));
        max_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.softmaxMax));
        sum_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.softmaxSum));
        out_[0].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dq));
        out_[1].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dk));
        out_[2].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dv));
        acc_[0].SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDq));
        acc_[1].SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDk));
        acc_[2].SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDv));
        accLen_[0] = p->tq * p->numHeads * p->headDim;
        accLen_[1] = p->tkv * p->numKvHeads * p->headDim;
        accLen_[2] = accLen_[1];
        accCount_ = 3;
        if (p->ropeDim != 0) {  // accumulators 3, 4: dq_rope, dk_rope
            out_[3].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dqRope));
            out_[4].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dkRope));
            acc_[3].SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDqRope));
            acc_[4].SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDkRope));
            accLen_[3] = p->tq * p->numHeads * p->ropeDim;
            accLen_[4] = p->tkv * p->numKvHeads * p->ropeDim;
            accCount_ = 5;
        }
        drow_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDrow));
        if (p->hasSink != 0) {
            sink_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.sink));
            dsink_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.dsink));
            dsinkWs_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDsink));
        }
        vecId_ = AscendC::GetBlockIdx();
        core_ = vecId_ / 2;  // MIX 1:2: vector cores 2c and 2c+1 serve cube c
        sub_ = AscendC::GetSubBlockIdx();
        steps_.Init(p, t, core_);
        GM_ADDR slots = workspace + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + BackwardSlotArea(p, 1)));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + BackwardSlotArea(p, 2)));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + BackwardSlotArea(p, 2) + p->wsSlotT));
        wsDq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + BackwardSlotArea(p, 4)));

        // UB (backward_layout.h, the planner's BackwardUbBytes); the D-term pass
        // (ComputeRowTerms) needs one whole row of dO and O in S, dP, P and dS
        const BackwardVectorUb ub = BackwardVectorUbLayout(p->rowsPerVec, p->tileKv, p->headDimAlign, sizeof(T),
                                                           static_cast<uint32_t>(p->dsinkPitch), p->prefetchRows);
        rowCells_ = ub.rowCells;
        pipe->InitBuffer(sBuf_, ub.s);
        pipe->InitBuffer(dpBuf_, ub.dp);
        pipe->InitBuffer(tmpBuf_, ub.tmp);
        pipe->InitBuffer(maskBuf_, ub.mask);
        pipe->InitBuffer(pOutBuf_, ub.pOut);
        pipe->InitBuffer(dsOutBuf_, ub.dsOut);
        pipe->InitBuffer(statBuf_, ub.stats);
        if (p->hasPse != 0 && p->pseType >= 2) {
            InitAlibi(t, pipe, ub.alibi);
        }
        pipe->InitBuffer(sinkBuf_, ub.sink);  // partial row + 3 scratch lanes
        if (ub.prefetch != 0) {
            pipe->InitBuffer(prefBuf_, ub.prefetch);
        }
        s_ = sBuf_.Get<float>();
        dp_ = dpBuf_.Get<float>();
        tmp_ = tmpBuf_.Get<float>();
    }

    __aicore__ inline void Process()
    {
        ZeroKvUnits();
        ComputeRowTerms();
        if (p_->hasSink != 0) {
            SinkGradPartials();
        }
        AscendC::SyncAll<false>();
        // Step i's P/dS, then step i - 1's dQ partial: the cube writes step i + 1's partial into
        // that slot only after the P/dS of step i + 1 came back, i.e. after this add. With
        // accumKv the cube adds the dQ partials itself.
        // The row statistics of step i + 1 load into the other set while step i computes.
        // With the units' dK rows owned (OwnedKv), a unit's dK is cast into dk once its flush is
        // out (FlushedKeys).
        const bool addDq = p_->accumKv == 0;
        BackwardStep s, next, prev;
        uint32_t i = 0;
        // With dqGroupCast the dQ rows of the groups this core owns are cast in the loop, a pass
        // per step once the group's last dQ Fixpipe is out (DqGroupsDone), the rest after the
        // cube's last Fixpipes (its FLAG_BWD_SDP after the loop).
        if (p_->prefetchRows != 0) {
            ahead_.Init(p_, StepTensors(), core_);
        }
        const bool groupCast = p_->dqGroupCast != 0;
        castGroup_ = groupCast ? p_->dqCastLo[core_] : 0;
        const uint32_t castPass = DqCastPass(p_->groupSize * p_->headDim);
        tailRows_ = groupCast ? p_->dqTailRows[core_] : 0;
        tailChunk_ = sub_;
        for (bool more = steps_.Next(s); more; ++i) {
            more = steps_.Next(next);
            Step(s, i, more ? &next : nullptr);
            if (i != 0 && addDq) {
                AddQueryGrad(prev, (i - 1) % 2);
            }
            if (OwnedKv()) {
                if (!s.shared && (!more || next.unitSeq != s.unitSeq)) {
                    pending_[pendTail_++ % PENDING] = PendingKeys{KvOffset(s.u), s.u.cols, i};
                }
                FlushedKeys(i, false);
            }
            if (groupCast) {
                DqGroupsDone(s, more ? &next : nullptr, i);
                const uint32_t left = CastOwnedDq(castPass);
                if (tailRows_ != 0) {
                    TailRowsDone(s, more ? &next : nullptr, i);
                    CastTailDq(left, castPass);
                }
            }
            prev = s;
            s = next;
        }
        if (i != 0 && addDq) {
            AddQueryGrad(prev, (i - 1) % 2);
        }
        if (groupCast) {
            AscendC::CrossCoreWaitFlag(FLAG_BWD_SDP);  // the cube's last Fixpipes are out
            readyUpto_ = p_->dqCastHi[core_];
            CastOwnedDq(~0u);
            tailReady_ = tailRows_;
            CastTailDq(~0u, castPass);
            if (OwnedKv()) {  // the last units' flushes are out too
                FlushedKeys(i + p_->pipelined + 1, false);
            }
        }
        AscendC::PipeBarrier<PIPE_ALL>();  // the last atomic adds are done
        AscendC::SyncAll<false>();
        CastOut();
        if (p_->hasSink != 0 && vecId_ == 0) {
            SinkGradSum();
        }
    }

private:
    // This vector core's share [lo, hi) of `total` items.
    __aicore__ inline void Share(uint64_t total, uint64_t &lo, uint64_t &hi) const
    {
        const uint64_t parts = static_cast<uint64_t>(p_->usedCores) * 2;
        const uint64_t part = vecId_ < parts ? vecId_ : parts;  // a launch may have more cores
        lo = total * part / parts;
        hi = vecId_ < parts ? total * (part + 1) / parts : lo;
    }

    // accumKv with one query slice per kv block: the cube's flush writes every dK/dV row of a
    // unit alone (dV straight into dv), unless two cores share the unit's steps.
    __aicore__ inline bool OwnedKv() const { return p_->accumKv != 0 && p_->qSplit == 1; }

    __aicore__ inline uint64_t KvOffset(const BackwardUnit &u) const
    {
        return ((u.kvStart + static_cast<uint64_t>(u.k0)) * p_->numKvHeads + u.nkv) * p_->headDim;
    }

    // This vector core's rows of a step of `rows` rows: the first (rows + 1) / 2 on
    // sub-block 0, the rest on sub-block 1.
    __aicore__ inline void MyRows(uint32_t rows, uint32_t &rowOff, uint32_t &mine) const
    {
        const uint32_t first = (rows + 1) / 2;
        rowOff = sub_ == 0 ? 0 : first;
        mine = sub_ == 0 ? first : rows - first;
    }

    // The accumulators' zeroing (backward_zeroing.h).
    __aicore__ inline void ZeroKvUnits();
    __aicore__ inline void ZeroShare(const AscendC::LocalTensor<float> &zeros, uint32_t len, uint64_t upto);
    __aicore__ inline void UnflushedKvUnits();
    __aicore__ inline bool CutBetweenCores(uint64_t unit) const;

    // The D-term pass and dsink (backward_row_terms.h).
    __aicore__ inline void ComputeRowTerms();
    __aicore__ inline void SinkGradPartials();
    __aicore__ inline void SinkGradSum();

    // A step of the main loop (backward_step.h).
    __aicore__ inline void Step(const BackwardStep &s, uint32_t i, const BackwardStep *next);
    __aicore__ inline void InitPolicies(const BackwardTensors &t);
    __aicore__ inline void ApplyScore(const WorkUnit &wu, uint32_t row0, uint32_t rows, const BackwardUnit &u,
                                      int32_t count);
    __aicore__ inline void InitAlibi(const BackwardTensors &t, AscendC::TPipe *pipe, uint32_t bytes);
    __aicore__ inline int64_t StartIndex(const AscendC::GlobalTensor<int64_t> &gm, uint32_t count, uint32_t b) const;
    __aicore__ inline void AddAlibi(const WorkUnit &wu, uint32_t row0, uint32_t rows, const BackwardUnit &u);
    __aicore__ inline void LoadStats(const AscendC::LocalTensor<float> &dst, const AscendC::GlobalTensor<float> &src,
                                     uint64_t t, uint32_t n, uint32_t rows, bool tnd);
    static constexpr uint32_t STAT_MAX = 0, STAT_SUM = 1, STAT_D = 2;
    __aicore__ inline AscendC::LocalTensor<float> StatRows(uint32_t set, uint32_t kind);
    __aicore__ inline void LoadStepStats(const BackwardStep &s, uint32_t set);
    template <RowOp op>
    __aicore__ inline void RowOpTile(const AscendC::LocalTensor<float> &x, const AscendC::LocalTensor<float> &stat,
                                     uint32_t rows);
    __aicore__ inline AscendC::DataCopyParams SlotRows(uint32_t rows, uint32_t bytes, bool out) const;
    __aicore__ inline void AddQueryGrad(const BackwardStep &s, uint32_t slot);

    // The K/V prefetch (backward_prefetch.h).
    __aicore__ inline void PrefetchKv(uint32_t i);
    __aicore__ inline void PrefetchRows(const BackwardStep &s);
    __aicore__ inline BackwardTensors StepTensors() const;

    // The dQ casts of the groups (backward_dq_cast.h).
    __aicore__ inline void DqGroupsDone(const BackwardStep &s, const BackwardStep *next, uint32_t i);
    __aicore__ inline uint32_t DqCastPass(uint32_t width) const;
    __aicore__ inline uint32_t CastOwnedDq(uint32_t budget);
    __aicore__ inline void TailRowsDone(const BackwardStep &s, const BackwardStep *next, uint32_t i);
    __aicore__ inline void CastTailDq(uint32_t budget, uint32_t pass);
    __aicore__ inline void GroupTokens(uint64_t g, uint64_t &first, uint64_t &count);
    __aicore__ inline uint32_t CastCutDq(uint32_t k);

    // The casts into the gradients, the in-loop dK and the cast-out (backward_cast.h).
    __aicore__ inline uint32_t FlushedKeys(uint32_t i, bool all, uint32_t k = 0);
    __aicore__ inline static AscendC::DataCopyExtParams Rows(uint32_t rows, uint32_t width, uint64_t pitch,
                                                             uint32_t bytes, bool load);
    __aicore__ inline AscendC::DataCopyExtParams KvRows(uint32_t rows, uint32_t bytes, bool load = false) const;
    __aicore__ inline uint32_t CastFit(uint32_t width) const;
    __aicore__ inline void CastRows(uint32_t a, uint64_t off, uint32_t rows, uint32_t width, uint64_t pitch);
    __aicore__ inline void CastKvRows(uint32_t a, uint64_t off, uint32_t rows);
    __aicore__ inline void CastOut();
    __aicore__ inline void CastCutKv(uint32_t k);
    static constexpr int32_t EVT_CAST = BWD_EVT_CAST;  // + set (sync.h's table)
    static constexpr int32_t EVT_SDP = BWD_EVT_SDP;    // + 0 S, + 1 dP of a step (Step)
    __aicore__ inline void CastChunk(uint32_t k, uint32_t a, uint64_t off, uint32_t rows, uint32_t width,
                                     uint64_t pitch);

    const BackwardParams *p_ = nullptr;
    BackwardSteps steps_;
    MaskMod<MaskSparseMode> mask_;
    ScoreMod<ScorePse> score_;
    SoftmaxMod<SoftmaxDropout> drop_;
    uint32_t vecId_ = 0, core_ = 0, sub_ = 0;
    GM_ADDR seqQ_ = nullptr;  // for the unit walk of UnflushedKvUnits
    GM_ADDR seqKv_ = nullptr;
    GM_ADDR prefix_ = nullptr;
    AscendC::GlobalTensor<T> q_, dy_, o_, kv_[2];
    // The K/V prefetch's walk (PrefetchKv): the step after the last one it looked at, and the
    // unit of that one.
    static constexpr uint32_t PREFETCH_AHEAD = 6;
    BackwardSteps ahead_;
    uint32_t aheadAt_ = 0, aheadUnit_ = 0;
    AscendC::GlobalTensor<T> out_[5];  // dq, dk, dv, dq_rope, dk_rope
    AscendC::GlobalTensor<float> acc_[5];
    uint64_t accLen_[5] = {0, 0, 0, 0, 0};
    uint32_t accCount_ = 3;
    AscendC::GlobalTensor<float> max_, sum_, drow_, wsS_, wsDp_, wsDq_, sink_, dsink_, dsinkWs_;
    AscendC::GlobalTensor<T> wsP_, wsDs_;
    uint32_t rowCells_ = 0;  // elements of sBuf_, dpBuf_, pOutBuf_, dsOutBuf_
    // Units of this core whose dK waits for the flush (FlushedKeys): offset of the first dK
    // element, rows, last step. At most pipelined + 2 units are in flight (a unit has a step).
    struct PendingKeys {
        uint64_t off;
        uint32_t cols;
        uint32_t last;
    };
    static constexpr uint32_t PENDING = 8;
    PendingKeys pending_[PENDING] = {};
    uint32_t pendHead_ = 0, pendTail_ = 0;
    // dQ groups (DqGroupsDone, CastOwnedDq): the groups below `upto` are done with at step
    // `last`; those below readyUpto_ are final; castGroup_ and castTok_ (of this vector core's
    // half of its tokens) are the cast's position. At most pipelined + 2 entries wait.
    struct GroupsDone {
        uint64_t upto;
        uint32_t last;
    };
    GroupsDone groupsDone_[PENDING] = {};
    uint32_t groupsHead_ = 0, groupsTail_ = 0;
    uint64_t readyUpto_ = 0, castGroup_ = 0, castTok_ = 0;
    // The tail group's rows (TailRowsDone, CastTailDq): those below tailRows_ this core casts,
    // below tailReady_ final; the cast is at row tailAt_ of chunk tailChunk_.
    GroupsDone tailDone_[PENDING] = {};
    uint32_t tailHead_ = 0, tailTail_ = 0;
    uint64_t tailRows_ = 0, tailReady_ = 0, tailChunk_ = 0, tailAt_ = 0;
    uint64_t tokBatch_ = ~0ull, tokFirst_ = 0, tokCount_ = 0;  // GroupTokens' last batch
    uint64_t zeroTotal_ = 0, zeroDone_ = 0, zeroAt_ = 0;       // ZeroShare's progress: elements, position
    uint32_t zeroAcc_ = 0;                                     // in accumulator zeroAcc_
    AscendC::TBuf<AscendC::TPosition::VECCALC> sBuf_, dpBuf_, tmpBuf_, maskBuf_, pOutBuf_, dsOutBuf_, statBuf_,
        sinkBuf_, idxBuf_, prefBuf_;
    AscendC::GlobalTensor<float> slopes_;
    AscendC::GlobalTensor<int64_t> qStart_, kvStart_;
    AscendC::LocalTensor<float> s_, dp_, tmp_;
};

}  // namespace AttentionCore

// The member functions, a file per part of the work.
#include "backward_zeroing.h"
#include "backward_row_terms.h"
#include "backward_step.h"
#include "backward_prefetch.h"
#include "backward_dq_cast.h"
#include "backward_cast.h"
