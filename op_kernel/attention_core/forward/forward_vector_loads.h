// ForwardVector (forward_vector.h), the S and mask loads of a key block: this core's rows of
// the cube's S slot and the rows of the mask, both trimmed to what a band (causal) tile needs —
// the leading rows the cube wrote no S for, and with lazy P.V the columns past those the rows
// see — and issued ahead so they overlap the softmax and the O fold.
// Included by forward_vector.h after the class.
#pragma once

namespace AttentionCore {

// Rows of the sub-block that starts at row h0 of this core's `rows`.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline uint32_t ForwardVector<T, Variant, LAZY_PV, KV_NZ>::SubRows(uint32_t h0, uint32_t rows) const
{
    return rows - h0 < vecRows_ ? rows - h0 : vecRows_;
}

// Of the query rows [row0, row0 + rows) of u, how many lead and have no S in block blk's slot
// (lazy P.V: the cube left them out, policies.h SkippedSRows). A multiple of 8, or `rows`.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline uint32_t ForwardVector<T, Variant, LAZY_PV, KV_NZ>::Unwritten(const WorkUnit &u, const KvBlock &blk,
                                                                                uint32_t row0, uint32_t rows) const
{
    if constexpr (!LAZY_PV) {
        return 0;
    }
    const uint32_t skip = u.q0 + SkippedSRows(mask_, u, blk.k0);
    return skip <= row0 ? 0 : (skip - row0 >= rows ? rows : skip - row0);
}

// Of the query rows [row0, row0 + rows) of u, how many lead and need no P in block blk's slot
// (lazy P.V with P in Nz order: the cube zeroes them itself, policies.h SkippedPRows).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline uint32_t ForwardVector<T, Variant, LAZY_PV, KV_NZ>::Unstored(const WorkUnit &u, const KvBlock &blk,
                                                                               uint32_t row0, uint32_t rows) const
{
    if constexpr (!LAZY_PV || !NzHandoff<T>::ENABLED) {
        return 0;
    }
    const uint32_t skip = u.q0 + SkippedPRows(mask_, u, blk.k0);
    return skip <= row0 ? 0 : (skip - row0 >= rows ? rows : skip - row0);
}

// This core's rows [rowOff, rowOff + rows) of S slot `slot` (block blk of u) -> S buffer `b`
// (once the vector is done with it), the rows the cube wrote at their places.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::LoadS(const WorkUnit &u, const KvBlock &blk,
                                                                        uint32_t slot, uint32_t rowOff, uint32_t rows,
                                                                        uint32_t b)
{
    const uint32_t c = p_->blockKv;
    const uint32_t skip = Unwritten(u, blk, u.q0 + rowOff, rows);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_S + b);
    if constexpr (Variant::Kv::Int8Digits()) {  // the int32 S digit products (SoftmaxRows forms S)
        // the block loaded is stream block issued_; the slot's earlier block, unless folded, comes along
        kv_.Digits().LoadS(b, slot, rowOff, rows, issued_ >= WS_SLOTS && retired_ + WS_SLOTS <= issued_);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_S + b);
        return;
    }
    if (skip < rows) {
        const AscendC::LocalTensor<float> dst = sBuf_.Get<float>()[b * sElems_ + skip * c];
        const AscendC::GlobalTensor<float> src = wsS_[slot * (p_->wsSlotS / 4) + (rowOff + skip) * c];
        // lazy P.V: no columns past those the rows see (SeenSCols; Apply's band sets them), a
        // diagonal tile's staircase rows in pieces (ForwardParams::sPieceRows) with their own columns
        const uint32_t piece = LAZY_PV ? p_->sPieceRows : 0;
        uint32_t r = skip;
        while (r < rows) {
            const uint32_t n = piece != 0 && rows - r > piece ? piece : rows - r;
            const uint32_t seen = LAZY_PV ? SeenSCols(mask_, u, rowOff + r, n, blk.k0, c) : c;
            if (seen < c) {
                constexpr uint32_t PER_BLOCK = 32 / sizeof(float);
                const uint16_t gap = static_cast<uint16_t>((c - seen) / PER_BLOCK);
                AscendC::DataCopy(dst[(r - skip) * c], src[(r - skip) * c],
                                  AscendC::DataCopyParams(static_cast<uint16_t>(n),
                                                          static_cast<uint16_t>(seen / PER_BLOCK), gap, gap));
                r += n;
            } else {
                AscendC::DataCopy(dst[(r - skip) * c], src[(r - skip) * c], (rows - r) * c);
                r = rows;
            }
        }
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_S + b);
}

// As soon as this block's P is out: the next block's S (with two S buffers,
// ForwardParams::vecSBufs) and its mask rows, so the loads overlap the O fold and the next
// block's start.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::Prefetch(const WorkUnit &u, const KvBlock &next,
                                                                           uint32_t rowOff, uint32_t rows,
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

// The mask rows of the next Apply, unless SoftmaxRows already issued them.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::LoadMask(const WorkUnit &u, const MaskRows &m)
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
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void ForwardVector<T, Variant, LAZY_PV, KV_NZ>::IssueMask(const WorkUnit &u, const MaskRows &m)
{
    const uint32_t skip = Unwritten(u, m.blk, m.row0, m.rows);
    if (skip < m.rows) {
        const uint32_t cols =
            LAZY_PV ? SeenSCols(mask_, u, m.row0 + skip - u.q0, m.rows - skip, m.blk.k0, m.blk.cols) : m.blk.cols;
        mask_.Load(maskBuf_.Get<uint8_t>()[skip * p_->blockKv], u, m.row0 + skip, m.rows - skip, m.blk.k0, cols,
                   p_->blockKv);
    }
}

}  // namespace AttentionCore
