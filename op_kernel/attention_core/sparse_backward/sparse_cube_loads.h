// SparseBackwardCube (sparse_backward_cube.h): the loads into L1: Q and dO of a token, a
// chunk's K and V, P and dS.
// Included by sparse_backward_cube.h after the class.
#pragma once

namespace AttentionCore {

// `rows` rows of `width` elements (pitch `pitch`) -> L1 Nz with `dstRows` rows per fractal
// column, starting at row `row0` of the destination.
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::LoadNz(const AscendC::LocalTensor<T> &dst,
                                                     const AscendC::GlobalTensor<T> &src, uint32_t row0, uint32_t rows,
                                                     uint32_t width, uint32_t pitch, uint32_t dstRows)
{
    AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(width), 0,
                            static_cast<uint16_t>(pitch), static_cast<uint16_t>(dstRows), 1, 0);
    AscendC::DataCopy(dst[row0 * 16], src, nd);
}

// The first `rows` rows (rounded up to 16) of `width` columns of an Nz slot of blockKv rows
// per column block -> an L1 tile of the same layout, one plain copy.
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::LoadSlotNz(const AscendC::LocalTensor<T> &dst,
                                                         const AscendC::GlobalTensor<T> &src, uint32_t rows,
                                                         uint32_t width)
{
    const uint32_t rowsPad = AlignUp(rows, 16);
    const uint16_t gap = static_cast<uint16_t>(p_->blockKv - rowsPad);
    AscendC::DataCopy(dst, src,
                      AscendC::DataCopyParams(static_cast<uint16_t>(AlignUp(width, 16) / 16),
                                              static_cast<uint16_t>(rowsPad), gap, gap));
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::LoadQueryRows(uint64_t t)
{
    LoadQuery(t);
    LoadDy(t);
}

// Q (+ rope) of token t -> L1, once the previous token's tiles (and the dQ pass's staging
// over them) were read into L0.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::LoadQuery(uint64_t t)
{
    PipeSync<AscendC::HardEvent::MTE1_MTE2>();
    CopyQuery(t);
}

// The copies of LoadQuery, for a caller that waited for the reads of Q's L1 range itself.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::CopyQuery(uint64_t t)
{
    const uint32_t g = p_->heads;
    const uint32_t d = p_->headDim;
    const uint32_t dr = p_->ropeDim;
    const AscendC::LocalTensor<T> qL1 = qL1_;
    LoadNz(qL1, q_[t * g * d], 0, g, d, d, p_->headsPad);
    if (dr != 0) {
        LoadNz(qL1[d * p_->headsPad], qr_[t * g * dr], 0, g, dr, dr, p_->headsPad);
    }
}

// dO of token t -> L1 (after LoadQuery, which waited for the previous tiles' reads).
template <typename T> __aicore__ inline void SparseBackwardCube<T>::LoadDy(uint64_t t)
{
    const uint32_t g = p_->heads;
    const uint32_t d = p_->headDim;
    LoadNz(dyL1_, dy_[t * g * d], 0, g, d, d, p_->headsPad);
}

// Chunk n (walked): its K (+ rope) and V rows, gathered by the vector cores into their
// slots, -> K copy n % 2 and V in L1, one DMA per tensor. At a token's start (`dyToken`
// not ~0) that token's dO loads between K and V, and S = Q.K^T of the chunk (Scores)
// waits only for Q and K (SPARSE_EVT_QK): it runs while dO and V load.
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::IssueChunk(uint64_t n, const ChunkInfo &info, uint64_t dyToken)
{
    AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_SPARSE_KV);
    AcquireBuffer(SPARSE_EVT_K + static_cast<int32_t>(n % 2));
    LoadSlotNz(KCopy(n), wsK_[Slot::K(p_, n)], info.cols, p_->qkDim);
    if (dyToken != ~0ULL) {
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(SPARSE_EVT_QK);
        qkOnly_ = true;
        LoadDy(dyToken);
    }
    AcquireBuffer(SPARSE_EVT_V);
    LoadSlotNz(VBuf(), wsV_[Slot::V(p_, n)], info.cols, p_->headDim);
}

// P or dS of the current chunk (heads x blockKv) from its slot -> the P/dS L1 buffer, once
// the previous one was read into L0A (P and dS take turns in one buffer: with G = 128 the
// second K copy leaves no room for two).
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::LoadScoreGrad(const AscendC::LocalTensor<T> &pdsL1,
                                                            const AscendC::GlobalTensor<T> &src)
{
    AcquireBuffer(SPARSE_EVT_PDS);
    NzHandoff<T>::Load(pdsL1, src, p_->headsPad, p_->blockKv, p_->headsPad);
    PipeSync<AscendC::HardEvent::MTE2_MTE1>();
}

}  // namespace AttentionCore
