// Cube side (AIC) of the forward core: per unit it stages the Q block in L1 once, then for
// every key block computes S = Q.K^T (GM -> L1 tiles -> L0A/L0B as in cube_tiles.h, Mmad over
// head-dim chunks, Fixpipe fp32 into an S slot of the workspace) and, once the vector cores returned P,
// O_blk = P.V (Fixpipe fp32 into an O slot). The key blocks of all the core's units form one
// stream: S of stream block g + WS_SLOTS - 1 is issued before P.V of block g, also across unit
// boundaries, so the vector cores have the next S while the cube waits for P.
//
// Double buffering (ForwardParams::l1Bufs / l0Bufs): the Q block, the K tile and the P + V tiles
// in L1 (the next unit's Q loads while this unit's last S blocks still read its own), the
// L0A/L0B operands and the L0C result alternate between two copies, each copy guarded by its
// own event id in both directions (producer -> consumer before use, consumer -> producer before
// reuse), so the next operation's loads overlap this one's Mmad and its Mmad this one's
// Fixpipe. Every reuse wait has a set ahead of it: the copies start free (Process sets them)
// and are drained at the end.
//
// Lazy P.V (LAZY_PV, the tiling key's mode; ForwardParams::lazyO, forward_params.h): L0C holds the unit's P.V accumulator
// across key blocks, so L0 is laid out in regions instead of copies: L0A = [P | Q chunk x2],
// L0B = [K^T | V], L0C = [accumulator | S chunk x2]. Q.K^T runs in row chunks of sChunk rows
// (one K^T load per block, the chunks' Mmads and Fixpipes alternate between the two S chunk
// copies), which is what lets q-blocks of 192 rows share every K and V load (L2 traffic per
// score: docs/performance.md). Before P.V of block j the cube
// reads both vector cores' "rescaled" words of the block's slot: if either moved its softmax
// reference, the accumulator (blocks since the last write-out, all relative to the old
// reference) goes to the block's O slot and P.V of block j starts a new sum; the cube posts its
// decision as the slot's "flushed" word and raises FLAG_O_READY for every block. After a
// unit's last block (slot k) the accumulator goes to final O slot WS_SLOTS + k (one more
// FLAG_O_READY): up to WS_SLOTS units' final sums are in flight while the vector cores finish
// a unit LAG blocks into the next.
#pragma once
#include "kernel_operator.h"
#include "../common/cube_tiles.h"
#include "../common/nz_handoff.h"
#include "forward_params.h"
#include "policies.h"
#include "../common/sync.h"
#include "forward_layout.h"
#include "kv_nz.h"
#include "kv_tile_cache.h"

namespace AttentionCore {

template <typename T, class Variant, bool LAZY_PV, bool KV_NZ> class ForwardCube {
    static_assert(!KV_NZ || NzHandoff<T>::ENABLED, "K/V in Nz order needs a 16-bit type");

public:
    template <class Tiling, class GmTensors>
    __aicore__ inline void Init(const Tiling &tiling, AscendC::TPipe *pipe, const GmTensors &t)
    {
        const ForwardParams *p = &tiling.params;
        p_ = p;
        split_.Init(tiling, t);
        kv_.Init(tiling, t);
        mask_.Init(tiling, t);
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.query));
        k_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.key));
        v_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.value));
        core_ = AscendC::GetBlockIdx();
        if constexpr (KV_NZ) {
            kvNz_.Init(p, t.key, t.value, t.workspace);
            kvNz_.QInit(t.query, t.workspace);
            kvNz_.OwnInit(split_, core_);
            typename Variant::Score score;
            score.Init(tiling, t);
            // S ahead of the staging (Run) reads K as the caller wrote it: only where the staging
            // copies it unchanged, and not where K pairs with V in one staged copy. Also beside
            // a mask prepass (the summary): only the vector cores read it (modelled PFA causal B2
            // N16 S2K D128 with the summary 174.7 -> 172.2 us).
            early_ = kvNz_.EarlyS(score.KeyScale(), LAZY_PV);
            late_ = kvNz_.Late(score.KeyScale());
        }
        GM_ADDR ws = t.workspace + core_ * p->wsBytesPerCore;
        const ForwardWorkspace wl = ForwardWorkspaceLayout(p->wsSlotS, p->wsSlotP, p->wsSlotO);
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(ws + wl.p));
        wsO_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + wl.o));
        wsOh_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(ws + wl.o));
        ctrl_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + wl.ctrl));

        const uint32_t bq = p->blockQ;
        const uint32_t bk = p->blockKv;
        const uint32_t dp = p->headDimAlign;
        const uint32_t dc = p->dChunk;
        const uint32_t wide = dc > bk ? dc : bk;
        l1Bufs_ = p->l1Bufs == 2 ? 2 : 1;
        l0Bufs_ = p->l0Bufs == 2 ? 2 : 1;
        qElems_ = bq * dp;
        pElems_ = bq * bk;
        kvElems_ = bk * dp;
        l0aElems_ = bq * wide;
        l0bElems_ = bk * dc;
        // L1: Q, P, K and V per copy, or Q per copy, one P and the K/V pairs (their total is
        // ForwardCubeL1Bytes, forward_layout.h).
        kvPairs_ = !LAZY_PV ? 0 : KV_NZ ? p->kvNzPairs : kv_.KvPairCopies();
        // with K not staged every S reads the caller's K: all S blocks ahead of P.V go out first
        earlyBlocks_ = KV_NZ && p->kvNz == KV_NZ_V_ONLY && p->kvNzOwnRows == 0 ? WS_SLOTS - 1 : 1;
        // lazy P.V with K and V apart: the K/V cache's tiles where the host planned them; then
        // l1Bufs counts only the Q and P copies (1: L1 went to one more K/V tile pair), and the K
        // and P/V events keep two copies. One P tile (with K/V pairs too) has FWD_EVT_P.
        cacheTiles_ = LAZY_PV && kvPairs_ == 0 && p->kvCacheTiles != 0 ? p->kvCacheTiles : 0;
        const uint32_t keyTiles =
            cacheTiles_ != 0 && p->kvCacheKeyTiles > cacheTiles_ ? p->kvCacheKeyTiles : cacheTiles_;
        kCache_.Init(keyTiles);
        vCache_.Init(cacheTiles_);
        singleP_ = kvPairs_ != 0 || (cacheTiles_ != 0 && (l1Bufs_ == 1 || p->kvCacheOneP != 0));
        kvEvtCopies_ = kvPairs_ != 0 ? kvPairs_ : cacheTiles_ != 0 ? 2 : l1Bufs_;
        pipe->InitBuffer(qL1_, l1Bufs_ * qElems_ * sizeof(T));
        pipe->InitBuffer(pL1_, (singleP_ ? 1 : l1Bufs_) * pElems_ * sizeof(T));
        if (kvPairs_ != 0) {
            pipe->InitBuffer(kL1_, kvPairs_ * 2 * kvElems_ * sizeof(T));
        } else {
            const uint32_t tiles = cacheTiles_ != 0 ? cacheTiles_ : l1Bufs_;
            pipe->InitBuffer(kL1_, (cacheTiles_ != 0 ? keyTiles : tiles) * kvElems_ * sizeof(T));
            pipe->InitBuffer(vL1_, tiles * kvElems_ * sizeof(T));
        }
        pipe->InitBuffer(zeroL1_, ZERO_FRACTAL_BYTES);
        zero_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(ws + wl.zero));
        if constexpr (LAZY_PV) {  // regions (top of the file)
            sChunk_ = p->sChunk;
            firstCols_ = p->pvFirstCols;
            accElems_ = bq * dp;
            qChunkElems_ = sChunk_ * dc;
            sChunkElems_ = sChunk_ * bk;
            pvRows_ = PvPartRows(bq);
            pPartElems_ = pvRows_ * bk;
        }
        const ForwardCubeL0 l0 = ForwardCubeL0Layout(bq, bk, dp, dc, sizeof(T), l0Bufs_, LAZY_PV ? sChunk_ : 0);
        pipe->InitBuffer(l0a_, static_cast<uint32_t>(l0.a));
        pipe->InitBuffer(l0b_, static_cast<uint32_t>(l0.b));
        pipe->InitBuffer(l0c_, static_cast<uint32_t>(l0.c));
    }

    __aicore__ inline void Process()
    {
        if constexpr (Variant::Mask::HasPrepass() || KV_NZ) {
            // the vector cores build the mask summary (mask_band.h), stage K/V (kv_nz.h); with
            // early_ Run waits for them after its first S blocks
            if (!early_) {
                AscendC::SyncAll<false>();
                staged_ = true;
            }
        }
        for (int32_t b = 0; b < 2; ++b) {  // every copy starts free
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + b);
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_PV + b);
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_QL1 + b);
            AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + b);
            AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + b);
            if constexpr (LAZY_PV) {
                AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_Q + b);
            }
        }
        if (singleP_) {
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(FWD_EVT_P);
        }
        Run();
        if constexpr (LAZY_PV) {
            if (accStoring_) {
                AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);
                accStoring_ = false;
            }
        }
        for (int32_t b = 0; b < 2; ++b) {  // drain: every copy is free again
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_PV + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_QL1 + b);
            AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + b);
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + b);
            if constexpr (LAZY_PV) {
                AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_Q + b);
            }
        }
        if (singleP_) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(FWD_EVT_P);
        }
    }

private:
    // Event ids of the copies (sync.h's table): EVT_QL1 + copy guards the Q block in L1,
    // EVT_K + copy the K tile, EVT_PV + copy the P and V tiles, EVT_L0 + copy the L0A/L0B operands (MTE1 <-> M) and the
    // L0C result (M <-> FIX). Lazy P.V's regions: M_MTE1 EVT_L0 guards K^T in L0B, EVT_L0 + 1
    // P and V in L0A/L0B, EVT_Q + copy a Q chunk in L0A; FIX_M EVT_L0 + copy an S chunk in L0C,
    // EVT_ACC the accumulator.
    static constexpr int32_t EVT_K = FWD_EVT_K;
    static constexpr int32_t EVT_PV = FWD_EVT_PV;
    static constexpr int32_t EVT_QL1 = FWD_EVT_QL1;
    static constexpr int32_t EVT_L0 = FWD_EVT_L0;
    static constexpr int32_t EVT_Q = FWD_EVT_Q;
    static constexpr int32_t EVT_ACC = FWD_EVT_ACC;
    static constexpr int32_t EVT_LKT = EVT_L0;
    static constexpr int32_t EVT_LPV = EVT_L0 + 1;

    // The key blocks of all this core's units form one stream (as on the vector cores): S of
    // stream block s + WS_SLOTS - 1 is issued before P.V of block s, also across unit
    // boundaries, so the next unit's first S blocks are ready while this unit's last P.V and its
    // final sum are still on the way. Block g uses workspace slot g % WS_SLOTS.
    __aicore__ inline void Run()
    {
        constexpr uint32_t ahead = WS_SLOTS - 1;
        Cursor s;
        bool sOk = Seek(s, split_.Begin(core_));
        Cursor v = s;
        bool vOk = sOk;
        uint64_t gS = 0, gV = 0;
        uint32_t k = 0;
        firstUnit_ = s.unit;
        if (early_ && !late_) {  // the first S block(s) go out during the vector cores' K/V staging
            for (; k < earlyBlocks_ && sOk; ++k) {
                sOk = StepS(s, gS);
            }
            AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);  // kv_nz.h StagedSignal: not the SyncAll
            staged_ = true;
        }
        for (; k < ahead && sOk; ++k) {
            sOk = StepS(s, gS);
        }
        pre_ = s;  // the next block whose K/V pair PreloadPair loads (staged pairs only)
        preOk_ = KV_NZ && sOk && kvPairs_ != 0;
        while (vOk) {
            const KvBlock blk = UnitBlockAt(v.u, p_->blockKv, v.j);
            // V ahead of S below and of the wait for P: only P's load is left after it. With K/V
            // pairs V is in L1 since the block's S, and S goes after P.V: in the in-order MTE2
            // queue P's load would otherwise wait behind the pair load, which waits for the K/V
            // source (modelled int8 decode B16 N32/4 S4K 74.0 -> 62.4 us).
            LoadV(v.u, blk, WideTail(v, blk));
            if (sOk && kvPairs_ == 0) {
                sOk = StepS(s, gS);
            }
            const uint32_t slot = gV++ % WS_SLOTS;
            IssuePendingPV();  // where no S went out since the last P.V
            FinalSum fin;
            if constexpr (LAZY_PV) {
                AccumulatePV(v.u, blk, slot, v.j == 0, v.j + 1 == v.blocks ? &fin : nullptr);
            } else {
                ComputePV(v.u, blk, slot);
            }
            if (sOk && kvPairs_ != 0) {
                sOk = StepS(s, gS);
            }
            if constexpr (LAZY_PV) {
                // The unit's final sum (its columns from fin.col0 on: AccumulatePV may have
                // written the first ones) after the next S with K/V pairs: its Fixpipe would hold
                // that S's Fixpipes back, which the vector cores need before they fold this unit.
                // A split whose partial rows take the sum as it is (no block of the unit
                // flushed) gets it there: the vector cores store only the statistics. The
                // core's last such write is ordered by the combine's barrier, which the cube
                // joins after it (policies.h PartialRows): no flag for it.
                if (v.j + 1 == v.blocks) {
                    if (fin.fp16) {
                        StoreAccumulator(v.u, l0c_.Get<float>(), fin.dstH, fin.col0, fin.part0);
                    } else {
                        StoreAccumulator(v.u, l0c_.Get<float>(), fin.dst, fin.col0, fin.part0);
                    }
                    if (!fin.direct || v.unit + 1 < split_.End(core_)) {
                        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_O_READY);
                    }
                }
            }
            vOk = Advance(v);
        }
        if constexpr (KV_NZ) {
            kvNz_.OwnWaitEnd(split_);
            kvNz_.QWaitEnd(split_.Begin(core_), split_.End(core_));
            if (late_ && !staged_) {  // a core of one unit: the vector cores' signal all the same
                AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);
                staged_ = true;
            }
        }
    }

    // Where a unit's final sum goes (AccumulatePV of its last block): dst, a split's partial
    // rows where `direct`, else the final O slot; its head-dim columns before col0 are written.
    struct FinalSum {
        AscendC::GlobalTensor<float> dst;
        AscendC::GlobalTensor<half> dstH;  // the final O slot in fp16 rows (half)
        bool direct = false;
        bool fp16 = false;
        uint32_t col0 = 0;
        uint32_t part0 = 0;  // with two P.V parts: the parts before it are written
    };

    // A position in the stream: block j of unit `unit` (decoded in u) with `blocks` key blocks.
    struct Cursor {
        uint64_t unit = 0;
        WorkUnit u = {};
        uint32_t blocks = 0, j = 0;
    };

    // c := the first block of the first unit from `unit` on with key blocks (the vector cores
    // write the zero rows of the others on their own).
    __aicore__ inline bool Seek(Cursor &c, uint64_t unit)
    {
        // The unit before on this core (Advance), whose K/V the cube's cache may still hold.
        const WorkUnit prev = c.u;
        const WorkUnit *before = c.blocks != 0 && unit == c.unit + 1 ? &prev : nullptr;
        for (; unit < split_.End(core_); ++unit) {
            split_.Decode(unit, c.u);
            mask_.KvRange(c.u);
            split_.ClipKeys(c.u);
            PlanKvReuse(*p_, mask_, before, c.u);
            if (unit == split_.Begin(core_)) {
                PlanFirstRotation(*p_, core_, c.u);
            }
            before = nullptr;
            c.unit = unit;
            c.blocks = KvBlockCount(c.u.kvBegin, c.u.kvEnd, p_->blockKv);
            c.j = 0;
            if (c.blocks != 0) {
                return true;
            }
        }
        return false;
    }

    __aicore__ inline bool Advance(Cursor &c) { return ++c.j < c.blocks || Seek(c, c.unit + 1); }

    // Whether blk at c, its unit's short last block, goes into the K/V cache as a full tile: where
    // the next unit on this core takes it as a full block of its own (policies.h PlanKvReuse).
    // StepS decides it at the unit's first S (wideTail_), where it looks the next unit up anyway.
    __aicore__ inline bool WideTail(const Cursor &c, const KvBlock &blk) const
    {
        return cacheTiles_ != 0 && c.j + 1 == c.blocks && blk.cols < p_->blockKv &&
               wideTail_[c.unit % WIDE_TAIL_UNITS] == c.unit + 1;
    }

    // S of the stream block at c, then c := the next block. The next unit's Q block goes
    // into the other Q copy right after the unit's first S (with one copy: only after its last):
    // queued in the in-order MTE2 after the unit's last K, V and P loads it held the next unit's
    // first S back with the M pipe idle (modelled B2 N16 S2K causal 185.1 -> 183.7 us).
    __aicore__ inline bool StepS(Cursor &c, uint64_t &g)
    {
        IssueS(c, g++);
        if (qRestRow_ != 0 && c.j == 1) {  // the rest of the next unit's Q block (below)
            CopyQRows(qRest_, qNext_, qRestRow_, qRest_.rows);
            qRestRow_ = 0;
        }
        const bool loadQ = !qAhead_ && (l1Bufs_ == 2 || c.blocks == 1);
        if (c.j == 0 && (loadQ || cacheTiles_ != 0)) {
            Cursor n = c;
            const bool more = Seek(n, n.unit + 1);
            if (more && loadQ) {
                // With a second S of this unit to come (and no K/V pairs), the Q block in two
                // row halves, one after each of the unit's first two S: whole, its Nd2Nz copy
                // held the P load queued behind it in the cube's MTE2 back, and the P.V with it
                // (modelled B4 N16 S1K D128 154.2 -> 152.7 us, TND 6x1K 229.2 -> 226.8; with
                // pairs D = 256 B2 N8 S2K 319.3 -> 320.5).
                const uint32_t half = c.blocks > 1 && kvPairs_ == 0 ? AlignUp(n.u.rows / 2, 16) : 0;
                qNext_ = LoadQ(n.u, n.unit, half < n.u.rows ? half : 0, c.unit);
                qAhead_ = true;
            }
            // WideTail (a one-block unit's tail went out with this S)
            const bool wide = l1Bufs_ == 1 && more && c.blocks > 1 && n.u.reuse != 0 && n.u.reuseEnd >= c.blocks;
            wideTail_[c.unit % WIDE_TAIL_UNITS] = wide ? c.unit + 1 : 0;
        }
        return Advance(c);
    }

    // S of the stream block at c (a unit's first block takes the Q block StepS loaded, or
    // stages it, its last frees the Q copy).
    __aicore__ inline void IssueS(const Cursor &c, uint64_t g)
    {
        if (c.j == 0) {
            qb_ = qAhead_ ? qNext_ : LoadQ(c.u, c.unit);
            qAhead_ = false;
        }
        const KvBlock blk = UnitBlockAt(c.u, p_->blockKv, c.j);
        loadUnit_ = c.unit;
        if constexpr (LAZY_PV) {
            ComputeSChunks(c.u, blk, g % WS_SLOTS, WideTail(c, blk));
        } else {
            ComputeS(c.u, blk, g % WS_SLOTS);
        }
        if (c.j + 1 == c.blocks) {
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_QL1 + qb_);  // MTE1 is done with this Q copy
        }
    }

    // Rows handed to Mmad: m == 1 would switch the cube to GEMV (A read as ND), so a single
    // query row is computed as a 16-row fractal whose padding rows are never written out.
    __aicore__ inline static uint16_t MmadRows(uint32_t rows) { return static_cast<uint16_t>(rows == 1 ? 16 : rows); }

    // The K or V rows of a key block -> an L1 tile of kvPad rows, one copy per run of evenly
    // spaced rows (KvSource::RowsInRun: a paged cache's page ends a run); run r0 lands at row r0.
    // With K/V staged in Nz order (KV_NZ, kv_nz.h, or by the K/V source): one plain copy of rows
    // [k0, k0 + kvPad).
    __aicore__ inline void CopyKvRows(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      const WorkUnit &u, const KvBlock &blk, uint32_t kvPad, uint32_t tensor,
                                      uint32_t blocks = 1)
    {
        const uint64_t token0 = u.kvBase + static_cast<uint64_t>(blk.k0);
        if constexpr (KV_NZ) {
            // else the caller's rows: an S ahead of the staging (Run), or a tensor not staged
            if (staged_ && kvNz_.Staged(tensor) && kvNz_.StagedRow(token0)) {
                kvNz_.OwnWait(split_, u);
                kvNz_.Load(dst, tensor, u.b, u.n / p_->groupSize, token0, kvPad);
                return;
            }
        }
        if constexpr (NzHandoff<T>::ENABLED && Variant::Kv::StagedNz()) {
            NzHandoff<T>::Load(dst, src[kv_.KvOffset(u.b, u.n, static_cast<uint32_t>(token0))], kvPad, p_->headDimAlign,
                               kv_.NzSlotRows());
            return;
        }
        if constexpr (sizeof(T) == 2) {
            if (WideKeys(token0)) {  // a full block of contiguous rows (ForwardParams::kvWideRows)
                Tiles::CopyWide(dst, src[kv_.KvOffset(u.b, u.n, static_cast<uint32_t>(token0))], kvPad, p_->headDim,
                                blocks, kvElems_);
                return;
            }
        }
        for (uint32_t r = 0; r < blk.cols;) {
            uint32_t run = kv_.RowsInRun(u.b, token0 + r);
            run = run < blk.cols - r ? run : blk.cols - r;
            Tiles::CopyRows(dst, src[kv_.KvOffset(u.b, u.n, static_cast<uint32_t>(token0 + r))], run, p_->headDim,
                            kv_.KvRowPitch(), L1Shape{kvPad, p_->headDimAlign}, r);
            r += run;
        }
    }

    __aicore__ inline AscendC::LocalTensor<T> QL1() { return qL1_.Get<T>()[qb_ * qElems_]; }

    // Whether the block from key row token0 on sits in L1 as a wide-row tile: the blocks the
    // pass before the loop does not stage (ForwardParams::kvNzStageKeys; all of them without it).
    __aicore__ inline bool WideKeys(uint64_t token0) const
    {
        return p_->kvWideRows != 0 && token0 >= p_->kvNzStageKeys;
    }
    // K^T (LoadBt) and V (LoadB) of a key block's L1 tile into L0B, from a wide-row tile where
    // the blocks are loaded as such (ForwardParams::kvWideRows; every block full).
    __aicore__ inline void LoadKt(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                  const L1Shape &shape, uint32_t rows, uint32_t kOff, uint32_t kLen, uint64_t token0)
    {
        if constexpr (sizeof(T) == 2) {
            if (WideKeys(token0)) {
                Tiles::LoadBtWide(l0b, src, shape.rowsPad, shape.colsPad, kOff, kLen);
                return;
            }
        }
        Tiles::LoadBt(l0b, src, shape, rows, kOff, kLen);
    }
    __aicore__ inline void LoadVb(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                  const L1Shape &shape, uint32_t rows, uint32_t nOff, uint32_t nLen, uint64_t token0)
    {
        if constexpr (sizeof(T) == 2) {
            if (WideKeys(token0)) {
                Tiles::LoadBWide(l0b, src, shape.rowsPad, shape.colsPad, nOff, nLen);
                return;
            }
        }
        Tiles::LoadB(l0b, src, shape, rows, nOff, nLen);
    }

    // The block's V rows -> the next P/V copy in L1 (once MTE1 is done with it), before the
    // cube waits for the block's P: V does not depend on the vector cores.
    __aicore__ inline void LoadV(const WorkUnit &u, const KvBlock &blk, bool wide)
    {
        if (kvPairs_ != 0) {  // in the block's pair since its S (LoadK)
            pb_ = NextCopy(pvIdx_, kvPairs_);
            return;
        }
        pb_ = NextCopy(pvIdx_, kvEvtCopies_);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_PV + pb_);  // MTE1 is done with this P/V copy
        const KvBlock load = Widened(blk, wide);
        vPad_ = AlignUp(load.cols, 16);
        bool hit = false;
        const bool pair = cacheTiles_ != 0 && PairLoad(vCache_, u, load);
        vb_ = cacheTiles_ != 0 ? CacheSlot(vCache_, u, load, hit, pair) : pb_;
        if (hit) {
            return;
        }
        kv_.BeforeLoad(u, load, true);
        CopyKvRows(vL1_.Get<T>()[vb_ * kvElems_], v_, u, load, vPad_, 1, pair ? 2 : 1);
        kv_.AfterLoad(true);
    }

    // P of slot `slot` (its rows from row0 on, a multiple of 16, and its first pCols columns, 0:
    // all; `zeros`: P.V zeroes a staircase too) -> the P/V copy LoadV filled with the block's V, once the vector cores wrote P;
    // returns the copy.
    __aicore__ inline uint32_t LoadPV(const WorkUnit &u, const KvBlock &blk, uint32_t slot, uint32_t row0 = 0,
                                      uint32_t pCols = 0, bool zeros = false)
    {
        const uint32_t mPad = AlignUp(u.rows, 16);
        const uint32_t kvPad = pCols != 0 ? pCols : AlignUp(blk.cols, 16);
        AscendC::CrossCoreWaitFlag(FlagPReady(slot));
        const uint32_t pb = pb_;
        const int32_t loaded = kvPairs_ != 0 ? FWD_EVT_P : EVT_PV + pb;
        if (singleP_) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(FWD_EVT_P);  // MTE1 is done with the P tile
        }
        const AscendC::LocalTensor<T> pL1 = PTile(pb);
        if ((row0 != 0 || zeros) &&
            !zeroLoaded_) {  // the workspace's zero fractal, once (the vector cores wrote it before any P)
            AscendC::DataCopy(zeroL1_.Get<T>(), zero_, ZERO_FRACTAL_BYTES / sizeof(T));
            zeroLoaded_ = true;
        }
        if constexpr (NzHandoff<T>::ENABLED) {  // the vector cores wrote P in Nz order
            const AscendC::GlobalTensor<T> src = wsP_[slot * (p_->wsSlotP / sizeof(T))];
            // A staircase's fractal rows in pieces (ForwardParams::pPieceFractals), each with the
            // columns its last row sees (policies.h FractalPCols; the vector cores wrote no more),
            // the rest whole.
            uint32_t r = row0;
            const uint32_t k1 = kvPad / 16;
            const uint32_t piece = p_->pPieceFractals * 16;
            while (zeros && piece != 0 && r < u.rows) {
                const uint32_t end = r + piece < u.rows ? r + piece : u.rows;
                const uint32_t cols = FractalPCols(mask_, u, AlignUp(end, 16) - 16, blk.k0, kvPad);
                if (FractalPCols(mask_, u, r, blk.k0, kvPad) >= k1) {
                    break;
                }
                NzHandoff<T>::Load(pL1, src, mPad, cols * 16, p_->blockQ, r, end);
                r = end;
            }
            if (r < u.rows) {
                NzHandoff<T>::Load(pL1, src, mPad, kvPad, p_->blockQ, r, u.rows);
            }
        } else {
            Tiles::CopyRows(pL1, wsP_[slot * (p_->wsSlotP / sizeof(T))], u.rows, blk.cols, p_->blockKv,
                            L1Shape{mPad, kvPad}, 0);
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(loaded);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(loaded);
        return pb;
    }

    // The P tile of P/V copy pb (one with K/V pairs) and its V tile (with pairs: the V half of
    // pair pb, kvPad rows per column block after the K half).
    __aicore__ inline AscendC::LocalTensor<T> PTile(uint32_t pb)
    {
        return pL1_.Get<T>()[(singleP_ ? 0 : pb) * pElems_];
    }
    __aicore__ inline AscendC::LocalTensor<T> VTile(uint32_t pb, uint32_t kvPad)
    {
        if (kvPairs_ != 0) {
            return kL1_.Get<T>()[pb * 2 * kvElems_ + kvPad * p_->headDimAlign];
        }
        return vL1_.Get<T>()[(cacheTiles_ != 0 ? vb_ : pb) * kvElems_];
    }

    // blk as loaded: a full block's rows from its first key where `wide` (WideTail).
    __aicore__ inline KvBlock Widened(const KvBlock &blk, bool wide) const
    {
        return KvBlock{blk.k0, wide ? p_->blockKv : blk.cols};
    }

    // The K/V cache's tag of a unit's (batch, KV head).
    __aicore__ inline uint32_t CacheHead(const WorkUnit &u) const { return u.b * p_->numKvHeads + u.n / p_->groupSize; }

    // Whether a wide-row block (WideKeys) that `cache` lacks goes into its tile pair together
    // with the next block of the head, one DMA start for two (KvTileCache::SlotPair): a block of
    // even index whose next block the unit runs right after it (not where that one ran already,
    // as one of the unit's first `reuse` blocks: UnitBlockIndex) and the cache lacks too. With at
    // least three pairs the least recently used one was last read three blocks back or earlier
    // (the last two blocks sit in at most two pairs), which the event copy's wait covers (it
    // waits for the MTE1 reads of the block two back; MTE1 runs in order).
    __aicore__ inline bool PairLoad(const KvTileCache &cache, const WorkUnit &u, const KvBlock &blk) const
    {
        const int64_t token = static_cast<int64_t>(u.kvBase) + blk.k0;
        if (cacheTiles_ < 6 || !WideKeys(static_cast<uint64_t>(token)) || blk.cols != p_->blockKv ||
            (blk.k0 / p_->blockKv) % 2 != 0 || blk.k0 + 2 * static_cast<int64_t>(p_->blockKv) > u.kvEnd) {
            return false;
        }
        const uint32_t idx = static_cast<uint32_t>((blk.k0 - u.kvBegin) / p_->blockKv);
        return UnitBlockPos(u, idx + 1) == UnitBlockPos(u, idx) + 1 && !cache.Holds(CacheHead(u), token, blk.cols) &&
               !cache.Holds(CacheHead(u), token + blk.cols, blk.cols);
    }

    // The K/V cache's tile of a block (kv_tile_cache.h). A load into it waits for the MTE1 reads
    // of the block two back (the event copies), and with at least two tiles the least recently
    // used tile was last read no later. pair (PairLoad): the block and the next one into a tile
    // pair, loaded together (a miss).
    __aicore__ inline uint32_t CacheSlot(KvTileCache &cache, const WorkUnit &u, const KvBlock &blk, bool &hit,
                                         bool pair = false)
    {
        const int64_t token = static_cast<int64_t>(u.kvBase) + blk.k0;
        return pair ? cache.SlotPair(CacheHead(u), token, blk.cols) : cache.Slot(CacheHead(u), token, blk.cols, hit);
    }

    // The Q block and K loads into L1 and S = Q.K^T of a key block into its S slot (forward_cube_s.h).
    __aicore__ inline void PreloadPair();
    __aicore__ inline uint32_t LoadQ(const WorkUnit &u, uint64_t unit, uint32_t split = 0,
                                     uint64_t issuedIn = ~uint64_t(0));
    __aicore__ inline void CopyQRows(const WorkUnit &u, uint32_t qb, uint32_t row0, uint32_t row1, bool last = true);
    __aicore__ inline void LoadK(const WorkUnit &u, const KvBlock &blk, const AscendC::LocalTensor<T> &kL1, uint32_t kb,
                                 uint32_t blocks = 1);
    __aicore__ inline void ComputeS(const WorkUnit &u, const KvBlock &blk, uint32_t slot);
    __aicore__ inline void ComputeSChunks(const WorkUnit &u, const KvBlock &blk, uint32_t slot, bool wide);

    // P.V of a key block, the lazy accumulator and its write-out (forward_cube_pv.h).
    __aicore__ inline void ComputePV(const WorkUnit &u, const KvBlock &blk, uint32_t slot);
    __aicore__ inline void AccumulatePV(const WorkUnit &u, const KvBlock &blk, uint32_t slot, bool first,
                                        FinalSum *fin = nullptr);
    __aicore__ inline void LoadPRows(const AscendC::LocalTensor<T> &l0a, uint32_t pb, const L1Shape &shape, uint32_t k,
                                     uint32_t row0, uint32_t rows, uint32_t skip, const WorkUnit &u, int64_t k0);
    __aicore__ inline void FreePV(uint32_t pb);
    __aicore__ inline void IssuePendingPV(bool one = false);
    // The head-dim columns of a P.V left for the next S's chunks (ForwardParams::pvFirstCols):
    // its rows, the next column, the head dim, its keys and whether it starts the sum.
    struct PendingPV {
        uint32_t rows = 0, col = 0, d = 0, k = 0;
        bool init = false, on = false;
    };
    PendingPV pend_;
    uint32_t firstCols_ = 0;  // ForwardParams::pvFirstCols
    template <typename U>
    __aicore__ inline void StoreAccumulator(const WorkUnit &u, const AscendC::LocalTensor<float> &acc,
                                            const AscendC::GlobalTensor<U> &dst, uint32_t col0 = 0, uint32_t part0 = 0);

    // The Fixpipe of `cols` columns of an accumulator of `rows` rows into dst: fp32 rows, or
    // fp16 rows (converted on the way out) for a final sum AccumulatePV found safe in fp16.
    template <typename U>
    __aicore__ inline void FixAcc(const AscendC::GlobalTensor<U> &dst, const AscendC::LocalTensor<float> &src,
                                  uint32_t rows, uint32_t cols) const
    {
        AscendC::FixpipeParamsV220 fix = AccFixpipe(rows, cols);
        if constexpr (AscendC::IsSameType<U, half>::value) {
            fix.quantPre = QuantMode_t::F322F16;
        }
        AscendC::Fixpipe(dst, src, fix);
    }

    // The Fixpipe of `cols` head-dim columns of an accumulator of `rows` rows (Nz column blocks
    // of its padded rows) into rows of headDimAlign.
    __aicore__ inline AscendC::FixpipeParamsV220 AccFixpipe(uint32_t rows, uint32_t cols) const
    {
        return AscendC::FixpipeParamsV220(static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                          static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), p_->headDimAlign, false);
    }

    // The element offset of head-dim column col (a multiple of 16) in an accumulator of `rows`
    // rows: its Nz column block.
    __aicore__ inline static uint32_t AccColumn(uint32_t rows, uint32_t col)
    {
        return col * AlignUp(MmadRows(rows), 16);
    }

    // The element offset of P.V part `part`'s accumulator in L0C (its first row's Nz block).
    __aicore__ inline uint32_t AccPart(uint32_t part) const { return part * pvRows_ * p_->headDimAlign; }

    // The head-dim split of a unit's last P.V (AccumulatePV): the first half's columns, a
    // multiple of 16; 0: no split (one column block).
    __aicore__ inline static uint32_t SplitColumns(uint32_t d)
    {
        const uint32_t h = AlignUp((d + 1) / 2, 16);
        return h < d ? h : 0;
    }

    using Tiles = CubeTiles<T>;

    const ForwardParams *p_ = nullptr;
    typename Variant::Split split_;
    typename Variant::Kv kv_;
    typename Variant::Mask mask_;
    KvNz<T> kvNz_;
    uint32_t core_ = 0;

    AscendC::GlobalTensor<T> q_, k_, v_;
    AscendC::GlobalTensor<float> wsS_;
    AscendC::GlobalTensor<T> wsP_;
    AscendC::GlobalTensor<float> wsO_;
    AscendC::GlobalTensor<half> wsOh_;  // the O slots as fp16 elements (fp16 final sums)
    AscendC::GlobalTensor<int32_t> ctrl_;
    AscendC::GlobalTensor<T> zero_;

    AscendC::TBuf<AscendC::TPosition::A1> qL1_, pL1_, zeroL1_;
    AscendC::TBuf<AscendC::TPosition::B1> kL1_, vL1_;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
    uint32_t l1Bufs_ = 1, l0Bufs_ = 1;                                              // copies of the L1 / L0 tiles
    uint32_t qElems_ = 0, pElems_ = 0, kvElems_ = 0, l0aElems_ = 0, l0bElems_ = 0;  // elements per copy
    uint32_t qlIdx_ = 0, kIdx_ = 0, pvIdx_ = 0, l0Idx_ = 0;                         // the copy the next operation takes
    uint32_t qb_ = 0;      // the Q copy of the unit whose S is issued
    bool qAhead_ = false;  // StepS loaded the next unit's Q block into copy qNext_
    uint32_t qNext_ = 0;
    WorkUnit qRest_ = {};      // with qRestRow_ != 0: the unit whose Q rows from qRestRow_ on are
    uint32_t qRestRow_ = 0;    // still to be copied into copy qNext_ (LoadQ)
    uint32_t pb_ = 0;          // the P/V copy LoadV filled for the next P.V
    uint32_t vb_ = 0;          // with the K/V cache: the V tile of the next P.V
    uint32_t vPad_ = 0;        // rows per column block of the V tile of the next P.V (LoadV)
    uint32_t cacheTiles_ = 0;  // K/V cache tiles of each of K and V (ForwardParams::kvCacheTiles), 0: none
    // WideTail's decisions by unit (unit + 1: wide); the V stream trails by < WS_SLOTS units
    static constexpr uint32_t WIDE_TAIL_UNITS = WS_SLOTS;
    uint64_t wideTail_[WIDE_TAIL_UNITS] = {0, 0, 0, 0};
    KvTileCache kCache_, vCache_;  // the K/V cache's tags (cacheTiles_ != 0)
    uint32_t kvPairs_ = 0;         // K/V pair copies (KvSourceBase::KvPairCopies; lazy P.V only), 0: none
    bool singleP_ = false;         // one P tile in L1, guarded by FWD_EVT_P
    uint32_t kvEvtCopies_ = 1;     // event copies of the K and P/V tiles
    // lazy P.V: rows per S chunk, region sizes (elements), the next Q / S chunk copy
    uint32_t sChunk_ = 0, accElems_ = 0, qChunkElems_ = 0, sChunkElems_ = 0;
    // lazy P.V: rows of P per L0A pass (PvPartRows, forward_layout.h) and their L0A region
    uint32_t pvRows_ = 0, pPartElems_ = 0;
    uint32_t qIdx_ = 0, sIdx_ = 0;
    bool accStoring_ = false;   // a Fixpipe of the accumulator is in flight (EVT_ACC set)
    bool unitFlushed_ = false;  // some block of the unit in P.V wrote the accumulator out
    // PreloadPair's K/V pairs ahead of their S: the stream block pre_ loads next (preOk_: the
    // stream has it), and the pair copies of the preCount_ loaded ones, oldest at preHead_.
    static constexpr uint32_t PRE_PAIRS = 2;
    Cursor pre_ = {};
    bool preOk_ = false;
    uint32_t preKb_[PRE_PAIRS] = {0, 0};
    uint32_t preHead_ = 0, preCount_ = 0;
    // What each slot's "flushed" control word holds (-1: not written in this launch yet)
    int8_t flushedWord_[WS_SLOTS] = {-1, -1, -1, -1};
    static_assert(WS_SLOTS == 4, "flushedWord_'s initialiser names every slot");
    bool zeroLoaded_ = false;  // the zero fractal is in zeroL1_
    // K/V staged (KV_NZ): the first S block may go out before the staging is done (early_),
    // from the caller's K rows (all WS_SLOTS - 1 blocks ahead of it with K staged too: modelled
    // B1 N8/2 S2K causal 51.1 -> 52.5 us); with only V staged every S reads those rows anyway,
    // and all WS_SLOTS - 1 go ahead (earlyBlocks_).
    bool early_ = false, staged_ = false;
    uint32_t earlyBlocks_ = 1;
    // Late staging (ForwardParams::kvNzLate, kv_nz.h LateStart): the first unit (firstUnit_) loads
    // the caller's K/V rows, the first load of another unit's (loadUnit_: the unit whose keys
    // load next) waits for FLAG_KV_STAGED.
    bool late_ = false;
    uint64_t firstUnit_ = 0, loadUnit_ = 0;
};

}  // namespace AttentionCore

#include "forward_cube_s.h"
#include "forward_cube_pv.h"
