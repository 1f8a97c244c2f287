// SparseBackwardCube (sparse_backward_cube.h): the Mmads: S and dP, dK and dV with their
// scatter.
// Included by sparse_backward_cube.h after the class.
#pragma once

namespace AttentionCore {

// S and dP of chunk n (K/V already loaded) -> slots, then FLAG_SPARSE_SDP; its K copy and
// V are free for the next loads once read into L0B.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::Scores(uint64_t n, const ChunkInfo &info)
{
    const bool split = qkOnly_;
    if (split) {
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(SPARSE_EVT_QK);  // Q and K landed
        qkOnly_ = false;
    } else {
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();  // the chunk's K/V landed
    }
    ScoreLike(qL1_, KCopy(n), p_->heads, info.cols, p_->qkDim, wsS_);  // S = Q.K^T
    ReleaseBuffer(SPARSE_EVT_K + static_cast<int32_t>(n % 2));
    if (split) {
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();  // dO and V landed
    }
    ScoreLike(dyL1_, VBuf(), p_->heads, info.cols, p_->headDim, wsDp_);  // dP = dO.V^T
    ReleaseBuffer(SPARSE_EVT_V);
    AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_SPARSE_SDP);
}

// out (heads x cols fp32, pitch blockKv) = A.B^T with A (heads x width, Nz of headsPad
// rows) and B (cols x width, Nz of blockKv rows) in L1, into the next L0C tile.
template <typename T>
__aicore__ inline void
SparseBackwardCube<T>::ScoreLike(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1, uint32_t rows,
                                 uint32_t cols, uint32_t width, const AscendC::GlobalTensor<float> &out)
{
    uint32_t tile = 0;
    const AscendC::LocalTensor<float> l0c = TakeTile(tile);
    for (uint32_t kc = 0; kc < width; kc += p_->dChunk) {
        const uint32_t kLen = width - kc < p_->dChunk ? width - kc : p_->dChunk;
        uint32_t ca = 0;
        uint32_t cb = 0;
        const AscendC::LocalTensor<T> l0a = TakeL0A(ca);
        Tiles::LoadA(l0a, aL1, L1Shape{p_->headsPad, AlignUp(width, 16)}, kc, kLen);
        const AscendC::LocalTensor<T> l0b = TakeL0B(cb);
        Tiles::LoadBt(l0b, bL1, L1Shape{p_->blockKv, AlignUp(width, 16)}, cols, kc, kLen);
        PipeSync<AscendC::HardEvent::MTE1_M>();
        if (kc == 0) {
            TileFree(tile);
        }
        AscendC::Mmad(l0c, l0a, l0b,
                      AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(kLen), 0,
                                          false, kc == 0));
        ReleaseL0(SPARSE_EVT_L0A + static_cast<int32_t>(ca));
        ReleaseL0(SPARSE_EVT_L0B + static_cast<int32_t>(cb));
    }
    PipeSync<AscendC::HardEvent::M_FIX>();
    AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                   static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), p_->blockKv, false);
    AscendC::Fixpipe(out, l0c, fix);
    TileWritten(tile);
}

// Rows [k0, k0 + kLen) of the chunk, held by an L0C key tile (Nz, 16-row fractals of
// MmadRows(kLen) rows): one atomic Fixpipe per run of consecutive KV rows, full width.
template <typename T>
__aicore__ inline void
SparseBackwardCube<T>::Scatter(const AscendC::LocalTensor<float> &l0c, uint32_t k0, uint32_t kLen, uint32_t width,
                               const AscendC::GlobalTensor<float> &out, const GatherRun *runs, uint32_t runCount)
{
    const uint16_t tileRows = static_cast<uint16_t>(AlignUp(MmadRows(kLen), 16));
    AscendC::SetAtomicAdd<float>();
    for (uint32_t r = 0; r < runCount; ++r) {
        const GatherRun &run = runs[r];
        const uint32_t lo = run.pos > k0 ? run.pos : k0;
        const uint32_t hi = run.pos + run.len < k0 + kLen ? run.pos + run.len : k0 + kLen;
        if (lo >= hi) {
            continue;
        }
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(width), static_cast<uint16_t>(hi - lo), tileRows, width,
                                       false);
        AscendC::Fixpipe(out[(run.kvRow + (lo - run.pos)) * width], l0c[(lo - k0) * 16], fix);
        StepWalk(walkStep_);
    }
    AscendC::SetAtomicNone();
}

// out[run rows] (width columns, pitch width) += X^T.Y with X (heads x blockKv, Nz) and
// Y (heads x width, Nz) in L1. The result is built in L0C for keyGradRows keys at a time
// over the full width (Nz, keyGradRows rows per fractal column), so each run of gathered
// rows leaves in one atomic Fixpipe, whatever the width: with single picks the scatter is
// one Fixpipe per key and tensor, not one per key and 128-column chunk.
template <typename T>
__aicore__ inline void SparseBackwardCube<T>::KeyGrad(const AscendC::LocalTensor<T> &xL1,
                                                      const AscendC::LocalTensor<T> &yL1, uint32_t cols, uint32_t width,
                                                      const AscendC::GlobalTensor<float> &out, const GatherRun *runs,
                                                      uint32_t runCount)
{
    const uint32_t rows = p_->heads;
    const uint32_t m1 = p_->headsPad / 16;
    uint32_t ca = 0;
    const AscendC::LocalTensor<T> l0a = TakeL0A(ca);
    Tiles::LoadAt(l0a, xL1, L1Shape{p_->headsPad, AlignUp(cols, 16)});
    ReleaseBuffer(SPARSE_EVT_PDS);  // X (P or dS) stays in L0A for the whole pass
    // Key tiles go in groups of keyGradGroup (1 or 2): with two, each B column block loaded
    // into L0B serves both tiles' Mmads, halving the L1 -> L0B traffic of the pass.
    const uint32_t step = p_->keyGradRows;
    const uint32_t group = p_->keyGradGroup;
    for (uint32_t g0 = 0; g0 < cols; g0 += group * step) {
        uint32_t tiles = (cols - g0 + step - 1) / step;
        tiles = tiles > group ? group : tiles;
        uint32_t tile[2] = {0, 0};
        for (uint32_t i = 0; i < tiles; ++i) {
            TakeTile(tile[i]);
        }
        for (uint32_t dc = 0; dc < width; dc += p_->dChunk) {
            const uint32_t dLen = width - dc < p_->dChunk ? width - dc : p_->dChunk;
            uint32_t cb = 0;
            const AscendC::LocalTensor<T> l0b = TakeL0B(cb);
            Tiles::LoadBFew(l0b, yL1, L1Shape{p_->headsPad, AlignUp(width, 16)}, p_->headsPad, dc, dLen);
            PipeSync<AscendC::HardEvent::MTE1_M>();
            for (uint32_t i = 0; i < tiles; ++i) {
                const uint32_t k0 = g0 + i * step;
                const uint16_t mRows = MmadRows(cols - k0 < step ? cols - k0 : step);
                if (dc == 0) {
                    TileFree(tile[i]);
                }
                AscendC::Mmad(TileAt(tile[i])[dc * AlignUp(mRows, 16)], l0a[(k0 / 16) * m1 * Tiles::FRAC], l0b,
                              AscendC::MmadParams(mRows, static_cast<uint16_t>(dLen), static_cast<uint16_t>(rows), 0,
                                                  false, true));
            }
            ReleaseL0(SPARSE_EVT_L0B + static_cast<int32_t>(cb));
        }
        PipeSync<AscendC::HardEvent::M_FIX>();
        for (uint32_t i = 0; i < tiles; ++i) {
            const uint32_t k0 = g0 + i * step;
            const uint32_t kLen = cols - k0 < step ? cols - k0 : step;
            Scatter(TileAt(tile[i]), k0, kLen, width, out, runs, runCount);
            TileWritten(tile[i]);
        }
    }
    ReleaseL0(SPARSE_EVT_L0A + static_cast<int32_t>(ca));
}

}  // namespace AttentionCore
