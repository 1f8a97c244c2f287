// Cube side (AIC) of the backward core. Per unit (batch, kv head, kv block, query slice) it
// stages K and V of the block in L1 once; then for every query head of the GQA group and every
// block of the query rows that may see the keys (one "step", BackwardSteps):
//   S = Q.K^T and dP = dO.V^T  -> S/dP slot i%2 (fp32)     --FLAG_BWD_SDP-->  vector cores
//   P, dS from P/dS slot i%2   <--FlagBwdGrad(i%2)--       (P from the saved max/sum, dS)
//   dQ partial = dS.K, dV += P^T.dO, dK += dS^T.Q
// Where the gradients go depends on accumKv (BackwardParams):
//   1: dV and dK sum in two L0C accumulators over all steps of the unit and go out once, at its
//      last step (Fixpipe into the fp32 workspace; atomic only when query slices of one kv
//      block run as several units, or the unit's steps are cut between two cores; otherwise
//      dV, which carries no scale, goes straight into dv in the input dtype). The dQ partial
//      goes out with an atomic Fixpipe.
//   0: dV and dK go out per step with atomic Fixpipes; the dQ partial goes plain into dQ slot
//      i%2 --FLAG_BWD_DQ--> vector cores, which add it into dQ with atomic MTE3 copies. The
//      dQ slot of step i is free again once the vector cores hand back P/dS of step i + 2
//      (they add step i's dQ before that, backward_vector.h), so no flag of its own frees it.
// Why: the Fixpipe (L0C -> L2) carries every fp32 result and is the cube's busiest pipe; the
// accumulators take the two per-step dK/dV adds off it (docs/attention_core.md, "Backward").
// A result larger than an L0C result tile (resElems floats) goes out in chunks of rows.
// With a rope part (accumKv 0 only) S also sums Q_rope.K_rope^T, and dK_rope += dS^T.Q_rope,
// dQ_rope += dS.K_rope (both atomic Fixpipes).
// dK/dV rows belong to the unit, and with one query slice units are not shared between cores,
// so their adds come from one core only (deterministic); dQ rows receive adds from every core
// holding a kv block they see (order-free sum, the spec's default non-deterministic mode).
#pragma once
#include "kernel_operator.h"
#include "../common/cube_tiles.h"
#include "../common/nz_handoff.h"
#include "backward_geometry.h"
#include "backward_layout.h"

namespace AttentionCore {

template <typename T> class BackwardCube {
public:
    __aicore__ inline void Init(const BackwardParams *p, AscendC::TPipe *pipe, const BackwardTensors &t)
    {
        p_ = p;
        core_ = AscendC::GetBlockIdx();
        steps_.Init(p, t, core_);
        if (p->earlySteps != 0) {
            early_.Init(p, t, core_);  // the same walk, for IssueEarly
        }
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.query));
        k_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.key));
        v_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.value));
        dy_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dy));
        GM_ADDR ws = t.workspace;
        dq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDq));
        dk_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDk));
        dv_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDv));
        dvOut_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dv));
        GM_ADDR slots = ws + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + BackwardSlotArea(p, 1)));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + BackwardSlotArea(p, 2)));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + BackwardSlotArea(p, 2) + p->wsSlotT));
        wsDq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + BackwardSlotArea(p, 4)));

        // Pipelined: tileSets (pipelined + 1, or + 2 with the tiles staged a step early) sets
        // of the step tiles (Q, dO, Q_rope) and of the unit tiles K, K_rope (the steps in
        // flight may span as many units), so later steps' tiles load and their S/dP are
        // computed while the vector cores work on this one. One V: only Issue reads it, and
        // every Issue is done (MTE1 -> MTE2 barrier) before the next unit's V is staged.
        tiles_ = p->tileSets;
        stageEarly_ = p->tileSets > p->pipelined + 1;
        const uint32_t bq = p->blockQ;
        const uint32_t bk = p->blockKv;
        const uint32_t dp = p->headDimAlign;
        const uint32_t drp = p->ropeDimAlign;
        const uint32_t dc = p->dChunk;
        const uint32_t wide = bq > bk ? bq : bk;
        // L1 (backward_layout.h, the planner's BackwardL1Bytes)
        const BackwardCubeL1 l1 = BackwardCubeL1Layout(bq, bk, dp, p->ropeDim != 0 ? drp : 0, sizeof(T), tiles_);
        pipe->InitBuffer(qL1_, l1.q);
        pipe->InitBuffer(dyL1_, l1.dy);
        pipe->InitBuffer(pL1_, l1.p + l1.ds);  // a step's dS tile right behind its P tile (DsL1)
        pipe->InitBuffer(kL1_, l1.k);
        pipe->InitBuffer(vL1_, l1.v);
        qTile_ = bq * dp;
        kTile_ = bk * dp;
        if (p->ropeDim != 0) {
            qr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.queryRope));
            kr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.keyRope));
            dqr_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDqRope));
            dkr_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDkRope));
            pipe->InitBuffer(qrL1_, l1.qr);
            pipe->InitBuffer(krL1_, l1.kr);
            qrTile_ = bq * drp;
            krTile_ = bk * drp;
        }
        l0Bufs_ = p->l0Bufs == 2 ? 2 : 1;
        l0aElems_ = wide * (dc > wide ? dc : wide);
        l0bElems_ = wide * dc;
        resElems_ = p->resElems;
        accElems_ = p->accumKv != 0 ? bk * dp : 0;  // L0C: result tiles, then the dV and dK sums
        pipe->InitBuffer(l0a_, l0Bufs_ * l0aElems_ * sizeof(T));
        pipe->InitBuffer(l0b_, l0Bufs_ * l0bElems_ * sizeof(T));
        pipe->InitBuffer(l0c_, (l0Bufs_ * resElems_ + 2 * accElems_) * sizeof(float));
    }

    // Step i: S/dP into slot i % slots (Issue), then the gradients once the vector cores
    // returned P/dS (Gradients). Pipelined, steps up to i + pipelined are issued before the
    // gradients of step i, so the vector cores never wait for the cube's gradient work.
    __aicore__ inline void Process()
    {
        for (int32_t b = 0; b < 2; ++b) {  // every L0 copy starts free
            AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + b);
            AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + b);
        }
        if (accElems_ != 0) {
            AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);  // so are the accumulators
        }
        // ring_ holds steps i .. i + pipelined + 1: the issued ones and the next (whose unit
        // tells whether step i is its unit's last).
        // Staged early, the tiles of step i + pipelined + 1 load right after step i's
        // gradients are issued, before their MTE1 -> MTE2 barrier: they go into the set step
        // i - 1 used, whose reads the previous barrier covered, so the load does not wait for
        // step i's operand loads (in the trace: the next S waited ~0.15 us per step for them).
        const uint32_t ahead = p_->pipelined;
        uint32_t issued = IssueEarly(), staged = 0, told = 0;
        for (uint32_t i = 0;; ++i) {
            Fetch(i + ahead + 2);
            for (; staged < issued && staged <= i + ahead; ++staged) {  // issued early: their tiles again
                StageStep(ring_[staged % RING], staged);
            }
            // Pipelined, step i's S/dP went out in an earlier round: its P/dS load before the
            // S/dP of step i + pipelined go out (the vector cores returned them while working
            // ahead), so the copy runs under those Mmads and Fixpipes, not in front of the dQ
            // Mmads.
            const bool early = i != 0 && i < issued;
            if (early) {
                LoadGradOperands(ring_[i % RING], i);
            }
            for (; told < issued && told <= i + ahead; ++told) {  // issued early: their S/dP are out
                AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_BWD_SDP);
            }
            for (; issued < fetched_ && issued <= i + ahead; ++issued, ++told) {
                for (; staged <= issued; ++staged) {
                    StageStep(ring_[staged % RING], staged);
                }
                Issue(ring_[issued % RING], issued);
                AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_BWD_SDP);
            }
            if (i >= fetched_) {
                if (i == 0) {
                    AscendC::SyncAll<false>();  // no step: still the launch-wide barrier
                }
                break;
            }
            if (i == 0) {
                // The first steps' S/dP went out while the vector cores zeroed the accumulators
                // and computed D; the gradients add into the accumulators.
                AscendC::SyncAll<false>();
            }
            if (!early) {
                LoadGradOperands(ring_[i % RING], i);
            }
            const BackwardStep &s = ring_[i % RING];
            Gradients(s, i, i + 1 >= fetched_ || ring_[(i + 1) % RING].unitSeq != s.unitSeq);
            if (stageEarly_ && staged < fetched_) {
                const uint32_t done = s.unitSeq;
                Fetch(staged + 2);  // step i is done with: its ring entry takes step staged + 1
                StageStep(ring_[staged % RING], staged);
                if (staged + 1 < fetched_) {
                    StageKeyEarly(ring_[(staged + 1) % RING], done);
                }
                ++staged;
            }
            PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // P/dS and this step's tiles are reloaded later
        }
        for (int32_t b = 0; b < 2; ++b) {  // drain: every copy is free again
            AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + b);
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + b);
        }
        if (accElems_ != 0) {
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);
        }
        AscendC::PipeBarrier<PIPE_ALL>();  // the last Fixpipes (atomic adds) are done
        if (p_->dqGroupCast != 0) {
            // the vector cores cast the dQ of the groups this core owns now (backward_dq_cast.h)
            AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_BWD_SDP);
        }
        AscendC::SyncAll<false>();  // every atomic add landed before the cast-out pass
    }

private:
    static constexpr uint32_t RING = 4;  // pipelined + 2 steps in flight at most

    // earlySteps: the S/dP of the core's first steps go out into a slot each while the vector
    // cores compute the row terms before the first barrier (the cube would wait there, and
    // only dS needs the row terms); returns how many. Their tiles are overwritten by the
    // later ones and staged again in the loop, K and the step tiles only (StageStep).
    __aicore__ inline uint32_t IssueEarly()
    {
        uint32_t n = 0;
        BackwardStep s;
        while (n < p_->earlySteps && early_.Next(s)) {
            StageStep(s, n);
            Issue(s, n);  // told in the loop, as if issued there: the slot protocol stays
            earlyIssued_ = ++n;
        }
        stagedKey_ = 0;  // every K again; the V of the last unit stays (stagedUnit_)
        return n;
    }

    // Takes steps from the walk until `count` are known (or the walk ends).
    __aicore__ inline void Fetch(uint32_t count)
    {
        while (!walked_ && fetched_ < count) {
            if (steps_.Next(ring_[fetched_ % RING])) {
                ++fetched_;
            } else {
                walked_ = true;
            }
        }
    }

    // L0 double buffering: every matmul call takes the next L0A/L0B copy (events EVT_L0 + copy,
    // MTE1 <-> M) and every Mmad -> Fixpipe result the next L0C result tile (EVT_L0 + copy,
    // M <-> FIX), so a result's Fixpipe overlaps the next Mmads; EVT_ACC (M <-> FIX) guards
    // the dK/dV accumulators between a unit's flush and the next unit's first step; id 0
    // stays PipeSync's.
    static constexpr int32_t EVT_L0 = BWD_EVT_L0;  // sync.h's table
    static constexpr int32_t EVT_ACC = BWD_EVT_ACC;
    static constexpr int32_t EVT_STAGED = BWD_EVT_STAGED;

    // The next L0C copy, once Fixpipe is done with it.
    __aicore__ inline uint32_t BeginResult()
    {
        const uint32_t c = NextCopy(l0cIdx_, l0Bufs_);
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + c);
        return c;
    }

    __aicore__ inline AscendC::LocalTensor<float> L0c(uint32_t c) { return l0c_.Get<float>()[c * resElems_]; }
    __aicore__ inline AscendC::LocalTensor<T> L0a(uint32_t x) { return l0a_.Get<T>()[x * l0aElems_]; }
    __aicore__ inline AscendC::LocalTensor<T> L0b(uint32_t x) { return l0b_.Get<T>()[x * l0bElems_]; }
    // Accumulator 0 (dV) or 1 (dK), after the result tiles.
    __aicore__ inline AscendC::LocalTensor<float> Acc(uint32_t a)
    {
        return l0c_.Get<float>()[l0Bufs_ * resElems_ + a * accElems_];
    }

    // Rows of an n-column result per L0C result tile (whole 16-row groups).
    __aicore__ inline uint32_t ChunkRows(uint32_t n) const { return resElems_ / AlignUp(n, 16) / 16 * 16; }

    __aicore__ inline static uint16_t MmadRows(uint32_t rows) { return static_cast<uint16_t>(rows == 1 ? 16 : rows); }

    __aicore__ inline uint64_t QRow(const BackwardStep &s) const { return (s.u.qStart + s.q0) * p_->numHeads + s.n; }
    __aicore__ inline uint64_t KvRow(const BackwardStep &s) const
    {
        return (s.u.kvStart + static_cast<uint64_t>(s.u.k0)) * p_->numKvHeads + s.u.nkv;
    }

    // The L1 tile of a rows x cols operand (cube_tiles.h).
    __aicore__ inline static L1Shape Tile(uint32_t rows, uint32_t cols)
    {
        return L1Shape{AlignUp(rows, 16), AlignUp(cols, 16)};
    }

    // `rows` TND rows of `depth` elements (pitch heads * depth) from element `offset` -> L1.
    __aicore__ inline void LoadRows(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                    uint64_t offset, uint32_t rows, uint32_t heads, uint32_t depth)
    {
        Tiles::CopyRows(dst, src[offset], rows, depth, static_cast<uint64_t>(heads) * depth, Tile(rows, depth), 0);
    }

    // K (and K_rope) of step s's unit into its set, once per unit.
    __aicore__ inline void StageKey(const BackwardStep &s)
    {
        if (s.unitSeq == stagedKey_) {
            return;
        }
        stagedKey_ = s.unitSeq;
        const uint32_t kb = s.unitSeq % tiles_;
        const uint32_t d = p_->headDim;
        const uint64_t kvRow = KvRow(s);
        LoadRows(kL1_.Get<T>()[kb * kTile_], k_, kvRow * d, s.u.cols, p_->numKvHeads, d);
        if (p_->ropeDim != 0) {
            LoadRows(krL1_.Get<T>()[kb * krTile_], kr_, kvRow * p_->ropeDim, s.u.cols, p_->numKvHeads, p_->ropeDim);
        }
    }

    // A unit's first staging loads K, V, Q and dO (~2.2 us of MTE2 against ~1.7 of Fixpipe per
    // step), and the P/dS load behind them held the dQ Mmads back. Where the step after the one
    // just staged starts a new unit, its K loads now, with the last step of the unit before,
    // when its set is free: the steps from the one whose gradients were just issued (of unit
    // `oldest`; their K reads end at this iteration's barrier) on span fewer than tileSets
    // units.
    __aicore__ inline void StageKeyEarly(const BackwardStep &next, uint32_t oldest)
    {
        if (next.unitSeq != stagedUnit_ && oldest + tiles_ > next.unitSeq) {
            StageKey(next);
        }
    }

    // Loads step i's tiles (and K/V when the unit changes) into L1; a step issued early
    // (IssueEarly) needs them again for its gradients only: no V, and no EVT_STAGED for Issue.
    __aicore__ inline void StageStep(const BackwardStep &s, uint32_t i)
    {
        const uint32_t tile = i % tiles_;
        const uint32_t d = p_->headDim;
        const bool issue = i >= earlyIssued_;
        StageKey(s);
        if (issue && s.unitSeq != stagedUnit_) {
            stagedUnit_ = s.unitSeq;
            LoadRows(vL1_.Get<T>(), v_, KvRow(s) * d, s.u.cols, p_->numKvHeads, d);
        }
        const uint64_t qRow = QRow(s);
        LoadRows(qL1_.Get<T>()[tile * qTile_], q_, qRow * d, s.rows, p_->numHeads, d);
        LoadRows(dyL1_.Get<T>()[tile * qTile_], dy_, qRow * d, s.rows, p_->numHeads, d);
        if (p_->ropeDim != 0) {
            LoadRows(qrL1_.Get<T>()[tile * qrTile_], qr_, qRow * p_->ropeDim, s.rows, p_->numHeads, p_->ropeDim);
        }
        if (issue) {
            AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_STAGED);  // Issue waits for these loads only
        }
    }

    // S = Q.K^T (+ Q_rope.K_rope^T) and dP = dO.V^T of the staged step i into slot i % slots
    // (the caller tells the vector cores, FLAG_BWD_SDP).
    __aicore__ inline void Issue(const BackwardStep &s, uint32_t i)
    {
        const uint32_t tile = i % tiles_;
        const uint32_t kb = s.unitSeq % tiles_;
        const bool rope = p_->ropeDim != 0;
        const uint32_t d = p_->headDim;
        const AscendC::LocalTensor<T> kL1 = kL1_.Get<T>()[kb * kTile_];
        const AscendC::LocalTensor<T> qL1 = qL1_.Get<T>()[tile * qTile_];
        const AscendC::LocalTensor<T> dyL1 = dyL1_.Get<T>()[tile * qTile_];
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_STAGED);  // the step's tiles are in (StageStep)
        const uint32_t slot = i % p_->slots;
        const AscendC::GlobalTensor<float> sOut = wsS_[slot * (p_->wsSlotF32 / 4)];
        const AscendC::GlobalTensor<float> dpOut = wsDp_[slot * (p_->wsSlotF32 / 4)];
        if (!rope && d <= p_->dChunk) {  // one depth pass: the rows go out in result-tile chunks
            ABtOut(qL1, kL1, s.rows, s.u.cols, d, sOut);
            ABtOut(dyL1, vL1_.Get<T>(), s.rows, s.u.cols, d, dpOut);
        } else {  // depth passes (and the rope part) sum in one result tile
            const uint32_t cs = BeginResult();
            MatmulABt(qL1, kL1, s.rows, s.u.cols, d, true, cs);
            if (rope) {
                MatmulABt(qrL1_.Get<T>()[tile * qrTile_], krL1_.Get<T>()[kb * krTile_], s.rows, s.u.cols, p_->ropeDim,
                          false, cs);
            }
            ScoresOut(sOut, s.rows, s.u.cols, cs);
            const uint32_t cdp = BeginResult();
            MatmulABt(dyL1, vL1_.Get<T>(), s.rows, s.u.cols, d, true, cdp);
            ScoresOut(dpOut, s.rows, s.u.cols, cdp);
        }
        PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // K/V or a tile may be restaged next
    }

    // P and dS of step i into L1, once the vector cores returned them. The previous step's
    // operand loads are done (the MTE1 -> MTE2 barrier that ends each step).
    __aicore__ inline void LoadGradOperands(const BackwardStep &s, uint32_t i)
    {
        const uint32_t slot = i % p_->slots;
        AscendC::CrossCoreWaitFlag(FlagBwdGrad(slot));
        const AscendC::LocalTensor<T> pL1 = pL1_.Get<T>();
        const uint64_t at = BackwardPdsSlot(p_, slot, sizeof(T));
        const L1Shape t = Tile(s.rows, s.u.cols);
        if constexpr (NzHandoff<T>::ENABLED) {  // the vector cores wrote P and dS in Nz order
            if (t.colsPad == p_->blockKv) {     // dS's column blocks continue P's: one copy
                NzHandoff<T>::Load(pL1, wsP_[at], t.rowsPad, 2 * t.colsPad, p_->blockQ);
            } else {
                NzHandoff<T>::Load(pL1, wsP_[at], t.rowsPad, t.colsPad, p_->blockQ);
                NzHandoff<T>::Load(DsL1(s), wsDs_[at], t.rowsPad, t.colsPad, p_->blockQ);
            }
        } else {
            Tiles::CopyRows(pL1, wsP_[at], s.rows, s.u.cols, p_->blockKv, t, 0);
            Tiles::CopyRows(DsL1(s), wsDs_[at], s.rows, s.u.cols, p_->blockKv, t, 0);
        }
    }

    // A step's dS tile in L1: right behind its P tile (one copy brings both, LoadGradOperands).
    __aicore__ inline AscendC::LocalTensor<T> DsL1(const BackwardStep &s)
    {
        const L1Shape t = Tile(s.rows, s.u.cols);
        return pL1_.Get<T>()[t.rowsPad * t.colsPad];
    }

    // The gradients of step i from its P and dS in L1 (the header comment has where they go);
    // `last`: the unit's last step.
    __aicore__ inline void Gradients(const BackwardStep &s, uint32_t i, bool last)
    {
        const uint32_t tile = i % tiles_;
        const uint32_t kb = s.unitSeq % tiles_;
        const AscendC::LocalTensor<T> pL1 = pL1_.Get<T>();
        const AscendC::LocalTensor<T> dsL1 = DsL1(s);
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        if (accElems_ != 0) {
            AccumulatedGradients(s, i, last);
            return;
        }

        const uint32_t d = p_->headDim;
        const uint32_t kvPitch = p_->numKvHeads * d;
        const uint64_t qRow = QRow(s);
        const uint64_t kvRow = KvRow(s);
        const AscendC::LocalTensor<T> qL1 = qL1_.Get<T>()[tile * qTile_];
        const AscendC::LocalTensor<T> dyL1 = dyL1_.Get<T>()[tile * qTile_];
        QueryGrad(dsL1, kL1_.Get<T>()[kb * kTile_], s.rows, s.u.cols, d, wsDq_[(i % 2) * (p_->wsDqSlot / 4)],
                  p_->dqPitch, false);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_BWD_DQ);
        KeyGrad(pL1, dyL1, s.rows, s.u.cols, d, dv_[kvRow * d], kvPitch);  // dV += P^T.dO
        KeyGrad(dsL1, qL1, s.rows, s.u.cols, d, dk_[kvRow * d], kvPitch);  // dK += dS^T.Q
        if (p_->ropeDim != 0) {
            const uint32_t dr = p_->ropeDim;
            KeyGrad(dsL1, qrL1_.Get<T>()[tile * qrTile_], s.rows, s.u.cols, dr, dkr_[kvRow * dr], p_->numKvHeads * dr);
            QueryGrad(dsL1, krL1_.Get<T>()[kb * krTile_], s.rows, s.u.cols, dr, dqr_[qRow * dr], p_->numHeads * dr,
                      true);
        }
    }

    // accumKv: dQ partial = dS.K added into dQ (atomic Fixpipes), dV += P^T.dO and
    // dK += dS^T.Q into the unit's accumulators (the first step starts them, once the last
    // unit's flush has read them), flushed at the unit's last step.
    __aicore__ inline void AccumulatedGradients(const BackwardStep &s, uint32_t i, bool last)
    {
        const uint32_t tile = i % tiles_;
        const uint32_t kb = s.unitSeq % tiles_;
        const uint32_t d = p_->headDim;
        const AscendC::LocalTensor<T> pL1 = pL1_.Get<T>();
        const AscendC::LocalTensor<T> dsL1 = DsL1(s);
        // The dQ chunks' atomic Fixpipes take longer than their Mmads: the dV and dK Mmads run
        // between them (dQ in L0 copy x, dV then dK in copy y; the tiling gives accumKv two
        // copies), so the Fixpipe always has a result queued while the M pipe works on the
        // Fixpipe-free sums.
        const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
        const uint32_t y = NextCopy(l0Idx_, l0Bufs_);
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
        Tiles::LoadA(L0a(x), dsL1, Tile(s.rows, s.u.cols), 0, s.u.cols);
        Tiles::LoadB(L0b(x), kL1_.Get<T>()[kb * kTile_], Tile(s.u.cols, d), s.u.cols, 0, d);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        const AscendC::GlobalTensor<float> dq = dq_[QRow(s) * d];
        const uint32_t pitch = p_->numHeads * d;
        const uint32_t half = AlignUp((s.rows + 1) / 2, 16) < s.rows ? AlignUp((s.rows + 1) / 2, 16) : s.rows;
        MmadRowsOut(L0a(x), L0b(x), 0, half, d, s.u.cols, dq, pitch, true);
        const bool first = s.unitSeq != accUnit_;
        if (first) {
            accUnit_ = s.unitSeq;
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);
        }
        KeyAccumulate(y, pL1, dyL1_.Get<T>()[tile * qTile_], s.rows, s.u.cols, d, Acc(0), first);  // dV
        MmadRowsOut(L0a(x), L0b(x), half, s.rows, d, s.u.cols, dq, pitch, true);
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
        KeyAccumulate(y, dsL1, qL1_.Get<T>()[tile * qTile_], s.rows, s.u.cols, d, Acc(1), first);  // dK
        if (last) {
            const uint64_t kvOff = KvRow(s) * d;
            const uint32_t kvPitch = p_->numKvHeads * d;
            const bool atomic = p_->qSplit > 1 || s.shared;  // other units or cores add to these rows
            AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVT_ACC);
            AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVT_ACC);
            if (atomic) {
                FixpipeOut(Acc(0), dv_[kvOff], d, s.u.cols, kvPitch, true);
            } else {  // the only writer of these dV rows, which carry no scale: straight into dv
                FixpipeCastOut(Acc(0), dvOut_[kvOff], d, s.u.cols, kvPitch);
            }
            FixpipeOut(Acc(1), dk_[kvOff], d, s.u.cols, kvPitch, atomic);
            AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);
        }
    }

    // acc (cols x depth) (+)= X^T.Y with X (rows x cols) and Y (rows x depth) in L1, through
    // L0 copy x; `first` starts the sum.
    __aicore__ inline void KeyAccumulate(uint32_t x, const AscendC::LocalTensor<T> &xL1,
                                         const AscendC::LocalTensor<T> &yL1, uint32_t rows, uint32_t cols,
                                         uint32_t depth, const AscendC::LocalTensor<float> &acc, bool first)
    {
        const AscendC::LocalTensor<T> l0a = L0a(x);
        const AscendC::LocalTensor<T> l0b = L0b(x);
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);  // M is done with these L0A/L0B
        Tiles::LoadAt(l0a, xL1, Tile(rows, cols));
        Tiles::LoadB(l0b, yL1, Tile(rows, depth), rows, 0, depth);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        AscendC::Mmad(acc, l0a, l0b, Tiles::Mmad(MmadRows(cols), depth, rows, first));
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
    }

    // out (rows x cols, pitch blockKv) = A.B^T with A (rows x depth) and B (cols x depth) in
    // L1, depth <= dChunk: one operand load, then the rows in result-tile chunks.
    __aicore__ inline void ABtOut(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1, uint32_t rows,
                                  uint32_t cols, uint32_t depth, const AscendC::GlobalTensor<float> &out)
    {
        const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>()[x * l0aElems_];
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[x * l0bElems_];
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);  // M is done with these L0A/L0B
        Tiles::LoadA(l0a, aL1, Tile(rows, depth), 0, depth);
        Tiles::LoadBt(l0b, bL1, Tile(cols, depth), cols, 0, depth);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        MmadRowsOut(l0a, l0b, 0, rows, cols, depth, out, p_->blockKv, false);
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
    }

    // out rows [row0, m) (pitch `pitch` floats) = or += (`atomic`) A.B with A (m x k) in l0a
    // and B (k x n) in l0b: one Mmad and Fixpipe per chunk of rows that fits a result tile
    // (row0 a multiple of 16).
    __aicore__ inline void MmadRowsOut(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &l0b,
                                       uint32_t row0, uint32_t m, uint32_t n, uint32_t k,
                                       const AscendC::GlobalTensor<float> &out, uint32_t pitch, bool atomic)
    {
        const uint32_t chunk = ChunkRows(n);
        for (uint32_t r0 = row0; r0 < m; r0 += chunk) {
            const uint32_t mr = m - r0 < chunk ? m - r0 : chunk;
            const uint32_t c = BeginResult();
            AscendC::Mmad(L0c(c), l0a[Tiles::ARow(r0, k)], l0b, Tiles::Mmad(MmadRows(mr), n, k, true));
            AtomicOut(c, out[static_cast<uint64_t>(r0) * pitch], n, mr, pitch, atomic);
        }
    }

    // L0C copy c (+)= A.B^T with A (rows x depth) and B (cols x depth) in L1; `first` starts
    // the sum.
    __aicore__ inline void MatmulABt(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t depth, bool first, uint32_t c)
    {
        const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>()[x * l0aElems_];
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[x * l0bElems_];
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);  // M is done with these L0A/L0B
        for (uint32_t kc = 0; kc < depth; kc += p_->dChunk) {
            const uint32_t kLen = depth - kc < p_->dChunk ? depth - kc : p_->dChunk;
            if (kc > 0) {
                PipeSync<AscendC::HardEvent::M_MTE1>();  // the previous chunk's Mmad read them
            }
            Tiles::LoadA(l0a, aL1, Tile(rows, depth), kc, kLen);
            Tiles::LoadBt(l0b, bL1, Tile(cols, depth), cols, kc, kLen);
            AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
            AscendC::Mmad(L0c(c), l0a, l0b, Tiles::Mmad(MmadRows(rows), cols, kLen, first && kc == 0));
        }
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
    }

    // L0C copy c (rows x cols) -> a score slot (fp32, pitch blockKv); frees the copy.
    __aicore__ inline void ScoresOut(const AscendC::GlobalTensor<float> &out, uint32_t rows, uint32_t cols, uint32_t c)
    {
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + c);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + c);
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                       static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), p_->blockKv, false);
        AscendC::Fixpipe(out, L0c(c), fix);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + c);
    }

    // out (cols x depth, pitch `pitch`) += X^T.Y with X (rows x cols) and Y (rows x depth) in L1.
    __aicore__ inline void KeyGrad(const AscendC::LocalTensor<T> &xL1, const AscendC::LocalTensor<T> &yL1,
                                   uint32_t rows, uint32_t cols, uint32_t depth,
                                   const AscendC::GlobalTensor<float> &out, uint32_t pitch)
    {
        const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>()[x * l0aElems_];
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[x * l0bElems_];
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);  // M is done with these L0A/L0B
        Tiles::LoadAt(l0a, xL1, Tile(rows, cols));
        MmadByDepthChunks(l0a, l0b, x, yL1, cols, rows, depth, out, pitch, true);
    }

    // out (rows x depth, pitch `pitch`) += dS.B (`atomic`) or = dS.B with dS (rows x cols) and
    // B (cols x depth) in L1.
    __aicore__ inline void QueryGrad(const AscendC::LocalTensor<T> &dsL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t depth,
                                     const AscendC::GlobalTensor<float> &out, uint32_t pitch, bool atomic)
    {
        const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>()[x * l0aElems_];
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[x * l0bElems_];
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);  // M is done with these L0A/L0B
        Tiles::LoadA(l0a, dsL1, Tile(rows, cols), 0, cols);
        MmadByDepthChunks(l0a, l0b, x, bL1, rows, cols, depth, out, pitch, atomic);
    }

    // out (m x depth) (+)= A.B with A (m x k) already in L0A copy x and B (k x depth) in L1,
    // one Mmad and Fixpipe per head-dim chunk of B; releases L0A/L0B copy x at the end.
    __aicore__ inline void MmadByDepthChunks(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &l0b,
                                             uint32_t x, const AscendC::LocalTensor<T> &bL1, uint32_t m, uint32_t k,
                                             uint32_t depth, const AscendC::GlobalTensor<float> &out, uint32_t pitch,
                                             bool atomic)
    {
        for (uint32_t dc = 0; dc < depth; dc += p_->dChunk) {
            const uint32_t dLen = depth - dc < p_->dChunk ? depth - dc : p_->dChunk;
            if (dc > 0) {
                PipeSync<AscendC::HardEvent::M_MTE1>();  // the previous chunk's Mmad read L0B
            }
            Tiles::LoadB(l0b, bL1, Tile(k, depth), k, dc, dLen);
            AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
            MmadRowsOut(l0a, l0b, 0, m, dLen, k, out[dc], pitch, atomic);
        }
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
    }

    // L0C copy c (m x n, Nz) += (`atomic`) or = into GM rows of pitch `pitch` floats; frees
    // the copy.
    __aicore__ inline void AtomicOut(uint32_t c, const AscendC::GlobalTensor<float> &out, uint32_t n, uint32_t m,
                                     uint32_t pitch, bool atomic = true)
    {
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + c);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + c);
        FixpipeOut(L0c(c), out, n, m, pitch, atomic);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + c);
    }

    // src (m x n fp32, Nz in L0C) += (`atomic`) or = into GM rows of pitch `pitch` floats.
    __aicore__ inline void FixpipeOut(const AscendC::LocalTensor<float> &src, const AscendC::GlobalTensor<float> &out,
                                      uint32_t n, uint32_t m, uint32_t pitch, bool atomic)
    {
        if (atomic) {
            AscendC::SetAtomicAdd<float>();
        }
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(n), static_cast<uint16_t>(m),
                                       static_cast<uint16_t>(AlignUp(MmadRows(m), 16)), pitch, false);
        AscendC::Fixpipe(out, src, fix);
        if (atomic) {
            AscendC::SetAtomicNone();
        }
    }

    // src (m x n fp32, Nz in L0C) -> GM rows of pitch `pitch` elements in the input dtype (the
    // Fixpipe converts on the way out, twice the elements per cycle of an fp32 copy).
    __aicore__ inline void FixpipeCastOut(const AscendC::LocalTensor<float> &src, const AscendC::GlobalTensor<T> &out,
                                          uint32_t n, uint32_t m, uint32_t pitch)
    {
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(n), static_cast<uint16_t>(m),
                                       static_cast<uint16_t>(AlignUp(MmadRows(m), 16)), pitch, false);
        if constexpr (AscendC::IsSameType<T, half>::value) {
            fix.quantPre = QuantMode_t::F322F16;
        } else if constexpr (AscendC::IsSameType<T, bfloat16_t>::value) {
            fix.quantPre = QuantMode_t::F322BF16;
        }
        AscendC::Fixpipe(out, src, fix);
    }

    using Tiles = CubeTiles<T>;

    const BackwardParams *p_ = nullptr;
    BackwardSteps steps_;
    BackwardSteps early_;       // IssueEarly's walk
    uint32_t earlyIssued_ = 0;  // steps whose S/dP IssueEarly issued
    uint32_t core_ = 0;
    uint32_t tiles_ = 1;  // sets of the step tiles and K
    bool stageEarly_ = false;
    uint32_t stagedUnit_ = 0;  // unitSeq of the V in L1 (sequence numbers start at 1)
    uint32_t stagedKey_ = 0;   // unitSeq of the last K staged
    BackwardStep ring_[RING];
    uint32_t fetched_ = 0;  // steps taken from steps_
    bool walked_ = false;
    uint32_t accUnit_ = 0;  // unitSeq whose dK/dV sums the accumulators hold
    uint32_t qTile_ = 0, kTile_ = 0, qrTile_ = 0, krTile_ = 0;
    uint32_t l0Bufs_ = 1, l0aElems_ = 0, l0bElems_ = 0;  // L0 copies and elements per copy
    uint32_t resElems_ = 0, accElems_ = 0;               // L0C result tile, one accumulator
    uint32_t l0Idx_ = 0, l0cIdx_ = 0;                    // the copies the next matmul / result take
    AscendC::GlobalTensor<T> q_, k_, v_, dy_, qr_, kr_, dvOut_;
    AscendC::GlobalTensor<float> dq_, dk_, dv_, dqr_, dkr_, wsS_, wsDp_, wsDq_;
    AscendC::GlobalTensor<T> wsP_, wsDs_;
    AscendC::TBuf<AscendC::TPosition::A1> qL1_, dyL1_, pL1_, qrL1_;  // pL1_: P and dS
    AscendC::TBuf<AscendC::TPosition::B1> kL1_, vL1_, krL1_;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
};

}  // namespace AttentionCore
