// SparseBackwardCube (sparse_backward_cube.h): the walk of a selection into chunks of runs,
// whole or in steps (a chunk ahead, and a token's first two chunks during the dQ pass).
// Included by sparse_backward_cube.h after the class.
#pragma once

namespace AttentionCore {

// Walks the token's selection to chunk n's runs (scalar reads of the selection); false
// when it is exhausted.
template <typename T> __aicore__ inline bool SparseBackwardCube<T>::WalkChunk(uint64_t n, ChunkInfo &info)
{
    info.cols = gather_.NextChunk(runs_[n % SPARSE_RUN_LISTS], info.runCount);
    return info.cols != 0;
}

// The same walk in steps: BeginWalk, then StepWalk between the dV and dK scatters' Fixpipes
// (walkStep_ entries each: the Fixpipe queue stays fed while the scalar unit reads the
// selection), then FinishWalk before the chunk's width is needed.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::BeginWalk(uint64_t n)
{
    walkN_ = n;
    walking_ = true;
    gather_.BeginChunk();
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::StepWalk(uint32_t budget)
{
    if (walking_ && gather_.StepChunk(runs_[walkN_ % SPARSE_RUN_LISTS], budget)) {
        walking_ = false;
    }
}

template <typename T> __aicore__ inline bool SparseBackwardCube<T>::FinishWalk(ChunkInfo &info)
{
    StepWalk(KvGather::WALK_ALL);
    info.cols = gather_.ChunkRows(info.runCount);
    return info.cols != 0;
}

// Whether the chunk being walked exists, read as far as that takes (its first row, or the
// end of the selection): its K/V load can be issued before its width is known (LoadRows).
template <typename T> __aicore__ inline bool SparseBackwardCube<T>::WalkHasRows()
{
    while (walking_ && !gather_.ChunkDecided()) {
        StepWalk(walkStep_);
    }
    uint32_t runCount = 0;
    return gather_.ChunkRows(runCount) != 0;
}

// The rows to load for the chunk being walked: its width once the walk is done, else a
// full chunk (the slot rows past its keys are loaded too and never read).
template <typename T> __aicore__ inline uint32_t SparseBackwardCube<T>::LoadRows()
{
    uint32_t runCount = 0;
    return walking_ ? p_->blockKv : gather_.ChunkRows(runCount);
}

// The walks of token u's first two chunks (m, m + 1) during the dQ pass before it (the
// pass is MTE2-bound, its scalar unit mostly waits for full queues), so that at the token's
// start the scalar unit issues its loads and S/dP at once: BeginPrewalk, StepPrewalk after
// each group of the pass, the rest after the pass; Token(u) takes pre_.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::BeginPrewalk(uint64_t u, uint64_t m)
{
    if (u >= SparseTokenEnd(p_, core_)) {
        return;
    }
    uint32_t first = 0;
    uint32_t last = 0;
    SparseChunkRange(p_, core_, u, first, last);
    WaitSorted(u);
    gather_.SetToken(u);
    gather_.LimitChunks(first, last, runs_[m % SPARSE_RUN_LISTS]);
    pre_[1].cols = 0;
    preStage_ = 0;
    prewalking_ = true;
    BeginWalk(m);
}

template <typename T> __aicore__ inline void SparseBackwardCube<T>::StepPrewalk(uint32_t budget)
{
    if (!prewalking_) {
        return;
    }
    StepWalk(budget);
    if (walking_) {
        return;
    }
    ChunkInfo &info = pre_[preStage_];
    info.cols = gather_.ChunkRows(info.runCount);
    if (preStage_ == 0 && info.cols != 0) {
        preStage_ = 1;
        BeginWalk(walkN_ + 1);
    } else {
        prewalking_ = false;
        prewalked_ = true;
    }
}

// Token u's list, when its vector cores sort it in the main loop, is stored once both said so.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::WaitSorted(uint64_t u)
{
    if (SparseSortedInLoop(p_, core_, u)) {
        AscendC::CrossCoreWaitFlag(FLAG_SPARSE_SORTED);
    }
}

}  // namespace AttentionCore
