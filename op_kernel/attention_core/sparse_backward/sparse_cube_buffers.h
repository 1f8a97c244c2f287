// SparseBackwardCube (sparse_backward_cube.h): the L1 buffers' events, the L0C tile ring and
// the L0A/L0B copies.
// Included by sparse_backward_cube.h after the class.
#pragma once

namespace AttentionCore {

// MTE1 -> MTE2: buffer `id` (a K copy or V) was read into L0; the next load into it waits.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::ReleaseBuffer(int32_t id)
{
    AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(id);
    bufPending_[id] = true;
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::AcquireBuffer(int32_t id)
{
    if (bufPending_[id]) {
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(id);
        bufPending_[id] = false;
    }
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::WaitBuffers()
{
    for (int32_t id = SPARSE_EVT_K; id <= SPARSE_EVT_PDS; ++id) {
        AcquireBuffer(id);
    }
    for (int32_t id = SPARSE_EVT_L0A; id < SPARSE_EVT_L0B + 2; ++id) {
        WaitL0(id);
    }
    for (uint32_t i = 0; i < SPARSE_MAX_TILES; ++i) {
        TileFree(i);
    }
}

// L0C is a ring of l0cTiles tiles (l0cTileElems fp32 each); every result (S, dP, a dK/dV
// key tile) takes the next one, so the Mmads of the next results run while the Fixpipe
// drains the current one. FIX -> M per tile.
template <typename T> __aicore__ inline AscendC::LocalTensor<float> SparseBackwardCube<T>::TakeTile(uint32_t &tile)
{
    tile = tileIdx_;
    tileIdx_ = tileIdx_ + 1 == p_->l0cTiles ? 0 : tileIdx_ + 1;
    return l0c_.Get<float>()[tile * p_->l0cTileElems];
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::TileWritten(uint32_t tile)
{
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(SPARSE_EVT_TILE + static_cast<int32_t>(tile));
    tilePending_[tile] = true;
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::TileFree(uint32_t tile)
{
    if (tilePending_[tile]) {
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(SPARSE_EVT_TILE + static_cast<int32_t>(tile));
        tilePending_[tile] = false;
    }
}

// L0A / L0B copies (l0Copies of each): an L1 -> L0 load into a copy waits for the Mmads
// that read it (M -> MTE1, ids SPARSE_EVT_L0A/L0B + copy), so the loads of the next step
// run while the current Mmad does.
template <typename T> __aicore__ inline AscendC::LocalTensor<T> SparseBackwardCube<T>::TakeL0A(uint32_t &copy)
{
    copy = NextCopy(l0aIdx_, p_->l0Copies);
    WaitL0(SPARSE_EVT_L0A + static_cast<int32_t>(copy));
    return l0a_.Get<T>()[copy * (p_->l0aElems)];
}

template <typename T> __aicore__ inline AscendC::LocalTensor<T> SparseBackwardCube<T>::TakeL0B(uint32_t &copy)
{
    copy = NextCopy(l0bIdx_, p_->l0Copies);
    WaitL0(SPARSE_EVT_L0B + static_cast<int32_t>(copy));
    return l0b_.Get<T>()[copy * (p_->l0bElems)];
}

// Both L0B copies as one buffer (the planner makes two copies whenever this is used);
// released as copies 0 and 1.
template <typename T> __aicore__ inline AscendC::LocalTensor<T> SparseBackwardCube<T>::TakeL0BWhole()
{
    WaitL0(SPARSE_EVT_L0B);
    WaitL0(SPARSE_EVT_L0B + 1);
    return l0b_.Get<T>();
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::WaitL0(int32_t id)
{
    if (l0Pending_[id]) {
        AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(id);
        l0Pending_[id] = false;
    }
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::ReleaseL0(int32_t id)
{
    AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(id);
    l0Pending_[id] = true;
}

}  // namespace AttentionCore
