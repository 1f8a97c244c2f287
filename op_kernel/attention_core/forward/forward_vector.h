// Vector side (AIV) of the forward core: for each key block of a unit it takes its half of the
// S rows from the workspace (in sub-blocks of ForwardParams::vecRows rows), applies the score
// and mask policies, runs the online softmax (running max / sum in fp32), hands P back to the
// cube, folds the cube's P.V block into the fp32 output accumulator with the rescale factor,
// and at the end of the unit normalises, casts and writes its rows in the output layout. The
// key blocks of all the core's units form one stream (Process), as on the cube.
//
// Lazy P.V (LAZY_PV, the tiling key's mode; forward_cube.h, forward_params.h): the reference max of
// the rows (mOld_) moves only when some row's block max exceeds it by more than
// LAZY_RESCALE_TAU; the core posts that decision per block ("rescaled" word), P is
// exp(S - reference) <= 256, and the cube writes its P.V sum out only after such a block or at
// the end of the unit. O is then acc = (acc + written sum) * alpha at a block the cube flushed
// (alpha = 1 unless this core rescaled there), plus the final sum. The true row max (for
// softmax_max and the visibility test) is kept apart in mTrue_.
#pragma once
#include "kernel_operator.h"
#include "forward_params.h"
#include "policies.h"
#include "../common/sync.h"
#include "../common/float_cast.h"
#include "../common/nz_handoff.h"
#include "../common/row_ops.h"
#include "forward_layout.h"
#include "kv_nz.h"
#include "v_abs_max.h"

namespace AttentionCore {

template <typename T, class Variant, bool LAZY_PV, bool KV_NZ> class ForwardVector {
public:
    template <class Tiling, class GmTensors>
    __aicore__ inline void Init(const Tiling &tiling, AscendC::TPipe *pipe, const GmTensors &t)
    {
        const ForwardParams *p = &tiling.params;
        p_ = p;
        split_.Init(tiling, t);
        kv_.Init(tiling, t);
        score_.Init(tiling, t);
        mask_.Init(tiling, t);
        softmax_.Init(tiling, t);
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.out));
        if (p->hasSoftmaxStats != 0) {
            statMax_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.softmaxMax));
            statSum_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.softmaxSum));
        }

        core_ = AscendC::GetBlockIdx() / 2;  // MIX 1:2: vector cores 2b and 2b+1 serve cube b
        sub_ = AscendC::GetSubBlockIdx();
        if constexpr (KV_NZ) {
            kvNz_.Init(p, t.key, t.value, t.workspace);
            kvNz_.QInit(t.query, t.workspace);
        }
        value_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.value));
        wsBase_ = t.workspace;
        GM_ADDR ws = t.workspace + core_ * p->wsBytesPerCore;
        const ForwardWorkspace wl = ForwardWorkspaceLayout(p->wsSlotS, p->wsSlotP, p->wsSlotO);
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(ws + wl.p));
        wsO_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + wl.o));
        wsOh_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(ws + wl.o));
        ctrl_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + wl.ctrl));
        zero_.SetGlobalBuffer(reinterpret_cast<__gm__ uint16_t *>(ws + wl.zero));

        const uint32_t r = p->rowsPerVec;
        const uint32_t c = p->blockKv;
        const uint32_t dp = p->headDimAlign;
        vecRows_ = p->vecRows != 0 && p->vecRows < r ? p->vecRows : r;
        const uint32_t v = vecRows_;  // S, P and mask buffers hold one sub-block
        sBufs_ = p->vecSBufs == 2 ? 2 : 1;
        sElems_ = v * c;
        const ForwardVectorUb ub =
            ForwardVectorUbLayout(r, v, c, dp, sizeof(T), sBufs_, p->hasSoftmaxStats != 0);  // forward_layout.h
        partRows_ = ub.partRows;
        // the K/V staging's chunks larger than the accumulator and tmp hold (kv_staging_tiling.h PlanKvNzChunk)
        stagingInS_ = KvStagingInS(ub) && 2ull * p->kvNzChunk * dp * sizeof(T) > (ub.acc < ub.tmp ? ub.acc : ub.tmp);
        // The finish's stores leave from the O-slot rows where its cast rows fit (and with the
        // statistics those too, which the layout sees to).
        asyncOut_ = ub.part >= r * dp * sizeof(T) + (p->hasSoftmaxStats != 0 ? 2 * AlignUp(r, 8) * 32 : 0);
        pipe->InitBuffer(sBuf_, ub.s);
        pipe->InitBuffer(tmpBuf_, ub.tmp);
        pipe->InitBuffer(pBuf_, ub.p);
        pipe->InitBuffer(maskBuf_, ub.mask);
        pipe->InitBuffer(accBuf_, ub.acc);
        pipe->InitBuffer(partBuf_, ub.part);
        pipe->InitBuffer(statBuf_, ub.stats);
        pipe->InitBuffer(bcastBuf_, ub.bcast);
        if constexpr (KV_NZ) {  // per-core or late staging: three chunks, KV_NZ_ZERO_ROWS zero rows of 16
            const uint32_t rows = p->kvNzOwnRows != 0 ? p->kvNzOwnRows : (p->kvNzLate != 0 ? p->kvNzLate : p->qNzChunk);
            if (rows != 0) {
                pipe->InitBuffer(ownBuf_, (3 * rows * dp + KV_NZ_ZERO_ROWS * 16) * sizeof(T));
            }
        }
        if (VLoop()) {  // the max|V| pass of the main loop: a chunk and the running max
            pipe->InitBuffer(vPassBuf_, static_cast<uint32_t>(VAbsMaxUbBytes(p->vAbsMaxChunk, sizeof(T))));
        }
        const uint32_t statBytes = AlignUp(r, 8) * 4;  // one row of the VEC_STAT_ROWS
        s_ = sBuf_.Get<float>();
        tmp_ = tmpBuf_.Get<float>();
        acc_ = accBuf_.Get<float>();
        part_ = partBuf_.Get<float>();
        bcast_ = bcastBuf_.Get<float>();
        const AscendC::LocalTensor<float> stats = statBuf_.Get<float>();
        const uint32_t st = statBytes / 4;
        mNew_ = stats;
        rowTmp_ = stats[st];
        inv_ = stats[2 * st];
        for (uint32_t i = 0; i < WS_SLOTS; ++i) {
            alpha_[i] = stats[(3 + i) * st];
            mOldSet_[i] = stats[(3 + WS_SLOTS + i) * st];
            sumSet_[i] = stats[(3 + 2 * WS_SLOTS + i) * st];
            mTrueSet_[i] = stats[(3 + 3 * WS_SLOTS + i) * st];
            rescaled_[i] = true;
        }
        UseSet(0);
        if constexpr (Variant::Kv::Int8Digits()) {  // the int8 x int8 core's hand-offs (int8_digit_core.h)
            kv_.Digits().Init(tiling, pipe, t.workspace, core_, vecRows_);
        }
        kv_.StreamInit(tiling, pipe, t);
    }

    __aicore__ inline void Process()
    {
        // The key blocks of all this core's units form one stream: block g uses workspace slot
        // g % WS_SLOTS and rescale factor alpha_[g % WS_SLOTS]. P.V of block g is folded into O
        // after the softmax of block g + LAG, across unit boundaries: the cube's round trip of a
        // block (P load, P.V, Fixpipe) and of a unit's final sum overlap the softmax of the next
        // blocks, also the next unit's, instead of stalling this core. A unit keeps its softmax
        // statistics in its own set until it is finished (at most WS_SLOTS units are in flight).
        const bool late = KV_NZ && kvNz_.Late(score_.KeyScale());  // staged during the first units (kv_nz.h)
        if constexpr (KV_NZ) {  // K/V in Nz order for the cube (the accumulator and tmp or S are free scratch)
            // per core: only every core's first region before the barrier (kv_nz.h)
            KvNzRegion first[MAX_CORES];
            const uint32_t count = p_->kvNzOwnRows != 0 ? kvNz_.FirstRegions(split_, first) : 0;
            if (!late) {
                const AscendC::LocalTensor<T> vmax = bcastBuf_.Get<T>();
                const bool known = LAZY_PV && VMaxKnown();
                kvNz_.Prepare(accBuf_.Get<T>(), stagingInS_ ? sBuf_.Get<T>() : tmpBuf_.Get<T>(), AscendC::GetBlockIdx(),
                              p_->usedCores * 2, score_.KeyScale(), p_->kvNzOwnRows != 0 ? first : nullptr, count,
                              known ? &vmax : nullptr);
                if constexpr (AscendC::IsSameType<T, half>::value) {  // VMaxKnown: fp16 only
                    if (known && core_ < p_->usedCores) {             // Prepare drained every pipe
                        const float m = static_cast<float>(vmax.GetValue(128));
                        WriteCtrl(ctrl_, CtrlVMax(sub_), *reinterpret_cast<const int32_t *>(&m));
                    }
                }
            }
        }
        if constexpr (Variant::Mask::HasPrepass()) {  // the mask summary (the accumulator is free scratch)
            mask_.Prepare(accBuf_.Get<uint8_t>(), p_->rowsPerVec * p_->headDimAlign * 4, AscendC::GetBlockIdx(),
                          p_->usedCores * 2);
        }
        if constexpr (KV_NZ) {
            if (kvNz_.EarlyS(score_.KeyScale(), LAZY_PV)) {  // the cube is not in the barrier (kv_nz.h)
                if (!late) {  // late: the meeting comes near the first unit's end (LateFinish)
                    kvNz_.StagedSignal();
                }
            } else {
                AscendC::SyncAll<false>();
            }
        } else if constexpr (Variant::Mask::HasPrepass()) {
            AscendC::SyncAll<false>();
        }
        if constexpr (KV_NZ && LAZY_PV) {  // past the barrier: every vector core's largest |V|
            if (!late && VMaxKnown()) {
                ReadVMax(wsBase_, sBuf_.Get<float>());
            }
        }
        if constexpr (KV_NZ) {  // this core's other regions: staged by its two vector cores from here on
            kvNz_.OwnInit(split_, core_);
            if (p_->kvNzOwnRows != 0) {
                kvNz_.OwnStart(split_, ownBuf_.Get<T>(), sub_, score_.KeyScale());
            }
        }
        if (VLoop()) {  // the max|V| pass: a chunk after each softmax block (v_abs_max.h)
            vLoop_ = true;
            vPass_.Begin(value_, p_->vAbsMaxElems, vPassBuf_.Get<T>(), p_->vAbsMaxChunk, AscendC::GetBlockIdx(),
                         p_->usedCores * 2);
            // every vector core's share is folded after this many blocks, then V_MEET_LAG more
            const uint64_t share = p_->vAbsMaxElems / (2 * p_->usedCores) + 16;
            vMeetAt_ = (share + p_->vAbsMaxChunk - 1) / p_->vAbsMaxChunk + 1 + V_MEET_LAG;
        }
        for (uint32_t b = 0; b < sBufs_; ++b) {  // every S buffer starts free
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_S + b);
        }
        if constexpr (LAZY_PV && NzHandoff<T>::ENABLED) {  // this core's half of the zero fractal (forward_params.h)
            // Cores past the plan (the backward's recompute launches more) own no workspace.
            if (mask_.HasRowsBefore() && core_ < p_->usedCores) {
                const AscendC::LocalTensor<uint16_t> zeros = pBuf_.Get<uint16_t>();
                constexpr uint32_t HALF = ZERO_FRACTAL_BYTES / 2 / sizeof(uint16_t);
                AscendC::Duplicate(zeros, static_cast<uint16_t>(0), static_cast<int32_t>(HALF));
                PipeSync<AscendC::HardEvent::V_MTE3>();
                AscendC::DataCopy(zero_[sub_ * HALF], zeros, HALF);
            }
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_P);  // and the P buffer
        AscendC::Duplicate(acc_, 0.0f, static_cast<int32_t>(p_->rowsPerVec * p_->headDimAlign));
        AscendC::PipeBarrier<PIPE_V>();
        Cursor c;
        bool ok = Seek(c, split_.Begin(core_));
        firstUnit_ = c.unit;
        if (late) {  // a first step of the late share while the cube's first S is on the way
            kvNz_.LateStart(ownBuf_.Get<T>(), AscendC::GetBlockIdx(), p_->usedCores * 2, ok ? c.blocks : 1);
            kvNz_.LateStep(LATE_LEAD_STEPS);
        }
        if (KV_NZ && p_->qNzUnits != 0) {  // the Q blocks of this core's later units (kv_nz.h QStart)
            kvNz_.QStart(split_.Begin(core_), split_.End(core_), core_, sub_, ownBuf_.Get<T>());
        }
        if (ok) {
            OwnThrough(c);
            // The first block's mask rows before its S arrives, as Prefetch issues every later
            // block's: the mask's Apply would load them behind the S rows.
            if (c.rows != 0) {
                LoadMask(c.u, {c.u.q0 + c.rowOff, SubRows(0, c.rows), UnitBlockAt(c.u, p_->blockKv, c.j)});
            }
        }
        while (ok) {
            // A deferred finish must run before its unit's statistics set is reused, and before
            // the P store of a block that ends a unit in its block slot: with that P the cube
            // computes that unit's final sum into the same final O slot the finish reads.
            if (finishPending_ &&
                ((c.j == 0 && c.set == finishSet_) || (issued_ % WS_SLOTS == finishSlot_ && c.j + 1 == c.blocks))) {
                FinishDeferred();
            }
            UseSet(c.set);
            if (c.j == 0) {
                units_[c.set] = c;
                StartUnit(c.rows);
            }
            if (vLoop_ && c.j + 1 == c.blocks && issued_ >= vMeetAt_) {  // ahead of the unit's sum bound
                VPassMeet();
            }
            const uint32_t slot = issued_ % WS_SLOTS;
            const KvBlock after = UnitBlockAt(c.u, p_->blockKv, c.j + 1);
            SoftmaxBlock(c.u, UnitBlockAt(c.u, p_->blockKv, c.j), c.rowOff, c.rows, slot,
                         c.j + 1 < c.blocks ? &after : nullptr);
            blockSet_[slot] = c.set;
            blockLast_[slot] = c.j + 1 == c.blocks;
            const uint64_t done = issued_++;
            FinishDeferred();  // the unit an earlier iteration folded, now behind this P store
            // A block that finishes its unit is folded right after this P store: the unit's final
            // sum and output stores then go out ahead of the next S load and the K/V source's
            // copies instead of behind them, where the next P waited for them (decode's partial
            // rows at every unit boundary). Other blocks fold after the next S load.
            if (issued_ > LAG && blockLast_[(issued_ - LAG - 1) % WS_SLOTS]) {
                RetireUpTo(issued_ - LAG, Variant::Kv::StagedNz());
            }
            Cursor n = c;
            ok = Advance(n);
            if (ok) {
                OwnThrough(n);
                Prefetch(n.u, UnitBlockAt(n.u, p_->blockKv, n.j), n.rowOff, n.rows, issued_ % WS_SLOTS);
            }
            // The int8 x int8 core's O products come with that S load (int8_digit_core.h): its
            // fold goes after the source's conversions, which the vector pipe then runs while
            // the load is on the way.
            if (issued_ > LAG && !Variant::Kv::Int8Digits()) {
                RetireUpTo(issued_ - LAG);
            }
            // After the P store (the cube's P.V does not wait for it) and the next block's first
            // S load (which would queue behind the source's reads).
            kv_.StreamAhead(done);
            if (issued_ > LAG && Variant::Kv::Int8Digits()) {
                RetireUpTo(issued_ - LAG);
            }
            if (vLoop_ && vPass_.Step()) {  // the max|V| pass's next chunk, behind this block's stores
                VPassArrive();
            }
            if constexpr (KV_NZ) {  // the own regions' (or the late share's) next chunks, behind this block's stores
                kvNz_.OwnStep(split_, OWN_STEP_CHUNKS);
                kvNz_.LateStep();
                kvNz_.QStep(split_, Q_STEP_CHUNKS);
                // The meeting's wait a block before the cube's P.V of the first unit's block
                // blocks - WS_SLOTS + 1, which loads the next unit's first K/V pair ahead (the
                // wait at the second unit's first S modelled B2 N8 S2K D256 313.4 us, here 310.9).
                if (c.unit == firstUnit_ && c.j + WS_SLOTS + 1 >= c.blocks) {
                    kvNz_.LateFinish();
                }
            }
            c = n;
        }
        if constexpr (KV_NZ) {
            kvNz_.OwnEnd(split_);
            kvNz_.LateFinish();  // a core of one unit (or none)
            kvNz_.QFinish(split_);
        }
        VPassMeet();  // a core of few blocks (or none): every vector core meets once
        RetireUpTo(issued_);
        for (uint32_t b = 0; b < sBufs_; ++b) {  // drain
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_S + b);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
        FinishStored();
        kv_.StreamEnd();
    }

private:
    static constexpr uint32_t LAG = WS_SLOTS - 1;
    // Chunks of the core's own K/V regions staged after each softmax block (kv_nz.h): one
    // (modelled B4 N16 S1K 153.5 us; two 154.6, four 157.2, one after every other block 154.7).
    static constexpr uint32_t OWN_STEP_CHUNKS = 1;
    // Steps of the late K/V share (kv_nz.h LateStart) before the first softmax block: the lead
    // of the staging front over the cubes' first reads of the caller's rows.
    static constexpr uint32_t LATE_LEAD_STEPS = 4;
    // Chunks of the core's Q share (kv_nz.h QStart) after each softmax block once the late
    // share is done: a unit's 56 rows per vector core in four chunks of 16 over its 32 blocks.
    static constexpr uint32_t Q_STEP_CHUNKS = 1;
    // Blocks from the last step of the max|V| pass (VPassArrive) to this core's wait for every
    // other's (VPassMeet): their block streams drift apart by a few blocks. Modelled causal B1
    // N16 S4K D64 (24 steps): 252.1 us, under the bandwidth ledger 276.8; a lag of 1 252.1 /
    // 277.4; two steps per block (the first units' sums in fp16 too) 252.0 but 278.2 and B1 N8
    // S4K D64 258.2 -> 259.2 under the ledger.
    static constexpr uint64_t V_MEET_LAG = 4;

    // Rows up to which a unit's finish tests visibility in a scalar pass (VisibleRows).
    static constexpr uint32_t SCALAR_FINISH_ROWS = 8;

    // A position in the stream: unit `unit` (decoded in u, this core's rows of it), block j of
    // its `blocks`, statistics set `set`.
    struct Cursor {
        uint64_t unit = 0;
        WorkUnit u = {};
        uint32_t rowOff = 0, rows = 0, blocks = 0, j = 0, set = 0;
    };

    // Before the first S of a unit is waited for: the own K/V regions up to its unit staged
    // (the cube's loads of that unit wait for its region, kv_nz.h).
    // With late staging: at the latest before the first S of the second unit, this core's share
    // staged and the vector cores met (the cube loads that unit's keys from the staged regions).
    __aicore__ inline void OwnThrough(const Cursor &c)
    {
        if constexpr (KV_NZ) {
            if (c.j == 0) {
                kvNz_.OwnThrough(split_, c.unit);
                if (c.unit != firstUnit_) {
                    kvNz_.LateFinish();
                }
                // the cube loads the first staged Q block during this unit's first S
                if (c.unit + 1 >= split_.Begin(core_) + p_->qNzFirst) {
                    kvNz_.QFinish(split_);
                }
            }
        }
    }

    // c := the first block of the first unit from `unit` on with key blocks. A unit without any
    // (no visible key) is finished on the spot with zero rows, after everything in flight.
    __aicore__ inline bool Seek(Cursor &c, uint64_t unit)
    {
        // The unit before on this core (Advance), whose K/V the cube's cache may still hold.
        const WorkUnit prev = c.u;
        const WorkUnit *before = c.blocks != 0 && unit == c.unit + 1 ? &prev : nullptr;
        for (; unit < split_.End(core_); ++unit) {
            c.unit = unit;
            split_.Decode(unit, c.u);
            mask_.KvRange(c.u);
            split_.ClipKeys(c.u);
            PlanKvReuse(*p_, mask_, before, c.u);
            if (unit == split_.Begin(core_)) {
                PlanFirstRotation(*p_, core_, c.u);
            }
            before = nullptr;
            // Under a band the lower rows of a diagonal tile see more keys than the upper ones:
            // the halves swap vector cores from one q-block to the next so both carry the same
            // work (the cube waits for the slower one's P). By q-block, not unit: the heads of a
            // q-block keep their rows on the same core, where the band mask's clear tiles are
            // known (mask_band.h TileSlot).
            const uint32_t half = (c.u.rows + 1) / 2;
            const bool upper = (sub_ == 0) != (mask_.HasRowsBefore() && (c.u.q0 / p_->blockQ & 1) != 0);
            c.rowOff = upper ? 0 : half;
            c.rows = upper ? half : c.u.rows - half;
            c.blocks = KvBlockCount(c.u.kvBegin, c.u.kvEnd, p_->blockKv);
            c.j = 0;
            c.set = static_cast<uint32_t>(unitsSeen_++ % WS_SLOTS);
            flushedAny_[c.set] = false;
            if (c.blocks != 0) {
                return true;
            }
            if constexpr (KV_NZ) {
                // The retire waits for P.V of blocks the cube issued before the next keyed unit's
                // S, which may wait for a later own region: all of them staged first (rare: a unit
                // without keys).
                kvNz_.OwnThrough(split_, ~uint64_t(0));
            }
            RetireUpTo(issued_);
            units_[c.set] = c;
            UseSet(c.set);
            StartUnit(c.rows);
            FinishUnit(c.set, 0);  // no key block: no final sum
        }
        return false;
    }

    // The next block of the stream.
    __aicore__ inline bool Advance(Cursor &c)
    {
        if (++c.j < c.blocks) {
            return true;
        }
        return Seek(c, c.unit + 1);
    }

    // Folds P.V of the stream blocks up to `end` into O; a unit's last block also finishes it.
    // defer: a unit finished by the last of these blocks is finished by FinishDeferred after
    // the next block's P store instead. With K/V produced on the chip (the decode ring) the
    // finish's stores (split-KV partials) would otherwise sit on MTE3 between this P store and
    // the ring write the next P store queues behind, and its final-sum load, add and stores
    // form a chain the next block's P waits for at every unit boundary; one block later the
    // final sum is long written and the stores follow a P store the cube is not waiting for.
    // The unit's slot stays valid: the finish reads the final O slot and the unit's own
    // statistics set, and the next fold (which waits for the cube's later O_READY) comes after.
    __aicore__ inline void RetireUpTo(uint64_t end, bool defer = false)
    {
        if (retired_ < end) {
            FinishDeferred();
        }
        for (; retired_ < end; ++retired_) {
            const uint32_t slot = retired_ % WS_SLOTS;
            const Cursor &c = units_[blockSet_[slot]];
            AccumulateO(c.rowOff, c.rows, slot);
            if (blockLast_[slot]) {
                if (defer && retired_ + 1 == end) {
                    finishPending_ = true;
                    finishSet_ = blockSet_[slot];
                    finishSlot_ = slot;
                    continue;
                }
                UseSet(blockSet_[slot]);
                FinishUnit(blockSet_[slot], slot);
            }
        }
    }

    // The unit RetireUpTo left to finish, if any.
    __aicore__ inline void FinishDeferred()
    {
        if (finishPending_) {
            finishPending_ = false;
            UseSet(finishSet_);
            FinishUnit(finishSet_, finishSlot_);
        }
    }

    // mOld_ / sum_ / mTrue_ := statistics set `set`.
    __aicore__ inline void UseSet(uint32_t set)
    {
        mOld_ = mOldSet_[set];
        sum_ = sumSet_[set];
        mTrue_ = mTrueSet_[set];
    }

    __aicore__ inline void StartUnit(uint32_t rows)
    {
        if (rows == 0) {
            return;
        }
        AscendC::Duplicate(mOld_, MASKED_SCORE, static_cast<int32_t>(rows));
        AscendC::Duplicate(mTrue_, MASKED_SCORE, static_cast<int32_t>(rows));
        AscendC::Duplicate(sum_, 0.0f, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // Event ids of the S buffers (id 0 is PipeSync's): MTE2_V EVT_S + b "S is in buffer b",
    // V_MTE2 EVT_S + b "the vector is done with buffer b".
    static constexpr int32_t EVT_S = VEC_EVT_S;
    static constexpr int32_t EVT_P = VEC_EVT_P;
    static constexpr int32_t EVT_FINISH = VEC_EVT_FINISH;

    // The O-slot rows are free again: the last finish's stores from them are done.
    __aicore__ inline void FinishStored()
    {
        if (finishInFlight_) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_FINISH);
            finishInFlight_ = false;
        }
    }

    // Mask rows of one sub-block: query rows [row0, row0 + rows), the keys of blk.
    struct MaskRows {
        uint32_t row0 = 0, rows = 0;
        KvBlock blk = {0, 0};
    };

    // The S and mask loads of a key block: which rows and columns of a band tile are read
    // (forward_vector_loads.h).
    __aicore__ inline uint32_t SubRows(uint32_t h0, uint32_t rows) const;
    __aicore__ inline uint32_t Unwritten(const WorkUnit &u, const KvBlock &blk, uint32_t row0, uint32_t rows) const;
    __aicore__ inline uint32_t Unstored(const WorkUnit &u, const KvBlock &blk, uint32_t row0, uint32_t rows) const;
    __aicore__ inline void LoadS(const WorkUnit &u, const KvBlock &blk, uint32_t slot, uint32_t rowOff, uint32_t rows,
                                 uint32_t b);
    __aicore__ inline void Prefetch(const WorkUnit &u, const KvBlock &next, uint32_t rowOff, uint32_t rows,
                                    uint32_t slot);
    __aicore__ inline void LoadMask(const WorkUnit &u, const MaskRows &m);
    __aicore__ inline void IssueMask(const WorkUnit &u, const MaskRows &m);

    // The online softmax of a key block, S -> P for the cube (forward_vector_softmax.h).
    __aicore__ inline void SoftmaxBlock(const WorkUnit &u, const KvBlock &blk, uint32_t rowOff, uint32_t rows,
                                        uint32_t slot, const KvBlock *after);
    __aicore__ inline bool SoftmaxRows(const WorkUnit &u, const KvBlock &blk, uint32_t rowOff, uint32_t h0,
                                       uint32_t rows, uint32_t slot, uint32_t cur, const MaskRows &ahead);
    __aicore__ inline bool SoftmaxLive(const WorkUnit &u, const KvBlock &blk, uint32_t h0, uint32_t dead, uint32_t row0,
                                       uint32_t live, uint32_t slot, const MaskRows &ahead, bool &pFree);
    __aicore__ inline bool Moved(const AscendC::LocalTensor<float> &mNew, const AscendC::LocalTensor<float> &mOld,
                                 uint32_t rows);
    template <bool isMax> __aicore__ inline void RowReduce(uint32_t rows);

    // The output: the P.V fold into O, the unit's normalisation, cast and stores
    // (forward_vector_output.h).
    __aicore__ inline void AccumulateO(uint32_t rowOff, uint32_t rows, uint32_t slot);
    __aicore__ inline void AddFinalSum(uint32_t rowOff, uint32_t rows, uint32_t lastSlot, bool load);
    __aicore__ inline void AddSlot(uint32_t rowOff, uint32_t rows, uint32_t slot, bool load = false);
    __aicore__ inline void AddHalfSlot(uint32_t rowOff, uint32_t rows, uint32_t slot, bool load);
    __aicore__ inline bool Fp16SumSafe(uint32_t rows, uint32_t cols);
    __aicore__ inline void StartSumBound(uint32_t rows);
    __aicore__ inline void TakeSumBound(float pMax);
    // bcast_ floats of the l bound (StartSumBound, Moved): l_before, exp of a move, the partial maxima
    static constexpr uint32_t SUM_BOUND_L = 0, SUM_BOUND_EXP = 8, SUM_BOUND_PARTS = 16;

    // Whether the staging finds the launch's largest |V| (kv_nz.h VMaxKnown), in the broadcast
    // buffer's rowsPerVec x 32 bytes as its scratch.
    __aicore__ inline bool VMaxKnown() const
    {
        return kvNz_.VMaxKnown(score_.KeyScale()) && p_->rowsPerVec * 32 >= VAbsMax<T>::SCRATCH * sizeof(T) &&
               17 * p_->usedCores + 128 <= sBufs_ * sElems_;  // ReadVMax's floats
    }

    // K alone staged before a SyncAll (not EarlyS: the scale rides on K; no per-core, late or Q
    // staging), V left unstaged: FLAG_KV_STAGED is not used past that barrier, so the pass's
    // meeting may take it (the host plans the pass only there, kv_staging_tiling.h PlanVAbsMax).
    __aicore__ inline bool KOnlyPassFree() const
    {
        return p_->kvNz == KV_NZ_K_ONLY && p_->kvNzOwnRows == 0 && p_->kvNzLate == 0 && p_->qNzUnits == 0 &&
               !kvNz_.EarlyS(score_.KeyScale(), LAZY_PV);
    }

    // Whether the max|V| pass runs in the main loop (ForwardParams::vAbsMaxElems, v_abs_max.h):
    // fp16, lazy P.V, nothing staged or K alone before a SyncAll (its meeting takes the staging's
    // flag id: KOnlyPassFree), and ReadVMax's floats fit its buffer.
    __aicore__ inline bool VLoop() const
    {
        return AscendC::IsSameType<T, half>::value && LAZY_PV && (!KV_NZ || KOnlyPassFree()) && p_->vAbsMaxElems != 0 &&
               p_->vAbsMaxChunk >= 128 && (17 * p_->usedCores + 128) * 4 <= p_->vAbsMaxChunk * sizeof(T);
    }

    // The rest of this core's share of the pass, its largest |V| posted (CtrlVMax), then its
    // arrival at the vector cores' meeting (on MTE3, once). Until VPassMeet every final sum
    // stays fp32 (vMaxKnown_ false).
    __aicore__ inline void VPassArrive()
    {
        if (!vLoop_ || vArrived_) {
            return;
        }
        vArrived_ = true;
        while (!vPass_.Step()) {}
        if constexpr (AscendC::IsSameType<T, half>::value) {
            PipeSync<AscendC::HardEvent::V_S>();
            const float m = static_cast<float>(vPass_.Max().GetValue(128));
            if (core_ < p_->usedCores) {
                WriteCtrl(ctrl_, CtrlVMax(sub_), *reinterpret_cast<const int32_t *>(&m));
            }
        }
        AscendC::CrossCoreSetFlag<0, PIPE_MTE3>(FLAG_KV_STAGED);
    }

    // This core's arrival, the wait for every vector core's (a barrier of the launch's vector
    // cores on FLAG_KV_STAGED's id: no staging of K/V runs beside the pass, kv_staging_tiling.h
    // PlanVAbsMax), then the launch's largest |V| (ReadVMax, in the pass's buffer); once. From
    // stream block vMeetAt_ on, ahead of a unit's last block (every core's share is folded
    // V_MEET_LAG blocks before, so the wait is short), else at the stream's end. No deadlock:
    // a core's arrival waits for nothing of the others, and the two vector cores of a cube run
    // the same blocks, so neither waits here for P the other has not stored.
    __aicore__ inline void VPassMeet()
    {
        if (!vLoop_ || vMet_) {
            return;
        }
        vMet_ = true;
        VPassArrive();
        AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);
        PipeSync<AscendC::HardEvent::V_MTE2>();  // the pass's folds wrote the buffer ReadVMax loads into
        ReadVMax(wsBase_, vPassBuf_.Get<float>());
    }

    // vMax_ := the largest of every planned vector core's staged |V| (CtrlVMax of each core's
    // control lines), after the staging's barrier or the pass's meeting: per vector core index
    // one strided copy of that word of every core into buf (the still free S buffer, the
    // pass's buffer; a 32-byte block each; only the
    // word itself: the rest of its line is the owner's "rescaled" word, which it writes while
    // this runs), the values reduced to one: two copies and one scalar read at each vector
    // core's start, not a scalar read per core.
    __aicore__ inline void ReadVMax(GM_ADDR ws, const AscendC::LocalTensor<float> &buf)
    {
        const ForwardWorkspace wl = ForwardWorkspaceLayout(p_->wsSlotS, p_->wsSlotP, p_->wsSlotO);
        AscendC::GlobalTensor<float> lines;
        lines.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + wl.ctrl));
        const uint32_t cores = p_->usedCores;
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(cores), 4, static_cast<uint32_t>(p_->wsBytesPerCore - 4),
                                        0, 0);
        for (uint32_t s = 0; s < 2; ++s) {
            AscendC::DataCopyPad(buf[s * cores * 8], lines[CtrlVMax(s)], copy,
                                 AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0));
        }
        const AscendC::LocalTensor<float> picked = buf[2 * cores * 8];
        const AscendC::LocalTensor<float> one = picked[AlignUp(2 * cores, 64)];
        // 0 where the reductions below do not run (a timing-only model run skips vector
        // arithmetic): max|V| = 0 is the fp16 path, the one standard-normal inputs take.
        one.SetValue(0, 0.0f);
        PipeSync<AscendC::HardEvent::S_V>();
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::WholeReduceMax(picked, buf, 1, static_cast<int32_t>(2 * cores), 1, 1, 1,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);  // word 0 of each block
        AscendC::PipeBarrier<PIPE_V>();
        for (uint32_t k = 0; k < 2 * cores; k += 64) {  // 64 lanes per reduction, then their values
            const uint32_t n = 2 * cores - k < 64 ? 2 * cores - k : 64;
            AscendC::WholeReduceMax(one[8 + k / 64], picked[k], static_cast<int32_t>(n), 1, 1, 1, 8,
                                    AscendC::ReduceOrder::ORDER_ONLY_VALUE);
        }
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::WholeReduceMax(one, one[8], static_cast<int32_t>((2 * cores + 63) / 64), 1, 1, 1, 8,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);
        PipeSync<AscendC::HardEvent::V_S>();
        const float m = one.GetValue(0);
        PipeSync<AscendC::HardEvent::S_V>();
        vMax_ = m;
        vMaxKnown_ = m == m;
    }
    __aicore__ inline void FinishUnit(uint32_t set, uint32_t lastSlot);
    __aicore__ inline void StoreRows(const WorkUnit &u, uint32_t rowOff, uint32_t rows);
    __aicore__ inline void FinishRows(const WorkUnit &u, uint32_t rowOff, uint32_t rows, uint32_t blocks,
                                      uint32_t lastSlot, bool direct, bool unflushed);
    __aicore__ inline void VisibleRows(const WorkUnit &u, uint32_t rowOff, uint32_t rows, bool trueStats);
    __aicore__ inline void ScaleRows(const AscendC::LocalTensor<float> &x, uint32_t rows);

    const ForwardParams *p_ = nullptr;
    typename Variant::Split split_;
    typename Variant::Kv kv_;
    typename Variant::Score score_;
    typename Variant::Mask mask_;
    typename Variant::Softmax softmax_;
    uint32_t core_ = 0;
    uint32_t sub_ = 0;
    uint64_t firstUnit_ = 0;  // this core's first unit with keys (late staging: OwnThrough)

    AscendC::GlobalTensor<T> out_;
    AscendC::GlobalTensor<float> statMax_, statSum_;
    AscendC::GlobalTensor<float> wsS_;
    AscendC::GlobalTensor<T> wsP_;
    KvNz<T> kvNz_;
    AscendC::GlobalTensor<float> wsO_;
    AscendC::GlobalTensor<half> wsOh_;  // the O slots as fp16 elements (fp16 final sums)

    AscendC::TBuf<AscendC::TPosition::VECCALC> sBuf_, tmpBuf_, pBuf_, maskBuf_, accBuf_, partBuf_, statBuf_, bcastBuf_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> ownBuf_;    // per-core K/V staging (kv_nz.h)
    AscendC::TBuf<AscendC::TPosition::VECCALC> vPassBuf_;  // the max|V| pass (VLoop)
    AscendC::LocalTensor<float> s_, tmp_, acc_, part_, bcast_;
    uint32_t sBufs_ = 1, sElems_ = 0, sIdx_ = 0, partRows_ = 0;  // S buffers, elements each, the next one
    uint32_t vecRows_ = 0;                                       // rows per sub-block
    bool prefetched_ = false;                                    // the next block's S is already loading
    bool maskAhead_ = false;                                     // the next Apply's mask rows are already loading
    AscendC::LocalTensor<float> mOld_, mNew_, sum_, rowTmp_, inv_, mTrue_;
    // Statistics per unit in flight (set = unit count % WS_SLOTS); mOld_ / sum_ / mTrue_ view one.
    AscendC::LocalTensor<float> mOldSet_[WS_SLOTS], sumSet_[WS_SLOTS], mTrueSet_[WS_SLOTS];
    Cursor units_[WS_SLOTS];       // the unit of each statistics set
    uint32_t blockSet_[WS_SLOTS];  // per slot: the set of the block in it and whether it is its unit's last
    bool blockLast_[WS_SLOTS];
    uint64_t issued_ = 0, retired_ = 0, unitsSeen_ = 0;  // stream blocks softmaxed / folded; units decoded
    bool asyncOut_ = false;                              // the finish's stores leave from part_, unwaited
    bool stagingInS_ = false;                            // the K/V staging pass converts into the S buffers
    bool finishInFlight_ = false;              // EVT_FINISH is set for stores from part_ the core has not waited for
    bool finishPending_ = false;               // RetireUpTo deferred the finish of a unit:
    uint32_t finishSet_ = 0, finishSlot_ = 0;  // its statistics set and last block's slot
    AscendC::GlobalTensor<int32_t> ctrl_;
    GM_ADDR wsBase_ = nullptr;
    // The max|V| pass in the main loop (VLoop): the caller's V, the pass, whether this core
    // arrived at the meeting and met, and the stream block from which it meets.
    AscendC::GlobalTensor<T> value_;
    VAbsMax<T> vPass_;
    bool vLoop_ = false, vArrived_ = false, vMet_ = false;
    uint64_t vMeetAt_ = 0;
    // fp16 final sums: the launch's largest |V| where known (ReadVMax; else vMaxKnown_ false)
    // and per set whether the cube wrote its unit's final sum in fp16 (AccumulateO).
    float vMax_ = 0.0f;
    bool vMaxKnown_ = false;
    bool fp16Final_[WS_SLOTS] = {};
    bool finalFp16_ = false;  // the unit FinishRows finishes
    bool sumBound_ = false;   // the block is a unit's last: bound its l (StartSumBound)
    float lBefore_ = 0.0f, pMax_ = 0.0f;
    AscendC::GlobalTensor<uint16_t> zero_;         // the workspace's zero fractal
    bool rescaled_[WS_SLOTS];                      // per slot: whether this core moved its reference at that block
    bool flushedAny_[WS_SLOTS] = {};               // per set: whether the cube flushed at some block of its unit
    AscendC::LocalTensor<float> alpha_[WS_SLOTS];  // per workspace slot: its block's rescale factor
};

}  // namespace AttentionCore

// The member functions the class declares above, by stage.
#include "forward_vector_loads.h"
#include "forward_vector_softmax.h"
#include "forward_vector_output.h"
