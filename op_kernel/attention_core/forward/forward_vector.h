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
        if constexpr (KV_NZ) {
            kvNz_.Init(p, t.key, t.value, t.workspace);
        }
        sub_ = AscendC::GetSubBlockIdx();
        GM_ADDR ws = t.workspace + core_ * p->wsBytesPerCore;
        const ForwardWorkspace wl = ForwardWorkspaceLayout(p->wsSlotS, p->wsSlotP, p->wsSlotO);
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(ws + wl.p));
        wsO_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + wl.o));
        ctrl_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + wl.ctrl));
        zero_.SetGlobalBuffer(reinterpret_cast<__gm__ uint16_t *>(ws + wl.zero));

        const uint32_t r = p->rowsPerVec;
        const uint32_t c = p->blockKv;
        const uint32_t dp = p->headDimAlign;
        vecRows_ = p->vecRows != 0 && p->vecRows < r ? p->vecRows : r;
        const uint32_t v = vecRows_;  // S, P and mask buffers hold one sub-block
        sBufs_ = p->vecSBufs == 2 ? 2 : 1;
        sElems_ = v * c;
        const ForwardVectorUb ub = ForwardVectorUbLayout(r, v, c, dp, sizeof(T), sBufs_);  // forward_layout.h
        partRows_ = ub.partRows;
        pipe->InitBuffer(sBuf_, ub.s);
        pipe->InitBuffer(tmpBuf_, ub.tmp);
        pipe->InitBuffer(pBuf_, ub.p);
        pipe->InitBuffer(maskBuf_, ub.mask);
        pipe->InitBuffer(accBuf_, ub.acc);
        pipe->InitBuffer(partBuf_, ub.part);
        pipe->InitBuffer(statBuf_, ub.stats);
        pipe->InitBuffer(bcastBuf_, ub.bcast);
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
        if constexpr (KV_NZ) {  // K/V in Nz order for the cube (the accumulator and tmp are free scratch)
            kvNz_.Prepare(accBuf_.Get<T>(), tmpBuf_.Get<T>(), AscendC::GetBlockIdx(), p_->usedCores * 2,
                          score_.KeyScale());
        }
        if constexpr (Variant::Mask::HasPrepass()) {  // the mask summary (the accumulator is free scratch)
            mask_.Prepare(accBuf_.Get<uint8_t>(), p_->rowsPerVec * p_->headDimAlign * 4, AscendC::GetBlockIdx(),
                          p_->usedCores * 2);
        }
        if constexpr (Variant::Mask::HasPrepass() || KV_NZ) {
            AscendC::SyncAll<false>();
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
        while (ok) {
            UseSet(c.set);
            if (c.j == 0) {
                units_[c.set] = c;
                StartUnit(c.rows);
            }
            const uint32_t slot = issued_ % WS_SLOTS;
            const KvBlock after = KvBlockAt(c.u.kvBegin, c.u.kvEnd, p_->blockKv, c.j + 1);
            SoftmaxBlock(c.u, KvBlockAt(c.u.kvBegin, c.u.kvEnd, p_->blockKv, c.j), c.rowOff, c.rows, slot,
                         c.j + 1 < c.blocks ? &after : nullptr);
            blockSet_[slot] = c.set;
            blockLast_[slot] = c.j + 1 == c.blocks;
            const uint64_t done = issued_++;
            // A block that finishes its unit is folded right after this P store: the unit's final
            // sum and output stores then go out ahead of the next S load and the K/V source's
            // copies instead of behind them, where the next P waited for them (decode's partial
            // rows at every unit boundary). Other blocks fold after the next S load.
            if (issued_ > LAG && blockLast_[(issued_ - LAG - 1) % WS_SLOTS]) {
                RetireUpTo(issued_ - LAG);
            }
            Cursor n = c;
            ok = Advance(n);
            if (ok) {
                Prefetch(n.u, KvBlockAt(n.u.kvBegin, n.u.kvEnd, p_->blockKv, n.j), n.rowOff, n.rows,
                         issued_ % WS_SLOTS);
            }
            if (issued_ > LAG) {
                RetireUpTo(issued_ - LAG);
            }
            // After the P store (the cube's P.V does not wait for it) and the next block's first
            // S load (which would queue behind the source's reads).
            kv_.StreamAhead(done);
            c = n;
        }
        RetireUpTo(issued_);
        for (uint32_t b = 0; b < sBufs_; ++b) {  // drain
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_S + b);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_P);
        kv_.StreamEnd();
    }

private:
    static constexpr uint32_t LAG = WS_SLOTS - 1;

    // A position in the stream: unit `unit` (decoded in u, this core's rows of it), block j of
    // its `blocks`, statistics set `set`.
    struct Cursor {
        uint64_t unit = 0;
        WorkUnit u;
        uint32_t rowOff = 0, rows = 0, blocks = 0, j = 0, set = 0;
    };

    // c := the first block of the first unit from `unit` on with key blocks. A unit without any
    // (no visible key) is finished on the spot with zero rows, after everything in flight.
    __aicore__ inline bool Seek(Cursor &c, uint64_t unit)
    {
        for (; unit < split_.End(core_); ++unit) {
            c.unit = unit;
            split_.Decode(unit, c.u);
            mask_.KvRange(c.u);
            const uint32_t half = (c.u.rows + 1) / 2;
            c.rowOff = sub_ == 0 ? 0 : half;
            c.rows = sub_ == 0 ? half : c.u.rows - half;
            c.blocks = KvBlockCount(c.u.kvBegin, c.u.kvEnd, p_->blockKv);
            c.j = 0;
            c.set = static_cast<uint32_t>(unitsSeen_++ % WS_SLOTS);
            if (c.blocks != 0) {
                return true;
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
    __aicore__ inline void RetireUpTo(uint64_t end)
    {
        for (; retired_ < end; ++retired_) {
            const uint32_t slot = retired_ % WS_SLOTS;
            const Cursor &c = units_[blockSet_[slot]];
            AccumulateO(c.rowOff, c.rows, slot);
            if (blockLast_[slot]) {
                UseSet(blockSet_[slot]);
                FinishUnit(blockSet_[slot], slot);
            }
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

    // Rows of the sub-block that starts at row h0 of this core's `rows`.
    __aicore__ inline uint32_t SubRows(uint32_t h0, uint32_t rows) const
    {
        return rows - h0 < vecRows_ ? rows - h0 : vecRows_;
    }

    // Of the query rows [row0, row0 + rows) of u, how many lead and have no S in block blk's slot
    // (lazy P.V: the cube left them out, policies.h SkippedSRows). A multiple of 8, or `rows`.
    __aicore__ inline uint32_t Unwritten(const WorkUnit &u, const KvBlock &blk, uint32_t row0, uint32_t rows) const
    {
        if constexpr (!LAZY_PV) {
            return 0;
        }
        const uint32_t skip = u.q0 + SkippedSRows(mask_, u, blk.k0);
        return skip <= row0 ? 0 : (skip - row0 >= rows ? rows : skip - row0);
    }

    // Of the query rows [row0, row0 + rows) of u, how many lead and need no P in block blk's slot
    // (lazy P.V with P in Nz order: the cube zeroes them itself, policies.h SkippedPRows).
    __aicore__ inline uint32_t Unstored(const WorkUnit &u, const KvBlock &blk, uint32_t row0, uint32_t rows) const
    {
        if constexpr (!LAZY_PV || !NzHandoff<T>::ENABLED) {
            return 0;
        }
        const uint32_t skip = u.q0 + SkippedPRows(mask_, u, blk.k0);
        return skip <= row0 ? 0 : (skip - row0 >= rows ? rows : skip - row0);
    }

    // This core's rows [rowOff, rowOff + rows) of S slot `slot` (block blk of u) -> S buffer `b`
    // (once the vector is done with it), the rows the cube wrote at their places.
    __aicore__ inline void LoadS(const WorkUnit &u, const KvBlock &blk, uint32_t slot, uint32_t rowOff, uint32_t rows,
                                 uint32_t b)
    {
        const uint32_t c = p_->blockKv;
        const uint32_t skip = Unwritten(u, blk, u.q0 + rowOff, rows);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_S + b);
        if (skip < rows) {
            const AscendC::LocalTensor<float> dst = sBuf_.Get<float>()[b * sElems_ + skip * c];
            const AscendC::GlobalTensor<float> src = wsS_[slot * (p_->wsSlotS / 4) + (rowOff + skip) * c];
            // lazy P.V: no columns past those the rows see (SeenSCols; Apply's band sets them)
            const uint32_t seen = LAZY_PV ? SeenSCols(mask_, u, rowOff + skip, rows - skip, blk.k0, c) : c;
            if (seen < c) {
                constexpr uint32_t PER_BLOCK = 32 / sizeof(float);
                const uint16_t gap = static_cast<uint16_t>((c - seen) / PER_BLOCK);
                AscendC::DataCopy(dst, src,
                                  AscendC::DataCopyParams(static_cast<uint16_t>(rows - skip),
                                                          static_cast<uint16_t>(seen / PER_BLOCK), gap, gap));
            } else {
                AscendC::DataCopy(dst, src, (rows - skip) * c);
            }
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_S + b);
    }

    // As soon as this block's P is out: the next block's S (with two S buffers,
    // ForwardParams::vecSBufs) and its mask rows, so the loads overlap the O fold and the next
    // block's start.
    __aicore__ inline void Prefetch(const WorkUnit &u, const KvBlock &next, uint32_t rowOff, uint32_t rows,
                                    uint32_t slot)
    {
        if (rows == 0) {
            return;
        }
        const uint32_t first = SubRows(0, rows);
        if (sBufs_ == 2 && !prefetched_) {
            AscendC::CrossCoreWaitFlag(FLAG_S_READY);
            LoadS(u, next, slot, rowOff, first, sIdx_);
            prefetched_ = true;
        }
        LoadMask(u, {u.q0 + rowOff, first, next});
    }

    // Mask rows of one sub-block: query rows [row0, row0 + rows), the keys of blk.
    struct MaskRows {
        uint32_t row0 = 0, rows = 0;
        KvBlock blk = {0, 0};
    };

    // The mask rows of the next Apply, unless SoftmaxRows already issued them.
    __aicore__ inline void LoadMask(const WorkUnit &u, const MaskRows &m)
    {
        if (maskAhead_) {
            maskAhead_ = false;
            return;
        }
        IssueMask(u, m);
    }

    // The mask rows of m at their places in the mask buffer, but for the leading rows without S
    // (Unwritten: SoftmaxRows gives them P = 0 without Apply) and, with lazy P.V, the columns
    // past the keys the rows see (SeenSCols: Apply's band sets those scores whatever the mask
    // buffer holds there).
    __aicore__ inline void IssueMask(const WorkUnit &u, const MaskRows &m)
    {
        const uint32_t skip = Unwritten(u, m.blk, m.row0, m.rows);
        if (skip < m.rows) {
            const uint32_t cols =
                LAZY_PV ? SeenSCols(mask_, u, m.row0 + skip - u.q0, m.rows - skip, m.blk.k0, m.blk.cols) : m.blk.cols;
            mask_.Load(maskBuf_.Get<uint8_t>()[skip * p_->blockKv], u, m.row0 + skip, m.rows - skip, m.blk.k0, cols,
                       p_->blockKv);
        }
    }

    // One key block: S -> P (online softmax) sub-block by sub-block, P to the workspace for the
    // cube. With two S buffers the next sub-block's S loads during this one's softmax. Where the
    // mask reads rows per block (the vector cores then pace the pipeline, the cube's S is
    // ready early) the last sub-block's softmax also overlaps the load of the first S rows of
    // `after` (the unit's next block, if any); elsewhere that wait for the next S would hold
    // this block's P back from a cube that is waiting for it, so those rows load after P.
    __aicore__ inline void SoftmaxBlock(const WorkUnit &u, const KvBlock &blk, uint32_t rowOff, uint32_t rows,
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
            WriteCtrl(ctrl_, CtrlRescaled(slot, sub_), rescaled ? 1 : 0);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FlagPReady(slot));
    }

    // The online softmax of one sub-block: rows [h0, h0 + rows) of this core's rows (statistics
    // at offset h0) from S buffer `cur`; P to the slot. Returns whether the rows' reference max
    // moved (lazy P.V; always true otherwise). A sub-block that keeps its reference while another
    // one of the block moves gets alpha = 1, so the block's rescale acts on every row alike.
    __aicore__ inline bool SoftmaxRows(const WorkUnit &u, const KvBlock &blk, uint32_t rowOff, uint32_t h0,
                                       uint32_t rows, uint32_t slot, uint32_t cur, const MaskRows &ahead)
    {
        const uint32_t c = p_->blockKv;
        // The leading rows that see no key of this block (a diagonal tile's upper rows) keep
        // their statistics (alpha 1) and get P = 0 without the softmax passes: `live` rows from
        // h0 + dead on take them. A multiple of 8 (32-byte aligned statistics); all rows only
        // where the cube wrote no S for any of them, else one row at least. The rows without S
        // (Unwritten: a multiple of 8 of those before the band, or all) never reach past `dead`.
        const uint32_t row0 = u.q0 + rowOff + h0;
        const uint32_t before = mask_.RowsBefore(u, row0, rows, blk.k0);
        const uint32_t dead =
            Unwritten(u, blk, row0, rows) == rows ? rows : (before < rows ? before : rows - 1) / 8 * 8;
        const uint32_t live = rows - dead;
        const AscendC::LocalTensor<float> sAll = sBuf_.Get<float>()[cur * sElems_];
        s_ = sAll[dead * c];
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_S + cur);
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
        if constexpr (NzHandoff<T>::ENABLED) {  // P in the cube's Nz order (nz_handoff.h)
            // lazy P.V: no P past the columns the cube's P.V reads (SeenPCols)
            const uint32_t pCols = LAZY_PV ? AlignUp(SeenPCols(mask_, u, blk.k0, blk.cols), 16) : c;
            if (unstored < rows) {
                NzHandoff<T>::CastArranged(pOut, sAll, rows, c, unstored);
            }
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_S + cur);  // done with this S buffer
            if (unstored < rows) {
                PipeSync<AscendC::HardEvent::V_MTE3>();
                NzHandoff<T>::Store(pSlot, pOut, rowOff + h0, rows, pCols, p_->blockQ, unstored);
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
    __aicore__ inline bool SoftmaxLive(const WorkUnit &u, const KvBlock &blk, uint32_t h0, uint32_t dead, uint32_t row0,
                                       uint32_t live, uint32_t slot, const MaskRows &ahead, bool &pFree)
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
    __aicore__ inline bool Moved(const AscendC::LocalTensor<float> &mNew, const AscendC::LocalTensor<float> &mOld,
                                 uint32_t rows)
    {
        AscendC::Sub(rowTmp_, mNew, mOld, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::WholeReduceMax(inv_, rowTmp_, static_cast<int32_t>(rows), 1, 1, 1, 8,
                                AscendC::ReduceOrder::ORDER_ONLY_VALUE);
        PipeSync<AscendC::HardEvent::V_S>();
        const float moved = inv_.GetValue(0);
        PipeSync<AscendC::HardEvent::S_V>();
        return moved > LAZY_RESCALE_TAU;
    }

    // O = O * alpha(block) + P.V(block), once the cube has written the block's P.V. Lazy P.V:
    // O = (O + the sum the cube wrote) * alpha(block) when the cube flushed before this block
    // (alpha only if this core rescaled there), nothing otherwise.
    __aicore__ inline void AccumulateO(uint32_t rowOff, uint32_t rows, uint32_t slot)
    {
        AscendC::CrossCoreWaitFlag(FLAG_O_READY);
        if (rows == 0) {
            return;
        }
        if constexpr (LAZY_PV) {
            if (ReadCtrl(ctrl_, CtrlFlushed(slot)) != 0) {
                AddSlot(rowOff, rows, slot);
                if (rescaled_[slot]) {
                    BroadcastRows(bcast_, alpha_[slot], rows);
                    ScaleRows(acc_, rows);
                }
            }
        } else {
            BroadcastRows(bcast_, alpha_[slot], rows);
            ScaleRows(acc_, rows);
            AddSlot(rowOff, rows, slot);
        }
    }

    // Lazy P.V: O += the unit's final sum (the cube's last write-out, in the final O slot,
    // relative to the current reference).
    __aicore__ inline void AddFinalSum(uint32_t rowOff, uint32_t rows, uint32_t lastSlot)
    {
        AddSlot(rowOff, rows, WS_SLOTS + lastSlot);
    }

    // acc_ += this core's rows of O slot `slot` (WS_SLOTS: the final slot), partRows_ rows per
    // load.
    __aicore__ inline void AddSlot(uint32_t rowOff, uint32_t rows, uint32_t slot)
    {
        const uint32_t dp = p_->headDimAlign;
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
    // acc_ starts over for the next unit.
    __aicore__ inline void FinishUnit(uint32_t set, uint32_t lastSlot)
    {
        const WorkUnit &u = units_[set].u;
        const uint32_t rowOff = units_[set].rowOff;
        const uint32_t rows = units_[set].rows;
        const uint32_t blocks = units_[set].blocks;
        FinishRows(u, rowOff, rows, blocks, lastSlot);
        if (rows != 0) {
            AscendC::Duplicate(acc_, 0.0f, static_cast<int32_t>(rows * p_->headDimAlign));
            AscendC::PipeBarrier<PIPE_V>();
        }
    }

    __aicore__ inline void FinishRows(const WorkUnit &u, uint32_t rowOff, uint32_t rows, uint32_t blocks,
                                      uint32_t lastSlot)
    {
        if constexpr (LAZY_PV) {
            if (blocks > 0) {
                AscendC::CrossCoreWaitFlag(FLAG_O_READY);  // the unit's final P.V sum
                if (rows != 0) {
                    AddFinalSum(rowOff, rows, lastSlot);
                }
            }
        }
        if (rows == 0) {
            return;
        }
        kv_.FinishRows(u, rows, acc_, sum_);
        if (split_.StorePartialOutput(u, rowOff, rows, acc_, mOld_, sum_)) {
            return;  // split-KV decode: a combine pass normalises and writes
        }
        // Lazy P.V: the statistics are reported against the true max (sum * exp(ref - max)).
        const bool trueStats = LAZY_PV && p_->hasSoftmaxStats != 0;
        if (trueStats) {
            AscendC::Sub(rowTmp_, mOld_, mTrue_, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Exp(rowTmp_, rowTmp_, static_cast<int32_t>(rows));
        }
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            const float m = mOld_.GetValue(r);
            const float l = sum_.GetValue(r);
            const bool visible = rowOff + r < u.qValid && m > MASKED_ROW_MAX && l > 0.0f;
            inv_.SetValue(r, visible ? 1.0f / l : 0.0f);
            if (!visible) {  // the statistics of an invalid row (no visible key): fp32 lowest / max
                mOld_.SetValue(r, INVALID_ROW_STAT_MAX);
                sum_.SetValue(r, INVALID_ROW_STAT_SUM);
            } else if (trueStats) {
                mOld_.SetValue(r, mTrue_.GetValue(r));
                sum_.SetValue(r, l * rowTmp_.GetValue(r));
            }
        }
        PipeSync<AscendC::HardEvent::S_V>();
        BroadcastRows(bcast_, inv_, rows);
        ScaleRows(acc_, rows);
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<T> o = tmpBuf_.Get<T>();
        CastFromFloat(o, acc_, rows * dp);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        const uint32_t d = p_->headDim;
        // UB rows are dp elements apart: skip the blocks past the row's own (fp32 with D % 16 == 8)
        const uint32_t rowGap = (dp * sizeof(T) - AlignUp(d * sizeof(T), 32)) / 32;
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), d * sizeof(T), rowGap,
                                        (kv_.OutRowPitch() - d) * sizeof(T), 0);
        AscendC::DataCopyPad(out_[kv_.OutOffset(u.b, u.n, static_cast<uint32_t>(u.qBase) + u.q0 + rowOff)], o, copy);
        PipeSync<AscendC::HardEvent::MTE3_V>();
        if (p_->hasSoftmaxStats != 0) {
            const uint64_t at = (u.qBase + u.q0 + rowOff) * p_->statsStrideS + u.n * p_->statsStrideN;
            WriteStat(statMax_[at], mOld_, rows);
            WriteStat(statSum_[at], sum_, rows);
        }
    }

    // 8 replicated copies of v[r] per row into GM rows of pitch statsStrideS floats.
    __aicore__ inline void WriteStat(const AscendC::GlobalTensor<float> &dst, const AscendC::LocalTensor<float> &v,
                                     uint32_t rows)
    {
        BroadcastRows(bcast_, v, rows);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), 32, 0,
                                        static_cast<uint32_t>((p_->statsStrideS - 8) * 4), 0);
        AscendC::DataCopyPad(dst, bcast_, copy);
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // rowTmp[r] = max (or sum) over the block's columns of row r. The 64-lane column groups of
    // each row fold into tmp in plane order (block b of row r at tmp block b * rows + r: a
    // destination block stride of `rows`), so the 8 blocks of every row then fold as the two
    // contiguous halves of tmp (rows / 2, / 4, / 8 repeats) and one BlockReduce takes each
    // row's last block to its value: 1 + 7/8 + 1/4 repeats per row (BlockReduce costs two),
    // against 1 + 2 + 1/4 for a BlockReduce of all 8 blocks per row (docs/performance.md).
    // A 64-column block has nothing to fold: two BlockReduce passes.
    template <bool isMax> __aicore__ inline void RowReduce(uint32_t rows)
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

    // dst = max (or sum) of a and b.
    template <bool isMax, class... Shape>
    __aicore__ inline static void Fold(const AscendC::LocalTensor<float> &dst, const AscendC::LocalTensor<float> &a,
                                       const AscendC::LocalTensor<float> &b, Shape... shape)
    {
        if constexpr (isMax) {
            AscendC::Max(dst, a, b, shape...);
        } else {
            AscendC::Add(dst, a, b, shape...);
        }
    }

    // dst[i] = max (or sum) of the 8 floats of block i of `repeats` repeats of 8 blocks, repeats
    // `repPitch` blocks apart.
    template <bool isMax>
    __aicore__ inline static void BlockReduce(const AscendC::LocalTensor<float> &dst,
                                              const AscendC::LocalTensor<float> &src, int32_t repeats, int32_t repPitch)
    {
        if constexpr (isMax) {
            AscendC::BlockReduceMax(dst, src, repeats, 64, 1, 1, repPitch);
        } else {
            AscendC::BlockReduceSum(dst, src, repeats, 64, 1, 1, repPitch);
        }
    }

    // x[r][:] *= bcast_[r] over rows of pitch headDimAlign.
    __aicore__ inline void ScaleRows(const AscendC::LocalTensor<float> &x, uint32_t rows)
    {
        RowBroadcast<RowOp::Mul>(x, bcast_, rows, p_->headDimAlign, p_->headDimAlign);
    }

    const ForwardParams *p_ = nullptr;
    typename Variant::Split split_;
    typename Variant::Kv kv_;
    typename Variant::Score score_;
    typename Variant::Mask mask_;
    typename Variant::Softmax softmax_;
    uint32_t core_ = 0;
    uint32_t sub_ = 0;

    AscendC::GlobalTensor<T> out_;
    AscendC::GlobalTensor<float> statMax_, statSum_;
    AscendC::GlobalTensor<float> wsS_;
    AscendC::GlobalTensor<T> wsP_;
    KvNz<T> kvNz_;
    AscendC::GlobalTensor<float> wsO_;

    AscendC::TBuf<AscendC::TPosition::VECCALC> sBuf_, tmpBuf_, pBuf_, maskBuf_, accBuf_, partBuf_, statBuf_, bcastBuf_;
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
    AscendC::GlobalTensor<int32_t> ctrl_;
    AscendC::GlobalTensor<uint16_t> zero_;         // the workspace's zero fractal
    bool rescaled_[WS_SLOTS];                      // per slot: whether this core moved its reference at that block
    AscendC::LocalTensor<float> alpha_[WS_SLOTS];  // per workspace slot: its block's rescale factor
};

}  // namespace AttentionCore
