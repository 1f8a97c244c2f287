// ForwardCube (forward_cube.h), P.V: a key block's product into its O slot (eager), or into the
// unit's lazy accumulator in L0C with its write-outs (a flush when a vector core rescaled, the
// unit's final sum, a split's partial rows), and the L0A loads of P that feed it.
// Included by forward_cube.h after the class.
#pragma once

namespace AttentionCore {

// O_blk = P.V of one key block into O slot `slot`, head-dim chunk by chunk.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::ComputePV(const WorkUnit &u, const KvBlock &blk,
                                                                          uint32_t slot)
{
    const uint32_t d = p_->headDim;
    const uint32_t mPad = AlignUp(u.rows, 16);
    const uint32_t kvPad = AlignUp(blk.cols, 16);
    const uint32_t pb = LoadPV(u, blk, slot);
    const uint32_t x = NextCopy(l0Idx_, l0Bufs_);
    const AscendC::LocalTensor<T> vL1 = vL1_.Get<T>()[pb * kvElems_];
    const AscendC::LocalTensor<T> l0a = l0a_.Get<T>()[x * l0aElems_];
    const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[x * l0bElems_];
    const AscendC::LocalTensor<float> l0c = l0c_.Get<float>()[x * l0aElems_];

    AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);                          // M is done with these L0A/L0B
    Tiles::LoadA(l0a, pL1_.Get<T>()[pb * pElems_], L1Shape{mPad, kvPad}, 0, blk.cols);  // P, once for all chunks
    for (uint32_t dc = 0; dc < d; dc += p_->dChunk) {
        const uint32_t dLen = d - dc < p_->dChunk ? d - dc : p_->dChunk;
        if (dc > 0) {
            PipeSync<AscendC::HardEvent::M_MTE1>();  // the previous chunk's Mmad read L0B
        }
        LoadVb(l0b, vL1, L1Shape{kvPad, p_->headDimAlign}, blk.cols, dc, dLen, u.kvBase + blk.k0);  // V (kv x d)
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_L0 + x);
        if (dc == 0) {
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + x);  // Fixpipe is done with this L0C
        } else {
            PipeSync<AscendC::HardEvent::FIX_M>();  // the previous chunk's Fixpipe read it
        }
        AscendC::Mmad(l0c, l0a, l0b, Tiles::Mmad(MmadRows(u.rows), dLen, blk.cols, true));
        AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + x);
        AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVT_L0 + x);
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(dLen), static_cast<uint16_t>(u.rows),
                                       static_cast<uint16_t>(AlignUp(MmadRows(u.rows), 16)), p_->headDimAlign, false);
        AscendC::Fixpipe(wsO_[slot * (p_->wsSlotO / 4) + dc], l0c, fix);
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_PV + pb);
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_L0 + x);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_O_READY);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_L0 + x);
}

// Lazy P.V of one key block (headDim <= dChunk: one L0B load; the P region of L0A and the
// V region of L0B, guarded by EVT_LPV): write the accumulator out first when a vector core
// rescaled, then accumulate P.V (Run writes a unit's sum to its final O slot). Of a diagonal
// tile's P only the part the vector cores wrote crosses L2 (policies.h SkippedPRows,
// SeenPCols): the rows before it are zeros in L0A (LoadData of the zero fractal), the
// columns past it are left out of the k extent.
// A unit's last block (fin) decides where its final sum goes. Without K/V pairs the sum
// leaves right after this P.V, and the next S's Fixpipes queue behind it while the M pipe,
// two S chunks ahead, waits for them: there the P.V runs in two head-dim halves (V in two
// L0B halves; the accumulator's Nz column blocks keep their places, a row split's would
// not) and the first half's columns go out under the second half's Mmad (SplitColumns;
// modelled B4 N16 S1K D128 156.0 -> 154.2 us, TND 6x1K 231.9 -> 229.2).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::AccumulatePV(const WorkUnit &u, const KvBlock &blk,
                                                                             uint32_t slot, bool first, FinalSum *fin)
{
    const uint32_t d = p_->headDim;
    const uint32_t mPad = AlignUp(u.rows, 16);
    const uint32_t kvPad = AlignUp(blk.cols, 16);
    const uint32_t skip = NzHandoff<T>::ENABLED ? SkippedPRows(mask_, u, blk.k0) : 0;
    const uint32_t k = NzHandoff<T>::ENABLED ? SeenPCols(mask_, u, blk.k0, blk.cols) : blk.cols;
    const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
    const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[(EVT_LPV - EVT_L0) * l0bElems_];
    const AscendC::LocalTensor<float> acc = l0c_.Get<float>();
    // The first columns now and the rest between the next S's chunks (pvFirstCols): not at
    // a unit's last block, whose final sum leaves right after its P.V.
    const uint32_t dh =
        firstCols_ != 0 && firstCols_ < d && kvPairs_ == 0 && fin == nullptr && u.rows <= pvRows_ ? firstCols_ : 0;
    if (kvPairs_ != 0) {  // V is in L1 since the block's S: into L0B before P arrives
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_LPV);  // M is done with the P and V regions
        LoadVb(l0b, VTile(pb_, kvPad), L1Shape{kvPad, p_->headDimAlign}, k, 0, d, u.kvBase + blk.k0);
        // The pair is free once V is in L0B (its K went to L0B at the block's S): the next pair
        // load into this copy then waits for neither P's arrival nor P's L0A load (modelled
        // causal B1 N4 S4K D256 175.8 -> 175.4 us).
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_K + pb_);
    }
    // Where the host asks for it (ForwardParams::kvPairFirst: under a band) a missing pair for
    // the next S goes ahead of P's load (with two pairs kept ahead, below, only at a core's
    // first P.V).
    if (p_->kvPairFirst != 0 && preCount_ == 0) {
        PreloadPair();
    }
    const bool stair =
        NzHandoff<T>::ENABLED && p_->pPieceFractals != 0 && FractalPCols(mask_, u, skip, blk.k0, k) < (k + 15) / 16;
    const uint32_t pb = LoadPV(u, blk, slot, skip, AlignUp(k, 16), stair);
    if (kvPairs_ == 0) {
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(EVT_LPV);  // M is done with the P and V regions
    }
    // Above PvPartRows (forward_layout.h) P goes through its L0A region in two row parts,
    // each into its own accumulator (its rows' Nz block of L0C), one V load for both.
    const uint32_t rows0 = u.rows < pvRows_ ? u.rows : pvRows_;
    const bool twoParts = u.rows > pvRows_;
    LoadPRows(l0a, pb, L1Shape{mPad, kvPad}, k, 0, rows0, skip, u, blk.k0);
    const uint32_t h = fin != nullptr && kvPairs_ == 0 && !twoParts ? SplitColumns(d) : 0;
    const AscendC::LocalTensor<T> l0bHi = l0b[AlignUp(k, 16) * h];  // V's second half (h != 0)
    if (kvPairs_ == 0) {
        const L1Shape vShape{vPad_, p_->headDimAlign};
        if (h != 0 || dh != 0) {
            const uint32_t c = h != 0 ? h : dh;
            LoadVb(l0b, VTile(pb, kvPad), vShape, k, 0, c, u.kvBase + blk.k0);  // V, columns [0, c)
            LoadVb(l0b[AlignUp(k, 16) * c], VTile(pb, kvPad), vShape, k, c, d - c, u.kvBase + blk.k0);
        } else {
            LoadVb(l0b, VTile(pb, kvPad), vShape, k, 0, d, u.kvBase + blk.k0);  // V
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_LPV);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_LPV);
    if (!twoParts) {
        FreePV(pb);
    }

    // Two K/V pairs ahead of the S stream (the next S's and the one after it), loaded right
    // behind P's load: a pair load that waited for the scalar's issue of this P.V and the next
    // S left the cube's MTE2 idle ~0.1 us per block, one behind P with the next S's own pair
    // held that S (and the vector cores) back. Its MTE1 wait is at the K^T load
    // (ComputeSChunks), so the next S's loads do not wait for it (modelled causal B1 N4 S4K
    // D256 175.4 -> 163.1 us, dense D256 S8K 277.5 -> 266.1, B2 N8 S2K 297.9 -> 283.8).
    while (kvPairs_ != 0 && preOk_ && preCount_ < PRE_PAIRS) {
        PreloadPair();
    }
    // both vector cores' words: a rescale (CTRL_MOVED), and at a unit's last block whether
    // either core's rows rule out an fp16 final sum (CTRL_UNSAFE, forward_vector_softmax.h)
    const int32_t words =
        !first || fin != nullptr ? ReadCtrl(ctrl_, CtrlRescaled(slot, 0)) | ReadCtrl(ctrl_, CtrlRescaled(slot, 1)) : 0;
    const bool flush = !first && (words & CTRL_MOVED) != 0;
    if (flush) {
        StoreAccumulator(u, acc, wsO_[slot * (p_->wsSlotO / 4)]);
    }
    unitFlushed_ = !first && (unitFlushed_ || flush);
    if (fin != nullptr) {
        fin->direct = !unitFlushed_ && split_.PartialRows(u, fin->dst);
        fin->fp16 = false;
        if (!fin->direct) {
            fin->dst = wsO_[(WS_SLOTS + slot) * (p_->wsSlotO / 4)];
            // fp16 rows of headDimAlign halves in the final O slot (half its bytes cross L2)
            // where neither vector core's rows could overflow fp16 (CTRL_UNSAFE) and the sum
            // is the whole of its rows' O * l: no block of the unit flushed and it is no
            // split-KV piece. Its fp16 rounding is then relative to the output; a flushed part
            // or another piece could cancel it to a small output that the rounding swamps
            // (the small-value rule: PFA split_kv_tail golden tests, 6-22 such errors).
            fin->fp16 = !unitFlushed_ && u.piece == 0 && (words & CTRL_UNSAFE) == 0;
            fin->dstH = wsOh_[(WS_SLOTS + slot) * (p_->wsSlotO / 2)];
        }
        fin->col0 = h;
        fin->part0 = 0;
    }
    if (accStoring_) {  // the last write-out still reads the accumulator
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);
        accStoring_ = false;
    }
    if (h != 0) {
        AscendC::Mmad(acc, l0a, l0b, Tiles::Mmad(MmadRows(u.rows), h, k, first || flush));
        PipeSync<AscendC::HardEvent::M_FIX>();  // columns [0, h) of the sum are complete
        if (fin->fp16) {
            FixAcc(fin->dstH, acc, u.rows, h);
        } else {
            FixAcc(fin->dst, acc, u.rows, h);
        }
        AscendC::Mmad(acc[AccColumn(u.rows, h)], l0a, l0bHi, Tiles::Mmad(MmadRows(u.rows), d - h, k, first || flush));
    } else if (dh != 0) {
        // columns [0, dh) now, the rest between the next S's chunks (IssuePendingPV)
        AscendC::Mmad(acc, l0a, l0b, Tiles::Mmad(MmadRows(rows0), dh, k, first || flush));
        pend_.rows = rows0;
        pend_.col = dh;
        pend_.d = d;
        pend_.k = k;
        pend_.init = first || flush;
        pend_.on = true;
    } else {
        AscendC::Mmad(acc, l0a, l0b, Tiles::Mmad(MmadRows(rows0), d, k, first || flush));
    }
    if (twoParts) {
        if (fin != nullptr) {  // the final sum's first part leaves under the second part's Mmad
            PipeSync<AscendC::HardEvent::M_FIX>();
            if (fin->fp16) {
                FixAcc(fin->dstH, acc, rows0, d);
            } else {
                FixAcc(fin->dst, acc, rows0, d);
            }
            fin->part0 = 1;
        }
        const uint32_t rows1 = u.rows - pvRows_;
        PipeSync<AscendC::HardEvent::M_MTE1>();  // the first part's Mmad read the P region
        LoadPRows(l0a, pb, L1Shape{mPad, kvPad}, k, pvRows_, rows1, skip, u, blk.k0);
        FreePV(pb);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVT_LPV);
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVT_LPV);
        AscendC::Mmad(acc[AccPart(1)], l0a, l0b, Tiles::Mmad(MmadRows(rows1), d, k, first || flush));
    }
    if (!pend_.on) {
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_LPV);
    }
    // The decision as the slot's "flushed" word, which the vector cores read only after the
    // FLAG_O_READY below: after the Mmad's issue, and only where it changes (a scalar GM
    // store and its write-back between P's arrival and the Mmad held the Mmad back).
    const int8_t flushed =
        static_cast<int8_t>((flush ? CTRL_MOVED : 0) | (fin != nullptr && fin->fp16 ? CTRL_FP16 : 0));
    if (flushedWord_[slot] != flushed) {
        WriteCtrl(ctrl_, CtrlFlushed(slot), flushed);
        flushedWord_[slot] = flushed;
    }
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_O_READY);
}

// The head-dim columns AccumulatePV left of the last P.V (ForwardParams::pvFirstCols): one
// PV_PIECE_COLS piece (`one`, between two S chunks) or all of them; after the last, M is done
// with the P and V regions.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::IssuePendingPV(bool one)
{
    while (pend_.on) {
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>()[(EVT_LPV - EVT_L0) * l0bElems_];
        const uint32_t c = pend_.d - pend_.col < PV_PIECE_COLS ? pend_.d - pend_.col : PV_PIECE_COLS;
        AscendC::Mmad(l0c_.Get<float>()[AccColumn(pend_.rows, pend_.col)], l0a, l0b[AlignUp(pend_.k, 16) * pend_.col],
                      Tiles::Mmad(MmadRows(pend_.rows), c, pend_.k, pend_.init));
        pend_.col += c;
        if (pend_.col >= pend_.d) {
            pend_.on = false;
            AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(EVT_LPV);
        }
        if (one) {
            break;
        }
    }
}

// P rows [row0, row0 + rows) of P/V copy pb (tile `shape`, k columns seen; unit u, block
// from key k0) -> the P region of L0A; the first `skip` rows of the tile are not in L1
// (LoadPV): zeros from the zero fractal for those of them in this range.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::LoadPRows(const AscendC::LocalTensor<T> &l0a,
                                                                          uint32_t pb, const L1Shape &shape, uint32_t k,
                                                                          uint32_t row0, uint32_t rows, uint32_t skip,
                                                                          const WorkUnit &u, int64_t k0)
{
    const uint32_t pad = AlignUp(rows, 16);
    const uint32_t zero = skip <= row0 ? 0 : (skip - row0 < pad ? skip - row0 : pad);
    if (zero != 0) {
        AscendC::LoadData(
            l0a, zeroL1_.Get<T>(),
            AscendC::LoadData2DParams(0, static_cast<uint8_t>(zero / 16 * ((k + 15) / 16)), 0, 0, 0, false, 0));
    }
    if (zero >= pad) {
        return;
    }
    // A diagonal tile's fractal rows hand over only the columns they see (policies.h
    // SubBlockPCols): the rest of each such row is zeros from the zero fractal.
    const uint32_t k1 = (k + 15) / 16;
    uint32_t r = zero;
    for (; r < pad && NzHandoff<T>::ENABLED && p_->pPieceFractals != 0 && k1 > 1; r += 16) {
        const uint32_t seen = FractalPCols(mask_, u, row0 + r, k0, k);
        if (seen >= k1) {
            break;
        }
        Tiles::LoadA(l0a[Tiles::ARow(r, k)], PTile(pb), shape, 0, seen * 16, row0 + r, 16);  // P
        AscendC::LoadData(l0a[Tiles::ARow(r, k) + seen * 16 * 16], zeroL1_.Get<T>(),
                          AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1 - seen), 0, 0, 0, false, 0));
    }
    if (r < pad) {
        Tiles::LoadA(l0a[Tiles::ARow(r, k)], PTile(pb), shape, 0, k, row0 + r, pad - r);  // P
    }
}

// MTE1 is done with the P (and V) tiles of P/V copy pb, or with the P tile beside K/V pair pb.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::FreePV(uint32_t pb)
{
    if (kvPairs_ != 0) {  // the P tile is free (the pair since V's L0B load: AccumulatePV)
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(FWD_EVT_P);
    } else {
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(EVT_PV + pb);
        if (singleP_) {
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(FWD_EVT_P);
        }
    }
}

// The accumulator's head-dim columns from col0 on -> dst (an O slot, or a split's partial
// rows), fp32 rows of headDimAlign; with two P.V parts from part `part0` on (AccumulatePV
// wrote the parts before). Only the next Mmad into the accumulator waits for it (EVT_ACC):
// after a unit's final write-out the next unit's Q.K^T chunks go ahead.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
template <typename U>
__aicore__ inline void ForwardCube<T, Variant, LAZY_PV, KV_NZ>::StoreAccumulator(const WorkUnit &u,
                                                                                 const AscendC::LocalTensor<float> &acc,
                                                                                 const AscendC::GlobalTensor<U> &dst,
                                                                                 uint32_t col0, uint32_t part0)
{
    PipeSync<AscendC::HardEvent::M_FIX>();  // the sum so far is complete
    const uint32_t cols = p_->headDim - col0;
    if (u.rows <= pvRows_ || pvRows_ == 0) {
        FixAcc(dst[col0], acc[AccColumn(u.rows, col0)], u.rows, cols);
    } else {
        if (part0 == 0) {
            FixAcc(dst[col0], acc[AccColumn(pvRows_, col0)], pvRows_, cols);
        }
        const uint32_t rows1 = u.rows - pvRows_;
        FixAcc(dst[pvRows_ * p_->headDimAlign + col0], acc[AccPart(1) + AccColumn(rows1, col0)], rows1, cols);
    }
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVT_ACC);
    accStoring_ = true;
}

}  // namespace AttentionCore
