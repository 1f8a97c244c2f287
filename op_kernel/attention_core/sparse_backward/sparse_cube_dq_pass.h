// SparseBackwardCube (sparse_backward_cube.h): the dQ pass over a segment of a token's chunks.
// Included by sparse_backward_cube.h after the class.
#pragma once

namespace AttentionCore {

// The group's chunk count: up to dqPassChunks chunks in adjacent ring slots (no wrap).
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::GroupSize(PassGroup &g, uint64_t first, uint32_t count) const
{
    const uint32_t most = p_->dqPassChunks;
    const uint32_t room = p_->ringSlots - static_cast<uint32_t>((first + g.i) % p_->ringSlots);
    g.m = count - g.i < most ? count - g.i : most;
    g.m = g.m < room ? g.m : room;
}

// The staging half of the pass's first group such that its last group lands in the upper
// half (groups take the halves in turn): the lower one, which holds Q's L1 range, is then
// free for the next token's Q under the last group (QueryGradPass, nextQ).
template <typename T> __aicore__ inline uint32_t SparseBackwardCube<T>::FirstHalf(uint64_t first, uint32_t count) const
{
    uint32_t groups = 0;
    for (uint32_t p0 = 0; p0 < p_->qkDim; p0 += p_->dqPassCols) {
        for (PassGroup g{p0, 0, 0}; g.i < count; g.i += g.m) {
            GroupSize(g, first, count);
            ++groups;
        }
    }
    return groups % 2;
}

// The group's dS tiles and K column blocks -> staging half `half` (once MTE1 read its
// previous group), then MTE2 -> MTE1. Several chunks share one copy per tensor; a short
// last chunk's slot rows past its keys are staged too and never read.
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::StageGroup(const PassGroup &g, uint64_t first, uint32_t half)
{
    const uint32_t c = p_->blockKv;
    const uint32_t wl = p_->qkDim - g.p0 < p_->dqPassCols ? p_->qkDim - g.p0 : p_->dqPassCols;
    const uint32_t wlPad = AlignUp(wl, 16);
    const uint64_t n = first + g.i;
    const AscendC::LocalTensor<T> dsL1 = l1All_[half * PassHalfElems()];
    const AscendC::LocalTensor<T> kL1 = dsL1[p_->dqPassChunks * p_->headsPad * c];
    AcquireBuffer(SPARSE_EVT_K + static_cast<int32_t>(half));
    NzHandoff<T>::Load(dsL1, wsDs_[Slot::Ds(p_, n)], p_->headsPad, g.m * c, p_->headsPad);
    if (g.m == 1) {
        LoadSlotNz(kL1, wsK_[Slot::K(p_, n) + g.p0 * c], segCols_[g.i], wl);  // column blocks [p0, p0 + wl)
    } else {
        const uint64_t kSlot = p_->wsKSlot / sizeof(T);
        AscendC::DataCopy(kL1, wsK_[Slot::K(p_, n) + g.p0 * c],
                          AscendC::DataCopyParams(static_cast<uint16_t>(g.m),
                                                  static_cast<uint16_t>(c * wlPad * sizeof(T) / 32),
                                                  static_cast<uint16_t>((kSlot - c * wlPad) * sizeof(T) / 32), 0));
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(SPARSE_EVT_STAGED + static_cast<int32_t>(half));
}

// dQ[t] (+)= dS.K over the segment's `count` chunks from chunk `first` on: per column pass
// of dqPassCols, every chunk's dS (its ring slot) and K column block (its ring slot) are
// staged in L1 over all of it, Q and dO included (two halves taken in turn, MTE1 -> MTE2
// events of the K copies; up to dqPassChunks chunks in adjacent ring slots per copy: a
// copy's fixed start is paid once for them) and summed into one L0C accumulator; one
// Fixpipe per pass, plain for the first segment of a token the core holds whole (no zeroing
// of dQ needed), atomic after. L0C is taken whole from the ring (every ring tile drained
// first, every pass tile drained at the end). A token with chunks after the segment loads
// its Q and dO again. `nextQ` (not ~0): the token the core opens next; when the pass's last
// group is staged in the upper half and Q's L1 range lies in the lower one, that token's Q
// loads as soon as the lower half was read, under the last group's Mmads and the last
// Fixpipe, not after them (qAhead_; dO follows at the token's start); the first group's half
// is chosen so that the last one lands in the upper half (FirstHalf).
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::QueryGradPass(uint64_t t, uint64_t first, uint32_t count, bool plain,
                                                            uint64_t nextQ)
{
    const uint32_t rows = p_->heads;
    const uint32_t width = p_->qkDim;
    const uint32_t c = p_->blockKv;
    const uint32_t pass = p_->dqPassCols;
    const uint32_t dsElems = p_->headsPad * c;
    // S/dP of the chunk after the segment read the K copies and V, the chunk's gradients
    // Q, dO and P/dS: the staging waits for them.
    AcquireBuffer(SPARSE_EVT_K);
    AcquireBuffer(SPARSE_EVT_K + 1);
    AcquireBuffer(SPARSE_EVT_V);
    AcquireBuffer(SPARSE_EVT_PDS);
    PipeSync<AscendC::HardEvent::MTE1_MTE2>();
    for (uint32_t i = 0; i < SPARSE_MAX_TILES; ++i) {
        TileFree(i);
    }
    // A K column block wider than one L0B copy takes both copies (the planner's choice).
    const bool wholeL0b = c * pass > p_->l0bElems;
    // Staging halves of up to dqPassChunks chunks each (dS tiles, then K column blocks),
    // taken in turn: the next group's copies are issued before this group's L0 loads and
    // Mmads, so MTE2 runs ahead by one group (MTE2 -> MTE1 per half).
    PassGroup g{0, 0, 0};
    GroupSize(g, first, count);
    uint32_t half = nextQ != ~0ULL ? FirstHalf(first, count) : 0;
    StageGroup(g, first, half);
    uint32_t tile = 0;
    for (uint32_t p0 = 0; p0 < width; p0 += pass, tile = tile + 1 == p_->dqTiles ? 0 : tile + 1) {
        const uint32_t wl = width - p0 < pass ? width - p0 : pass;
        const uint32_t wlPad = AlignUp(wl, 16);
        const AscendC::LocalTensor<float> acc = l0c_.Get<float>()[tile * p_->headsPad * pass];
        for (uint32_t i = 0; i < count; half ^= 1) {
            const uint32_t m = g.m;
            PassGroup next{g.p0, g.i + m, 0};
            if (next.i == count) {
                next.p0 += pass;
                next.i = 0;
            }
            if (next.p0 < width) {
                GroupSize(next, first, count);
                StageGroup(next, first, half ^ 1);
            } else if (nextQ != ~0ULL && half == 1 &&
                       p_->headsPad * p_->qkDim <= PassHalfElems()) {  // Q in the lower half, free now
                AcquireBuffer(SPARSE_EVT_K);
                CopyQuery(nextQ);
                qAhead_ = true;
            }
            const AscendC::LocalTensor<T> dsL1 = l1All_[half * PassHalfElems()];
            const AscendC::LocalTensor<T> kL1 = dsL1[p_->dqPassChunks * dsElems];
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(SPARSE_EVT_STAGED + static_cast<int32_t>(half));
            for (uint32_t j = 0; j < m; ++j, ++i) {
                const uint32_t cols = segCols_[i];
                uint32_t ca = 0;
                uint32_t cb = 0;
                const AscendC::LocalTensor<T> l0a = TakeL0A(ca);
                Tiles::LoadA(l0a, dsL1[j * dsElems], L1Shape{p_->headsPad, AlignUp(cols, 16)}, 0, cols);
                const AscendC::LocalTensor<T> l0b = wholeL0b ? TakeL0BWhole() : TakeL0B(cb);
                Tiles::LoadB(l0b, kL1[j * c * wlPad], L1Shape{c, wlPad}, cols, 0, wl);
                if (j + 1 == m) {
                    ReleaseBuffer(SPARSE_EVT_K + static_cast<int32_t>(half));
                }
                StepPrewalk(SPARSE_PASS_WALK_STEP);
                PipeSync<AscendC::HardEvent::MTE1_M>();
                if (i == 0) {
                    TileFree(tile);
                }
                AscendC::Mmad(acc, l0a, l0b,
                              AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(wl),
                                                  static_cast<uint16_t>(cols), 0, false, i == 0));
                ReleaseL0(SPARSE_EVT_L0A + static_cast<int32_t>(ca));
                ReleaseL0(SPARSE_EVT_L0B + static_cast<int32_t>(cb));
                if (wholeL0b) {
                    ReleaseL0(SPARSE_EVT_L0B + 1);
                }
            }
            g = next;
        }
        PipeSync<AscendC::HardEvent::M_FIX>();
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(wl), static_cast<uint16_t>(rows),
                                       static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), width, false);
        if (!plain) {
            AscendC::SetAtomicAdd<float>();
        }
        AscendC::Fixpipe(dq_[t * rows * width + p0], acc, fix);
        if (!plain) {
            AscendC::SetAtomicNone();
        }
        TileWritten(tile);
    }
    for (uint32_t i = 0; i < p_->dqTiles; ++i) {
        TileFree(i);
    }
    // The next K/V loads reuse the staging: both halves were read into L0 first.
    AcquireBuffer(SPARSE_EVT_K);
    AcquireBuffer(SPARSE_EVT_K + 1);
}

}  // namespace AttentionCore
