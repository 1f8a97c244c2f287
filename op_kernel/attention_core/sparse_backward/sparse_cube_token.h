// SparseBackwardCube (sparse_backward_cube.h): the chunk loop of one query token.
// Included by sparse_backward_cube.h after the class.
#pragma once

namespace AttentionCore {

// This core's chunks of query token t: chunk n's gradients are computed while S/dP of chunk
// n+1 are with the vector cores and chunk n+2 is being loaded; a full dQ segment (or the
// last chunk) is followed by its dQ pass, and chunk n+2 is loaded after it (the pass
// stages its operands over the K copies and V). `loaded`: Q and dO are in L1 already.
template <typename T> __aicore__ inline void SparseBackwardCube<T>::Token(uint64_t t, bool loaded)
{
    uint32_t first = 0;
    uint32_t last = 0;
    SparseChunkRange(p_, core_, t, first, last);
    const bool whole = first == 0 && last == SPARSE_ALL_CHUNKS;  // else dQ was zeroed: add
    ChunkInfo cur;
    ChunkInfo next;
    ChunkInfo after;
    uint64_t n = seq_;
    bool hasNext = false;
    // Q loaded under the last token's dQ pass (QueryGradPass): only dO is left to load.
    const bool qAhead = qAhead_;
    qAhead_ = false;
    if (prewalked_) {  // the first two chunks were walked during the last token's dQ pass
        prewalked_ = false;
        cur = pre_[0];
        next = pre_[1];
        if (cur.cols == 0) {
            return;  // nothing selected here: the vector cores zero the dQ rows of a whole token
        }
        if (!loaded && !qAhead) {
            LoadQuery(t);
        }
        IssueChunk(n, cur, loaded ? ~0ULL : t);
        hasNext = next.cols != 0;
    } else {
        WaitSorted(t);
        gather_.SetToken(t);
        gather_.LimitChunks(first, last, runs_[0]);
        if (!loaded && !qAhead) {
            LoadQuery(t);
        }
        if (!WalkChunk(n, cur)) {
            return;
        }
        // Chunk n+1's walk runs while Q, dO and chunk n's K/V load.
        IssueChunk(n, cur, loaded ? ~0ULL : t);
        hasNext = WalkChunk(n + 1, next);
    }
    Scores(n, cur);
    if (hasNext) {
        IssueChunk(n + 1, next);
    }
    // Chunk n+2's walk runs during chunk n's dV scatter, as later ones do (StepWalk).
    bool hasAfter = false;
    bool afterWalking = hasNext;  // chunk n+2's walk is under way (BeginWalk), not finished
    if (hasNext) {
        BeginWalk(n + 2);
    }
    uint64_t segStart = n;
    bool plainDq = whole;
    for (;; ++n) {
        AscendC::CrossCoreWaitFlag(FLAG_SPARSE_GRAD);
        const AscendC::LocalTensor<T> pdsL1 = pdsL1_;
        const GatherRun *runs = runs_[n % SPARSE_RUN_LISTS];
        LoadScoreGrad(pdsL1, wsP_[Slot::P(p_, n)]);
        // S/dP of chunk n+1: before the dV key groups (their loads run under the last dK
        // scatter), or after them when the Fixpipe binds (fixBound_: the dV scatter then
        // waits for no S/dP Mmads, and S/dP's loads run under it).
        if (hasNext && !fixBound_) {
            Scores(n + 1, next);
        }
        KeyGrad(pdsL1, dyL1_, cur.cols, p_->headDim, dv_, runs, cur.runCount);  // dV += P^T.dO
        if (hasNext && fixBound_) {
            Scores(n + 1, next);
        }
        // Chunk n+2's walk goes on during the dK scatter: here only whether it exists, so
        // its K/V load is issued now and the scalar unit's remaining reads sit between the
        // dK Fixpipes instead of in front of the dK loads.
        if (afterWalking) {
            hasAfter = WalkHasRows();
        }
        LoadScoreGrad(pdsL1, wsDs_[Slot::Ds(p_, n)]);
        segCols_[n - segStart] = cur.cols;
        const bool segEnd = !hasNext || n + 1 - segStart == p_->dqSegChunks;
        if (hasAfter && !segEnd) {
            IssueChunk(n + 2, ChunkInfo{LoadRows(), 0});
        }
        KeyGrad(pdsL1, qL1_, cur.cols, p_->qkDim, dk_, runs, cur.runCount);  // dK += dS^T.Q
        if (afterWalking) {
            hasAfter = FinishWalk(after);
            afterWalking = false;
        }
        if (segEnd) {
            if (!hasNext) {
                BeginPrewalk(t + 1, n + 1);
            }
            const uint64_t nextQ = !hasNext && t + 1 < SparseTokenEnd(p_, core_) ? t + 1 : ~0ULL;
            QueryGradPass(t, segStart, static_cast<uint32_t>(n + 1 - segStart), plainDq, nextQ);
            while (prewalking_) {
                StepPrewalk(KvGather::WALK_ALL);
            }
            plainDq = false;
            segStart = n + 1;
            if (hasNext) {
                LoadQueryRows(t);  // the pass staged over Q and dO
            }
            if (hasAfter) {
                IssueChunk(n + 2, after);
            }
        }
        if (!hasNext) {
            if (whole) {  // the token's dQ is complete: its vector cores cast it
                AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_SPARSE_DQ);
            }
            break;
        }
        // The walk of chunk n+3 runs while the vector cores work on chunk n+1, spread over
        // the next chunk's dV scatter.
        cur = next;
        next = after;
        hasNext = hasAfter;
        hasAfter = false;
        if (hasNext) {
            BeginWalk(n + 3);
            afterWalking = true;
        }
    }
    seq_ = n + 1;
}

}  // namespace AttentionCore
