// ForwardCube (forward_cube.h), S: the unit's Q block and each key block's K (or K/V pair) into
// L1, and S = Q.K^T of a key block into its S slot, whole (eager) or in row chunks under lazy
// P.V with a band's staircase left out. Included by forward_cube.h after the class.
#pragma once

namespace AttentionCore {

// The K/V pair of stream block pre_ -> the next pair copy ahead of the block's S (IssueS
// then takes it): with K/V staged (KV_NZ), whose loads wait for nothing. AccumulatePV keeps
// two pairs loaded ahead of the S stream, so each pair load goes out right behind a P load
// instead of behind the scalar's P.V and S issue that follow it (the cube's MTE2 bounds
// these heads and idled ~0.1 us per block waiting for that issue).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::PreloadPair()
{
    if constexpr (KV_NZ) {
        if (!preOk_) {
            return;
        }
        const KvBlock blk = UnitBlockAt(pre_.u, p_->blockKv, pre_.j);
        loadUnit_ = pre_.unit;
        const uint32_t kb = NextCopy(kIdx_, kvPairs_);
        LoadK(pre_.u, blk, kL1_.Get<T>()[kb * 2 * kvElems_], kb);
        preKb_[(preHead_ + preCount_) % PRE_PAIRS] = kb;
        ++preCount_;
        preOk_ = Advance(pre_);
    }
}

// The Q rows of unit u (item `unit` of the split) -> the next Q copy in L1 (once MTE1 is done
// with it); returns the copy. With `split` (0 < split < u.rows) only rows [0, split): StepS
// copies the rest later (qRest_). From the vector cores' Nz copy where they stage it
// (kv_nz.h QStart), where the load is issued in the unit before it at the earliest:
// `issuedIn` is the unit whose S issues it (the lookahead skips units without keys, and the
// vector cores signal the copies only from the unit before the first one loaded).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline uint32_t ForwardCube<T, Variant, LAZY_PV, KV_NZ>::LoadQ(const WorkUnit &u, uint64_t unit,
                                                                          uint32_t split, uint64_t issuedIn)
{
    const uint32_t qb = NextCopy(qlIdx_, l1Bufs_);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_QL1 + qb);  // the unit before last is done with it
    if constexpr (KV_NZ) {
        const uint64_t pos = unit - split_.Begin(core_);
        const uint64_t at = (issuedIn == ~uint64_t(0) ? unit : issuedIn) - split_.Begin(core_);
        if (split == 0 && kvNz_.QStaged(pos) && at + 1 >= p_->qNzFirst) {
            kvNz_.LoadQ(qL1_.Get<T>()[qb * qElems_], core_, pos, u.rows, AlignUp(u.rows, 16));
            AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_QL1 + qb);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_QL1 + qb);
            return qb;
        }
    }
    if (split != 0) {
        CopyQRows(u, qb, 0, split, false);
        qRest_ = u;
        qRestRow_ = split;
    } else {
        CopyQRows(u, qb, 0, u.rows);
    }
    return qb;
}

// Rows [row0, row1) of the unit's Q block -> Q copy qb; `last`: the block is complete
// (MTE1 waits for it).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::CopyQRows(const WorkUnit &u, uint32_t qb, uint32_t row0,
                                                                          uint32_t row1, bool last)
{
    Tiles::CopyRows(qL1_.Get<T>()[qb * qElems_],
                    q_[kv_.QOffset(u.b, u.n, static_cast<uint32_t>(u.qBase) + u.q0 + row0)], row1 - row0, p_->headDim,
                    kv_.QRowPitch(), L1Shape{AlignUp(u.rows, 16), p_->headDimAlign}, row0);
    if (last) {
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_QL1 + qb);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_QL1 + qb);
    }
}

// The K rows of a key block -> K copy `kb` in L1 (once MTE1 is done with it). With K/V pairs
// (kvPairs_) the block's V too, in the same copy: the source's V slot follows its K slot, so
// the pair's V tile follows the K tile (kvPad rows per column block), one DMA start where
// the cube's MTE2 bounds the kernel; a pair lives from the block's S to its P.V, WS_SLOTS - 1
// blocks later (WS_SLOTS copies).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::LoadK(const WorkUnit &u, const KvBlock &blk,
                                                                      const AscendC::LocalTensor<T> &kL1, uint32_t kb,
                                                                      uint32_t blocks)
{
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + kb);  // MTE1 is done with this K copy
    kv_.BeforeLoad(u, blk, false);
    if constexpr (KV_NZ) {
        if (late_ && !staged_ && loadUnit_ != firstUnit_) {  // the first load from the staged regions
            AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);      // kv_nz.h LateFinish
            staged_ = true;
        }
        if (kvPairs_ != 0 && staged_) {
            kvNz_.OwnWait(split_, u);
            kvNz_.LoadPair(kL1, u.b, u.n / p_->groupSize, u.kvBase + static_cast<uint64_t>(blk.k0),
                           AlignUp(blk.cols, 16));
        } else if (kvPairs_ != 0) {  // late staging's first unit: K and V from the caller's rows
            const uint32_t kvPad = AlignUp(blk.cols, 16);
            CopyKvRows(kL1, k_, u, blk, kvPad, 0);
            CopyKvRows(kL1[kvPad * p_->headDimAlign], v_, u, blk, kvPad, 1);
        }
    } else if constexpr (NzHandoff<T>::ENABLED && Variant::Kv::StagedNz()) {
        if (kvPairs_ != 0) {
            const uint64_t token0 = u.kvBase + static_cast<uint64_t>(blk.k0);
            NzHandoff<T>::Load(kL1, k_[kv_.KvOffset(u.b, u.n, static_cast<uint32_t>(token0))], AlignUp(blk.cols, 16),
                               2 * p_->headDimAlign, kv_.NzSlotRows());
        }
    }
    if (kvPairs_ == 0) {
        CopyKvRows(kL1, k_, u, blk, AlignUp(blk.cols, 16), 0, blocks);
    }
    kv_.AfterLoad(kvPairs_ != 0);  // with pairs: V is in L1 too
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_K + kb);
    if (kvPairs_ == 0) {  // a pair's MTE1 wait is at its K^T load (ComputeSChunks)
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_K + kb);
    }
}

// S = Q.K^T of one key block into S slot `slot`, then raise FLAG_S_READY.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::ComputeS(const WorkUnit &u, const KvBlock &blk,
                                                                         uint32_t slot)
{
    const uint32_t d = p_->headDim;
    const uint32_t mPad = AlignUp(u.rows, 16);
    const uint32_t kvPad = AlignUp(blk.cols, 16);
    const uint32_t kb = NextCopy(kIdx_, l1Bufs_);
    const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
    const AscendC::LocalTensor<T> qL1 = QL1();
    const AscendC::LocalTensor<T> kL1 = kL1_.Get<T>()[kb * kvElems_];
    const AscendC::LocalTensor<T> l0a = l0a_.Get<T>()[x * l0aElems_];
    const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[x * l0bElems_];
    const AscendC::LocalTensor<float> l0c = l0c_.Get<float>()[x * l0aElems_];

    LoadK(u, blk, kL1, kb);
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);  // M is done with these L0A/L0B
    for (uint32_t kc = 0; kc < d; kc += p_->dChunk) {
        const uint32_t kLen = d - kc < p_->dChunk ? d - kc : p_->dChunk;
        if (kc > 0) {
            PipeSync<AscendC::HardEvent::M_MTE1>();  // the previous chunk's Mmad read them
        }
        Tiles::LoadA(l0a, qL1, L1Shape{mPad, p_->headDimAlign}, kc, kLen);
        LoadKt(l0b, kL1, L1Shape{kvPad, p_->headDimAlign}, blk.cols, kc, kLen, u.kvBase + blk.k0);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        if (kc == 0) {
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + x);  // Fixpipe is done with this L0C
        }
        AscendC::Mmad(l0c, l0a, l0b, Tiles::Mmad(MmadRows(u.rows), blk.cols, kLen, kc == 0));
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + kb);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + x);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + x);
    AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(blk.cols), static_cast<uint16_t>(u.rows),
                                   static_cast<uint16_t>(AlignUp(MmadRows(u.rows), 16)), p_->blockKv, false);
    AscendC::Fixpipe(wsS_[slot * (p_->wsSlotS / 4)], l0c, fix);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_S_READY);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + x);
}

// Lazy P.V's S (headDim <= dChunk: one k pass): K^T into its L0B region once, then per row
// chunk Q rows -> a Q chunk copy in L0A, Mmad -> an S chunk copy in L0C, Fixpipe into the
// chunk's rows of the S slot.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::ComputeSChunks(const WorkUnit &u, const KvBlock &blk,
                                                                               uint32_t slot, bool wide)
{
    const uint32_t d = p_->headDim;
    // a wide tail's tile holds a full block (WideTail): its rows per column block
    const KvBlock load = Widened(blk, wide);
    const uint32_t kvPad = AlignUp(load.cols, 16);
    const bool preloaded = preCount_ != 0;
    const uint32_t kb = preloaded ? preKb_[preHead_] : NextCopy(kIdx_, kvEvtCopies_);
    if (preloaded) {
        preHead_ = (preHead_ + 1) % PRE_PAIRS;
        --preCount_;
    }
    // With the K/V cache kb is the block's event copy and `tile` its K tile (CacheSlot).
    bool hit = false;
    const bool pair = !preloaded && cacheTiles_ != 0 && PairLoad(kCache_, u, load);
    const uint32_t tile = cacheTiles_ != 0 ? CacheSlot(kCache_, u, load, hit, pair) : kb;
    const AscendC::LocalTensor<T> kL1 = kL1_.Get<T>()[tile * (kvPairs_ != 0 ? 2 : 1) * kvElems_];
    const AscendC::LocalTensor<T> kt = l0b_.Get<T>();
    if (hit) {
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + kb);  // as LoadK: one wait per set
    } else if (!preloaded) {
        LoadK(u, load, kL1, kb, pair ? 2 : 1);
    }
    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_LKT);  // the previous block's Mmads read K^T
    if (kvPairs_ != 0) {
        // The pair is in L1 (LoadK): waited for here, not behind its load, so MTE1's loads
        // issued between a preloaded pair and its S do not wait for it.
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVT_K + kb);
    }
    LoadKt(kt, kL1, L1Shape{kvPad, p_->headDimAlign}, blk.cols, 0, d, u.kvBase + blk.k0);
    if (kvPairs_ == 0) {  // a pair is free once P.V loaded its V
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + kb);
    }
    const L1Shape qShape{AlignUp(u.rows, 16), p_->headDimAlign};
    // No S for the rows before a diagonal tile's band (policies.h SkippedSRows).
    uint32_t chunkNo = 0;
    for (uint32_t r0 = SkippedSRows(mask_, u, blk.k0); r0 < u.rows; r0 += sChunk_) {
        if (chunkNo++ >= PV_PIECE_FROM_CHUNK) {  // a piece of the last P.V (pvFirstCols)
            IssuePendingPV(true);
        }
        const uint32_t rows = u.rows - r0 < sChunk_ ? u.rows - r0 : sChunk_;
        const uint32_t x = NextCopy(qIdx_, 2);
        const uint32_t y = NextCopy(sIdx_, 2);
        const AscendC::LocalTensor<T> q = l0a_.Get<T>()[pPartElems_ + x * qChunkElems_];
        const AscendC::LocalTensor<float> s = l0c_.Get<float>()[accElems_ + y * sChunkElems_];
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_Q + x);  // M is done with this Q chunk copy
        Tiles::LoadA(q, QL1(), qShape, 0, d, r0, rows);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_Q + x);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_Q + x);
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + y);  // Fixpipe is done with this S chunk
        AscendC::Mmad(s, q, kt, Tiles::Mmad(MmadRows(rows), blk.cols, d, true));
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_Q + x);
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + y);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + y);
        // Only the columns some of these rows see (policies.h SeenSCols); with S pieces
        // (ForwardParams::sPieceRows) a staircase chunk per 16 rows.
        const uint16_t stride = static_cast<uint16_t>(AlignUp(MmadRows(rows), 16));
        uint32_t f = 0;
        if (p_->sPieceRows != 0 && rows > 16) {
            const uint32_t head = SeenSCols(mask_, u, r0, 16, blk.k0, blk.cols);
            if (head < SeenSCols(mask_, u, r0, rows, blk.k0, blk.cols)) {
                AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(head), 16, stride, p_->blockKv, false);
                AscendC::Fixpipe(wsS_[slot * (p_->wsSlotS / 4) + r0 * p_->blockKv], s, fix);
                f = 16;
            }
        }
        const uint32_t seen = SeenSCols(mask_, u, r0, rows, blk.k0, blk.cols);
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(seen), static_cast<uint16_t>(rows - f), stride,
                                       p_->blockKv, false);
        AscendC::Fixpipe(wsS_[slot * (p_->wsSlotS / 4) + (r0 + f) * p_->blockKv], s[f * 16], fix);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + y);
    }
    IssuePendingPV();  // a block of fewer chunks
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_LKT);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_S_READY);
}

}  // namespace AttentionCore
