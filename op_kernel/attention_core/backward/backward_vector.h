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
                CastOwnedDq(castPass);
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

    // With accumKv and one query slice per kv block the cube writes every dK/dV row of a unit
    // with steps, plain (dV straight into dv, backward_cube.h; dK cast in the main loop,
    // FlushedKeys): only the units without a visible query row (zero dk/dv rows) and those cut
    // between two cores (both add into zeroed accumulators) need a pass (UnflushedKvUnits).
    // The other accumulators are zeroed under the D-term pass (ZeroShare).
    __aicore__ inline void ZeroKvUnits()
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
        UnflushedKvUnits(false);
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // Zeros this core's shares of the accumulators (all but dK/dV with OwnedKv) from `zeros`
    // (`len` floats) until `upto` of their zeroTotal_ elements are written.
    __aicore__ inline void ZeroShare(const AscendC::LocalTensor<float> &zeros, uint32_t len, uint64_t upto)
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

    // accumKv with one query slice per kv block: the cube's flush writes every dK/dV row of a
    // unit alone (dV straight into dv), unless two cores share the unit's steps.
    __aicore__ inline bool OwnedKv() const { return p_->accumKv != 0 && p_->qSplit == 1; }

    __aicore__ inline uint64_t KvOffset(const BackwardUnit &u) const
    {
        return ((u.kvStart + static_cast<uint64_t>(u.k0)) * p_->numKvHeads + u.nkv) * p_->headDim;
    }

    // The units in this core's share whose dK/dV rows the cube's flush does not write alone:
    // those no query row sees (their dk and dv rows := 0) and those whose steps two cores share
    // (dK and dV accumulator rows := 0, both cores add; `cast`: after the main loop, their dk
    // and dv rows from the accumulators). s_ holds zeros when not `cast`.
    __aicore__ inline void UnflushedKvUnits(bool cast)
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
            if ((!empty && !CutBetweenCores(unit)) || (cast && empty)) {
                continue;
            }
            const uint64_t off = KvOffset(u);
            if (cast) {
                CastKvRows(1, off, u.cols);
                CastKvRows(2, off, u.cols);
                continue;
            }
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

    // dK of this core's units whose flush is out, into dk: each vector core its half of the
    // unit's rows. In the main loop (`all` false) after step i, the units whose last step is at
    // most i - pipelined - 1 (the cube issues the S/dP of step i only after the gradients, and
    // so the flush, of that step: the Fixpipe runs them in order, backward_cube.h); after the
    // final barrier (`all`) the rest.
    __aicore__ inline void FlushedKeys(uint32_t i, bool all)
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
    __aicore__ inline static AscendC::DataCopyExtParams Rows(uint32_t rows, uint32_t width, uint64_t pitch,
                                                             uint32_t bytes, bool load)
    {
        const uint32_t gap = static_cast<uint32_t>((pitch - width) * bytes);
        return AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), width * bytes, load ? gap : 0, load ? 0 : gap,
                                          0);
    }

    // `rows` dK/dV rows of headDim elements, numKvHeads rows apart in GM.
    __aicore__ inline AscendC::DataCopyExtParams KvRows(uint32_t rows, uint32_t bytes, bool load = false) const
    {
        return Rows(rows, p_->headDim, static_cast<uint64_t>(p_->numKvHeads) * p_->headDim, bytes, load);
    }

    // Step i (s) done: where the next step is in a later group, the groups before it are done
    // with at step i, and they are final once the S/dP of step i + pipelined + 1 came (those
    // follow step i's dQ Fixpipes on the Fixpipe, backward_cube.h); groups before the first
    // step's have no steps in this core, none in any other (the core owns them).
    __aicore__ inline void DqGroupsDone(const BackwardStep &s, const BackwardStep *next, uint32_t i)
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
    __aicore__ inline uint32_t DqCastPass(uint32_t width) const
    {
        const uint32_t fit = CastFit(width) / 2;
        return fit != 0 ? fit : 1;
    }

    // Rows of `width` elements, `pitch` apart, that one pass of CastRows holds.
    __aicore__ inline uint32_t CastFit(uint32_t width) const
    {
        const uint32_t wa = AlignUp(width, 8);  // floats per UB row
        return (wa * sizeof(T)) % 32 == 0 ? rowCells_ / wa : 1;
    }

    // Output rows [off, + rows) of accumulator a (all but dV times the scale) from the
    // accumulator, rows of `width` elements `pitch` apart, through s_ and tmp_: CastFit rows
    // per pass. Between steps of the main loop s_ and tmp_ are free (the next step loads S into
    // s_ after this V work, and casts into tmp_ after this store).
    __aicore__ inline void CastRows(uint32_t a, uint64_t off, uint32_t rows, uint32_t width, uint64_t pitch)
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

    __aicore__ inline void CastKvRows(uint32_t a, uint64_t off, uint32_t rows)
    {
        CastRows(a, off, rows, p_->headDim, static_cast<uint64_t>(p_->numKvHeads) * p_->headDim);
    }

    // dQ of the groups this core owns (PlanDqGroupCast): group g = b * numKvHeads + kv head,
    // its rows the batch's tokens, G x headDim elements each, numHeads x headDim apart; each
    // vector core casts its half of the tokens. `budget`: at most this many rows now (in the
    // main loop, a pass per step; after it, all). Groups below readyUpto_ have had their last
    // dQ Fixpipe.
    __aicore__ inline void CastOwnedDq(uint32_t budget)
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
    }

    // First token and token count of group g's batch (the last batch's kept: the groups of a
    // batch come one after another, and a scalar GM read costs ~100 cycles).
    __aicore__ inline void GroupTokens(uint64_t g, uint64_t &first, uint64_t &count)
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
    // PlanDqGroupCast), their tokens shared over all vector cores, in the cast-out's chunks
    // from chunk k on.
    __aicore__ inline void CastCutDq(uint32_t k)
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
                    if (pass == 1) {
                        const uint64_t a = lo > at ? lo - at : 0;
                        const uint64_t e = hi - at < count ? hi - at : count;
                        for (uint64_t r = a; hi > at && r < e; r += fit) {
                            const uint64_t off = ((first + r) * p_->numHeads +
                                                  static_cast<uint64_t>(g % p_->numKvHeads) * p_->groupSize) *
                                                 p_->headDim;
                            CastChunk(k++, 0, off, static_cast<uint32_t>(e - r < fit ? e - r : fit), width, pitch);
                        }
                    }
                    at += count;
                }
            }
            total = at;
        }
    }

    __aicore__ inline bool CutBetweenCores(uint64_t unit) const
    {
        for (uint32_t c = 1; c < p_->usedCores; ++c) {
            if (p_->coreUnitStart[c] == unit && p_->coreStepStart[c] != 0) {
                return true;
            }
        }
        return false;
    }

    // D[t, n] = sum_d dO[t, n, d] * O[t, n, d] for this core's share of the (t, n) rows, in
    // chunks of rows whose dO and O come in with one copy each (the pass reads HBM and a
    // copy's start, ~200 cycles, cost more than its 8 KiB of 32-row chunks). Two staging sets
    // (the P-out and dS-out buffers; the halves of S) take chunks in turn, each guarded by its
    // own events, so the next chunk's loads and the last one's D rows run under this one's
    // vector work, which goes through the fp32 scratch in sub-chunks (cast, product, row sum).
    __aicore__ inline void ComputeRowTerms()
    {
        constexpr int32_t EVT = BWD_EVT_CAST;  // + set (sync.h's table; the cast-out's ids)
        const uint32_t d = p_->headDim;
        const uint32_t dp = p_->headDimAlign;
        const uint32_t cells = p_->rowsPerVec * p_->tileKv;
        // rows per chunk: what a staging set holds (half of S holds rowCells x 2 bytes), at
        // most 255 (a repeat count) and what the mask buffer holds of two sets' D rows
        uint32_t chunk = rowCells_ * (sizeof(T) < 2 ? sizeof(T) : 2) / sizeof(T) / dp;
        chunk = chunk > 255 ? 255 : chunk;
        chunk = chunk > cells / 64 ? cells / 64 : chunk;
        const uint32_t sub = rowCells_ / 2 / dp;  // rows per sub-chunk: two fp32 rows in the scratch
        uint64_t lo, hi;
        Share(p_->tq * p_->numHeads, lo, hi);
        const uint32_t half = rowCells_ * 2 / sizeof(T);  // T elements in half of S
        const AscendC::LocalTensor<T> sT = sBuf_.Get<T>();
        const AscendC::LocalTensor<T> dyT[2] = {pOutBuf_.Get<T>(), sT};
        const AscendC::LocalTensor<T> oT[2] = {dsOutBuf_.Get<T>(), sT[half]};
        const AscendC::LocalTensor<float> prod = tmp_, other = tmp_[rowCells_ / 2];
        const AscendC::LocalTensor<float> rowD = statBuf_.Get<float>();  // one float per row
        // a Brcb writes whole groups of 8 rows: set 1 starts past set 0's last group
        const AscendC::LocalTensor<float> rows8All = maskBuf_.Get<float>();
        const AscendC::LocalTensor<float> rows8[2] = {rows8All, rows8All[AlignUp(chunk, 8) * 8]};
        // The accumulators' zeros come from dP; their writes (MTE3, to L2) go out between the
        // D rows' stores, a share after each chunk, under the dO and O reads (MTE2, from HBM).
        const uint32_t zerosLen = rowCells_ / 8 * 8;
        AscendC::Duplicate(dp_, 0.0f, static_cast<int32_t>(zerosLen));
        PipeSync<AscendC::HardEvent::V_MTE3>();
        const uint64_t chunks = (hi - lo + chunk - 1) / chunk;
        const AscendC::DataCopyPadExtParams<T> zeroPad(true, 0, static_cast<uint8_t>(dp - d), 0);
        for (uint32_t b = 0; b < 2; ++b) {
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT + b);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT + b);
        }
        const uint8_t pitch = static_cast<uint8_t>(dp / 8);
        uint32_t k = 0;
        for (uint64_t r0 = lo; r0 < hi; r0 += chunk, ++k) {
            const uint32_t b = k % 2;
            const uint32_t rows = hi - r0 < chunk ? static_cast<uint32_t>(hi - r0) : chunk;
            const AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), d * sizeof(T), 0, 0, 0);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT + b);  // the casts read set b
            AscendC::DataCopyPad(dyT[b], dy_[r0 * d], copy, zeroPad);
            AscendC::DataCopyPad(oT[b], o_[r0 * d], copy, zeroPad);
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT + b);
            for (uint32_t s0 = 0; s0 < rows; s0 += sub) {
                const uint32_t n = rows - s0 < sub ? rows - s0 : sub;
                const int32_t count = static_cast<int32_t>(n * dp);
                CastToFloat(prod, dyT[b][s0 * dp], count);
                CastToFloat(other, oT[b][s0 * dp], count);
                AscendC::PipeBarrier<PIPE_V>();
                AscendC::Mul(prod, prod, other, count);
                AscendC::PipeBarrier<PIPE_V>();
                for (uint32_t c0 = 64; c0 < dp; c0 += 64) {
                    const uint32_t lanes = dp - c0 < 64 ? dp - c0 : 64;
                    AscendC::Add(prod, prod, prod[c0], static_cast<uint64_t>(lanes), static_cast<uint8_t>(n),
                                 AscendC::BinaryRepeatParams(1, 1, 1, pitch, pitch, pitch));
                    AscendC::PipeBarrier<PIPE_V>();
                }
                AscendC::WholeReduceSum(rowD[s0], prod, static_cast<int32_t>(dp < 64 ? dp : 64),
                                        static_cast<int32_t>(n), 1, 1, pitch);
                AscendC::PipeBarrier<PIPE_V>();
            }
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT + b);  // set b's last D rows are out
            AscendC::Brcb(rows8[b], rowD, static_cast<uint8_t>((rows + 7) / 8), AscendC::BrcbRepeatParams(1, 8));
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT + b);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT + b);
            AscendC::DataCopy(drow_[r0 * 8], rows8[b], rows * 8);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT + b);
            ZeroShare(dp_, zerosLen, zeroTotal_ * (k + 1) / chunks);
        }
        ZeroShare(dp_, zerosLen, zeroTotal_);
        for (uint32_t b = 0; b < 2; ++b) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT + b);
        }
        PipeSync<AscendC::HardEvent::MTE3_V>();  // the last zeros are out before dP is reused
    }

    // dsink partial of this core: -sum over its (t, n) rows of exp(sink[n] - max) / sum * D,
    // per head (scalar walk; one row at a time, the row count is T * N / cores).
    __aicore__ inline void SinkGradPartials()
    {
        const uint32_t heads = p_->numHeads;
        const AscendC::LocalTensor<float> part = sinkBuf_.Get<float>();
        const AscendC::LocalTensor<float> row = part[p_->dsinkPitch];
        AscendC::Duplicate(part, 0.0f, static_cast<int32_t>(p_->dsinkPitch));
        uint64_t lo, hi;
        Share(p_->tq * heads, lo, hi);
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint64_t f = lo; f < hi; ++f) {
            const uint32_t n = static_cast<uint32_t>(f % heads);
            const uint64_t t = f / heads;
            const uint64_t offTnd = f * 8, offNt = (n * p_->tq + t) * 8;
            row.SetValue(0, sink_.GetValue(n) - max_.GetValue((p_->statsTnd & 1u) != 0 ? offTnd : offNt));
            row.SetValue(8, sum_.GetValue((p_->statsTnd & 2u) != 0 ? offTnd : offNt));
            row.SetValue(16, drow_.GetValue(f * 8));
            PipeSync<AscendC::HardEvent::S_V>();
            AscendC::Exp(row, row, 1);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Div(row, row, row[8], 1);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Mul(row, row, row[16], 1);
            PipeSync<AscendC::HardEvent::V_S>();
            part.SetValue(n, part.GetValue(n) - row.GetValue(0));
        }
        PipeSync<AscendC::HardEvent::S_MTE3>();
        AscendC::DataCopy(dsinkWs_[vecId_ * p_->dsinkPitch], part, static_cast<uint32_t>(p_->dsinkPitch));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // dsink = sum of the vector cores' partials (one core, after the barrier).
    __aicore__ inline void SinkGradSum()
    {
        const uint32_t pitch = static_cast<uint32_t>(p_->dsinkPitch);
        const AscendC::LocalTensor<float> total = sinkBuf_.Get<float>();
        const AscendC::LocalTensor<float> part = total[pitch];
        AscendC::Duplicate(total, 0.0f, static_cast<int32_t>(pitch));
        for (uint32_t v = 0; v < p_->usedCores * 2; ++v) {
            PipeSync<AscendC::HardEvent::V_MTE2>();
            AscendC::DataCopy(part, dsinkWs_[v * pitch], pitch);
            PipeSync<AscendC::HardEvent::MTE2_V>();
            AscendC::Add(total, total, part, static_cast<int32_t>(pitch));
            AscendC::PipeBarrier<PIPE_V>();
        }
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyPad(dsink_, total, AscendC::DataCopyExtParams(1, p_->numHeads * 4, 0, 0, 0));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // The forward's element-wise policies, on their own Params embedded in BackwardParams
    // (`score`, `mask`, `softmax`) and their own Tensors.
    __aicore__ inline void InitPolicies(const BackwardTensors &t)
    {
        struct {
            PseTensors score;
            SparseMaskTensors mask;
            DropoutTensors softmax;
        } ft;
        ft.score.pse = t.pse;
        ft.mask.mask = t.mask;
        ft.mask.prefix = t.prefix;
        ft.softmax.dropMask = t.dropMask;
        ft.softmax.cumSeqQ = t.seqQ;
        ft.softmax.cumSeqKv = t.seqKv;
        mask_.Init(*p_, ft);
        score_.Init(*p_, ft);
        drop_.Init(*p_, ft);
    }

    // S = scale.S plus the pse of its type (see BackwardParams).
    __aicore__ inline void ApplyScore(const WorkUnit &wu, uint32_t row0, uint32_t rows, const BackwardUnit &u,
                                      int32_t count)
    {
        if (p_->hasPse != 0 && p_->pseType != 1) {
            AscendC::Muls(s_, s_, p_->scaleValue, count);
            AscendC::PipeBarrier<PIPE_V>();
        }
        if (p_->hasPse != 0 && p_->pseType >= 2) {
            AddAlibi(wu, row0, rows, u);
            return;
        }
        // Type 1 adds the pse before the scale; type 0 (scaled above) adds it with scale 1.
        score_.Apply(s_, tmp_, pOutBuf_.Get<T>(), wu, row0, rows, u.k0, u.cols, p_->tileKv);
    }

    __aicore__ inline void InitAlibi(const BackwardTensors &t, AscendC::TPipe *pipe, uint32_t bytes)
    {
        slopes_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.pse));
        qStart_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.qStartIdx));
        kvStart_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.kvStartIdx));
        pipe->InitBuffer(idxBuf_, bytes);
        const AscendC::LocalTensor<float> idx = idxBuf_.Get<float>();
        for (uint32_t i = 0; i < p_->tileKv; ++i) {
            idx.SetValue(i, static_cast<float>(i));
        }
        PipeSync<AscendC::HardEvent::S_V>();
    }

    __aicore__ inline int64_t StartIndex(const AscendC::GlobalTensor<int64_t> &gm, uint32_t count, uint32_t b) const
    {
        return count == 0 ? 0 : gm.GetValue(count == 1 ? 0 : b);
    }

    // S[r][:] -= slope * |c - r - (Skv - Sq) - qStart + kvStart| (sqrt for type 3), per row on
    // the key-index vector [0, tileKv).
    __aicore__ inline void AddAlibi(const WorkUnit &wu, uint32_t row0, uint32_t rows, const BackwardUnit &u)
    {
        const uint32_t c = p_->tileKv;
        const float slope = slopes_.GetValue(wu.b * p_->slopeStrideB + wu.n);
        const int64_t shift = u.k0 - (u.sk - u.sq) - StartIndex(qStart_, p_->qStartCount, wu.b) +
                              StartIndex(kvStart_, p_->kvStartCount, wu.b);
        const AscendC::LocalTensor<float> idx = idxBuf_.Get<float>();
        for (uint32_t r = 0; r < rows; ++r) {
            const AscendC::LocalTensor<float> line = tmp_[r * c];
            AscendC::Adds(line, idx, static_cast<float>(shift - static_cast<int64_t>(row0 + r)), c);
        }
        const int32_t count = static_cast<int32_t>(rows * c);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Abs(tmp_, tmp_, count);
        AscendC::PipeBarrier<PIPE_V>();
        if (p_->pseType == 3) {
            AscendC::Sqrt(tmp_, tmp_, count);
            AscendC::PipeBarrier<PIPE_V>();
        }
        AscendC::Muls(tmp_, tmp_, -slope, count);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Add(s_, s_, tmp_, count);
        AscendC::PipeBarrier<PIPE_V>();
    }

    // `rows` 8-float stat rows of head n from token t: [T, N, 8] or [N, T, 8].
    __aicore__ inline void LoadStats(const AscendC::LocalTensor<float> &dst, const AscendC::GlobalTensor<float> &src,
                                     uint64_t t, uint32_t n, uint32_t rows, bool tnd)
    {
        const uint64_t offset = tnd ? (t * p_->numHeads + n) * 8 : (n * p_->tq + t) * 8;
        const uint32_t gap = tnd ? (p_->numHeads - 1) * 32 : 0;
        AscendC::DataCopyPad(dst, src[offset], AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), 32, gap, 0, 0),
                             AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0));
    }

    // Statistics set `set` (0/1), row kind `kind`: rowsPerVec rows of 8 replicated floats.
    static constexpr uint32_t STAT_MAX = 0, STAT_SUM = 1, STAT_D = 2;
    __aicore__ inline AscendC::LocalTensor<float> StatRows(uint32_t set, uint32_t kind)
    {
        return statBuf_.Get<float>()[(set * 3 + kind) * p_->rowsPerVec * 8];
    }

    // This vector core's rows of a step of `rows` rows: the first (rows + 1) / 2 on
    // sub-block 0, the rest on sub-block 1.
    __aicore__ inline void MyRows(uint32_t rows, uint32_t &rowOff, uint32_t &mine) const
    {
        const uint32_t first = (rows + 1) / 2;
        rowOff = sub_ == 0 ? 0 : first;
        mine = sub_ == 0 ? first : rows - first;
    }

    // softmax max, sum and D of this core's rows of step s into statistics set `set`.
    __aicore__ inline void LoadStepStats(const BackwardStep &s, uint32_t set)
    {
        uint32_t rowOff, mine;
        MyRows(s.rows, rowOff, mine);
        if (mine == 0) {
            return;
        }
        const uint64_t t = s.u.qStart + s.q0 + rowOff;
        LoadStats(StatRows(set, STAT_MAX), max_, t, s.n, mine, (p_->statsTnd & 1u) != 0);
        LoadStats(StatRows(set, STAT_SUM), sum_, t, s.n, mine, (p_->statsTnd & 2u) != 0);
        LoadStats(StatRows(set, STAT_D), drow_, t, s.n, mine, true);
    }

    // x[r][:] op= stat[r] (8 replicated floats per row) over the tileKv columns.
    template <RowOp op>
    __aicore__ inline void RowOpTile(const AscendC::LocalTensor<float> &x, const AscendC::LocalTensor<float> &stat,
                                     uint32_t rows)
    {
        RowBroadcast<op>(x, stat, rows, p_->tileKv, p_->tileKv);
    }

    // P and dS of step s, the core's step i (S/dP slot i % slots), from its row statistics in
    // set i % 2 (loaded here for the first step, else by the step before); then the next
    // step's statistics go into the other set while this step computes (its V work there
    // ended before this step's loads), and so do the K/V prefetch reads.
    __aicore__ inline void Step(const BackwardStep &s, uint32_t i, const BackwardStep *next)
    {
        const uint32_t slot = i % p_->slots, set = i % 2;
        const bool load = i == 0;
        const BackwardUnit &u = s.u;
        const uint32_t n = s.n, q0 = s.q0, rows = s.rows;
        const uint64_t f32Slot = slot * (p_->wsSlotF32 / 4);
        const uint64_t tSlot = BackwardPdsSlot(p_, slot, sizeof(T));
        uint32_t rowOff, mine;
        MyRows(rows, rowOff, mine);
        AscendC::CrossCoreWaitFlag(FLAG_BWD_SDP);
        PipeSync<AscendC::HardEvent::V_MTE2>();
        if (mine != 0) {
            const uint32_t c = p_->tileKv;
            const uint32_t bk = p_->blockKv;
            const int32_t count = static_cast<int32_t>(mine * c);
            AscendC::DataCopy(s_, wsS_[f32Slot + rowOff * bk], SlotRows(mine, 4, false));
            AscendC::DataCopy(dp_, wsDp_[f32Slot + rowOff * bk], SlotRows(mine, 4, false));
            if (load) {
                LoadStepStats(s, set);
            }
            PipeSync<AscendC::HardEvent::MTE2_V>();
            if (next != nullptr) {
                LoadStepStats(*next, set ^ 1u);
            }
            PrefetchKv(i);
            PipeSync<AscendC::HardEvent::MTE3_V>();  // the previous P/dS stores left the UB
            const AscendC::LocalTensor<float> rowMax = StatRows(set, STAT_MAX);
            const AscendC::LocalTensor<float> rowSum = StatRows(set, STAT_SUM);
            const AscendC::LocalTensor<float> rowD = StatRows(set, STAT_D);

            // P = exp(scale.(S + pse) - max) / sum; the mask turns excluded entries (and the
            // padding columns) into -1e30 before exp, so they, and rows without a visible key,
            // are 0.
            WorkUnit wu;
            wu.b = u.b;
            wu.n = n;
            wu.q0 = q0;
            wu.rows = rows;
            wu.qValid = rows;
            wu.kvBegin = u.k0;
            wu.kvEnd = u.k0 + u.cols;
            wu.qBase = u.qStart;
            wu.kvBase = u.kvStart;
            wu.seqQ = u.sq;
            wu.seqKv = u.sk;
            const uint32_t row0 = q0 + rowOff;
            ApplyScore(wu, row0, mine, u, count);
            RowOpTile<RowOp::Sub>(s_, rowMax, mine);
            // The tile's padding columns [cols, tileKv) go in one pass over all rows; the band
            // then sees the whole tile, so only rows the band cuts take a pass of their own
            // (with cols valid it would kill the padding row by row). A mask tensor is read for
            // the valid columns only. The mask's half scratch: the P-out buffer, written only
            // after the mask.
            const bool tensorMask = p_->mask.hasMask != 0 && p_->mask.sparseMode <= SPARSE_ALL_MASK;
            if (!tensorMask && u.cols < c) {
                MaskMod<MaskTensorBand>::KillColumns(s_, u.cols, c, mine, c);
            }
            mask_.Apply(s_, tmp_, maskBuf_.Get<uint8_t>(), pOutBuf_.Get<half>(), wu, row0, mine, u.k0,
                        tensorMask ? u.cols : c, c);
            AscendC::Exp(s_, s_, count);
            AscendC::PipeBarrier<PIPE_V>();
            RowOpTile<RowOp::Div>(s_, rowSum, mine);

            // dS = P o (keep.dP / keepProb - D); dV takes the dropped P (keep.P / keepProb).
            // The scale of dQ = scale.dS.K and dK = scale.dS^T.Q is applied in fp32 by the
            // cast-out pass (scaling dS before its rounding would push small values into fp16
            // subnormals).
            drop_.AfterExp(dp_, maskBuf_.Get<uint8_t>(), wu, row0, mine, u.k0, u.cols, c);
            RowOpTile<RowOp::Sub>(dp_, rowD, mine);
            AscendC::Mul(dp_, dp_, s_, count);
            AscendC::PipeBarrier<PIPE_V>();
            drop_.AfterExp(s_, maskBuf_.Get<uint8_t>(), wu, row0, mine, u.k0, u.cols, c);

            const AscendC::LocalTensor<T> pOut = pOutBuf_.Get<T>();
            const AscendC::LocalTensor<T> dsOut = dsOutBuf_.Get<T>();
            if constexpr (NzHandoff<T>::ENABLED) {  // P and dS in the cube's Nz order (nz_handoff.h)
                const AscendC::LocalTensor<T> nd = tmpBuf_.Get<T>();
                CastFromFloat(nd, s_, count);
                CastFromFloat(nd[count], dp_, count);
                AscendC::PipeBarrier<PIPE_V>();
                NzHandoff<T>::Arrange(pOut, nd, mine, bk, c);  // the slot's blockKv of the tile's tileKv columns
                NzHandoff<T>::Arrange(dsOut, nd[count], mine, bk, c);
                PipeSync<AscendC::HardEvent::V_MTE3>();
                NzHandoff<T>::Store(wsP_[tSlot], pOut, rowOff, mine, bk, p_->blockQ);
                NzHandoff<T>::Store(wsDs_[tSlot], dsOut, rowOff, mine, bk, p_->blockQ);
            } else {
                CastFromFloat(pOut, s_, count);
                CastFromFloat(dsOut, dp_, count);
                PipeSync<AscendC::HardEvent::V_MTE3>();
                AscendC::DataCopy(wsP_[tSlot + rowOff * bk], pOut, SlotRows(mine, sizeof(T), true));
                AscendC::DataCopy(wsDs_[tSlot + rowOff * bk], dsOut, SlotRows(mine, sizeof(T), true));
            }
        } else {
            if (next != nullptr) {
                LoadStepStats(*next, set ^ 1u);
            }
            PrefetchKv(i);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FlagBwdGrad(slot));
    }

    // The cube stages a unit's K and V with Nd2Nz copies when its first step is staged, in
    // front of the P/dS load its dQ Mmads wait for; a unit's first touch of K/V reads HBM (32
    // B/cycle against 110 from L2) and the cube's MTE2 is ~90 % busy, so each unit start
    // stalled its Fixpipe. At step i the vector cores read K (sub-block 0) and V (sub-block 1)
    // of every unit that starts by step i + PREFETCH_AHEAD into UB, which brings them into L2
    // for the cube's copies, and drop them. The units of the first tileSets steps are staged
    // before the loop. A hint only: nothing waits for these reads.
    __aicore__ inline void PrefetchKv(uint32_t i)
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
            if (s.unitSeq == aheadUnit_) {
                continue;
            }
            aheadUnit_ = s.unitSeq;
            if (aheadAt_ >= p_->tileSets) {
                const uint32_t d = p_->headDim;
                const uint32_t gap = (p_->numKvHeads - 1) * d * sizeof(T);
                AscendC::DataCopyPad(
                    prefBuf_.Get<T>(), kv_[sub_][KvOffset(s.u)],
                    AscendC::DataCopyExtParams(static_cast<uint16_t>(s.u.cols), d * sizeof(T), gap, 0, 0),
                    AscendC::DataCopyPadExtParams<T>(false, 0, 0, 0));
            }
        }
    }

    // The walk's tensors (BackwardSteps reads the sequence lengths and prefix).
    __aicore__ inline BackwardTensors StepTensors() const
    {
        BackwardTensors t{};
        t.seqQ = seqQ_;
        t.seqKv = seqKv_;
        t.prefix = prefix_;
        return t;
    }

    // One copy of `rows` slot rows (blockKv apart in GM) <-> UB rows of tileKv columns, for
    // elements of `bytes` bytes (blockKv a multiple of 16, so a row is whole 32-byte blocks in
    // both dtypes; the UB side skips the tileKv - blockKv padding columns).
    __aicore__ inline AscendC::DataCopyParams SlotRows(uint32_t rows, uint32_t bytes, bool out) const
    {
        const uint16_t len = static_cast<uint16_t>(p_->blockKv * bytes / 32);
        const uint16_t gap = static_cast<uint16_t>((p_->tileKv - p_->blockKv) * bytes / 32);
        return AscendC::DataCopyParams(static_cast<uint16_t>(rows), len, out ? gap : 0, out ? 0 : gap);
    }

    // dQ rows of this core's half of step s += the cube's dQ partial in dQ slot `slot`
    // (rows x dqPitch fp32), in passes of as many rows as the scratch tmp_ holds (or, for a
    // head dim wider than tmp_, row by row through s_).
    __aicore__ inline void AddQueryGrad(const BackwardStep &s, uint32_t slot)
    {
        AscendC::CrossCoreWaitFlag(FLAG_BWD_DQ);
        const uint32_t first = (s.rows + 1) / 2;
        const uint32_t rowOff = sub_ == 0 ? 0 : first;
        const uint32_t mine = sub_ == 0 ? first : s.rows - first;
        if (mine == 0) {
            return;
        }
        const uint32_t d = p_->headDim;
        const uint32_t pitch = p_->dqPitch;
        const uint32_t cells = p_->rowsPerVec * p_->tileKv;
        const bool wide = pitch > cells;
        const AscendC::LocalTensor<float> buf = wide ? s_ : tmp_;
        const uint32_t pass = wide ? 1 : cells / pitch;
        const uint64_t part = slot * (p_->wsDqSlot / 4) + static_cast<uint64_t>(rowOff) * pitch;
        const uint64_t acc = ((s.u.qStart + s.q0 + rowOff) * p_->numHeads + s.n) * d;
        const uint64_t accPitch = static_cast<uint64_t>(p_->numHeads) * d;
        PipeSync<AscendC::HardEvent::V_MTE2>();     // the step's vector work on the buffer is done
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // and the last add out of it
        for (uint32_t r0 = 0; r0 < mine; r0 += pass) {
            const uint32_t rows = mine - r0 < pass ? mine - r0 : pass;
            if (r0 != 0) {
                PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // the previous pass left the buffer
            }
            AscendC::DataCopy(buf, wsDq_[part + static_cast<uint64_t>(r0) * pitch], rows * pitch);
            PipeSync<AscendC::HardEvent::MTE2_MTE3>();
            AscendC::SetAtomicAdd<float>();
            AscendC::DataCopyPad(acc_[0][acc + r0 * accPitch], buf,
                                 AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), d * 4, 0,
                                                            static_cast<uint32_t>((accPitch - d) * 4), 0));
            AscendC::SetAtomicNone();
        }
        if (wide) {
            PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // the next step loads S into s_
        }
    }

    // dq/dk/dv (input dtype) from the fp32 accumulators, flat, this core's share. Two buffer
    // sets (s_ and the P-out buffer, dp_ and the dS-out buffer) take chunks in turn, each
    // guarded by its own events, so the next chunk's load and the last one's store run under
    // this one's cast (one set was MTE2, V and MTE3 in series).
    __aicore__ inline void CastOut()
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
    static constexpr int32_t EVT_CAST = BWD_EVT_CAST;  // + set (sync.h's table)
    __aicore__ inline void CastChunk(uint32_t k, uint32_t a, uint64_t off, uint32_t rows, uint32_t width,
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

    const BackwardParams *p_ = nullptr;
    BackwardSteps steps_;
    MaskMod<MaskSparseMode> mask_;
    ScoreMod<ScorePse> score_;
    SoftmaxMod<SoftmaxDropout> drop_;
    uint32_t vecId_ = 0, core_ = 0, sub_ = 0;
    GM_ADDR seqQ_ = nullptr;  // for the unit walk of UnflushedKvUnits
    GM_ADDR seqKv_ = nullptr;
    GM_ADDR prefix_ = nullptr;
    AscendC::GlobalTensor<T> dy_, o_, kv_[2];
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
