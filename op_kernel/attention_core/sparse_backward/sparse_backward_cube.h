// Cube side (AIC) of the sparse backward core. Per query token (its G heads are the M rows)
// it stages Q (+ rope) and dO in L1 once; then per chunk n of gathered keys (KvGather; n
// counts the core's chunks over all its tokens):
//   K (+ rope), V rows gathered by the vector cores --FLAG_SPARSE_KV--> L1 (one DMA each)
//   S = Q.K^T and dP = dO.V^T -> S/dP slots (fp32)        --FLAG_SPARSE_SDP-->  vector cores
//   P, dS from their slots  <--FLAG_SPARSE_GRAD--         (P from the saved max/sum, dS)
//   dV[rows] += P^T.dO, dK[rows] += dS^T.Q   (Fixpipe atomic add, one per run of rows over
//                                             the full width)
// and after every dqSegChunks chunks of the token (and its last) the dQ pass: dQ += dS.K of
// those chunks, summed in L0C over the segment (column passes, one Fixpipe each), dS and K
// read again from the per-core rings the vector cores wrote them to. A per-chunk dQ partial
// would put G x qkDim fp32 through the Fixpipe, the busiest pipe, per chunk (a third of its
// work at G = 128); the pass moves that work to MTE2 and M, which the chunks leave idle.
// Two chunks are in flight: S/dP of chunk n+1 go to the vector cores before the dK/dV scatter
// of chunk n, and chunk n+2 is loaded once S/dP of n+1 released V (K in two L1 copies, V in
// one; P and dS take turns in one buffer). L0A and L0B are in two copies; L0C is a ring of
// three tiles (S, dP and dK/dV tiles of keyGradRows keys take turns), so Mmads run up to two
// results ahead of the Fixpipe (docs/performance.md, "SparseFlashAttentionGrad").
// The fractal moves are those of the dense backward core (backward_cube.h); what differs is
// the KV source (gathered rows) and the scatter of dK/dV.
// A KV row gathered by several tokens receives atomic adds from every core holding one of
// them (order-free fp32 sum); deterministic mode runs on one core, so the order is fixed.
#pragma once
#include "kernel_operator.h"
#include "../common/cube_tiles.h"
#include "../common/nz_handoff.h"
#include "kv_gather.h"
#include "sparse_backward_layout.h"
#include "../common/sync.h"

namespace AttentionCore {

// Run lists kept at once: chunk n's (its scatter), n+1's and n+2's (walked ahead).
constexpr uint32_t SPARSE_RUN_LISTS = 3;
// Selection entries the cube walks after each dK/dV key tile group's scatter (StepWalk): a
// 64-key chunk of single picks is 32 scalar GM reads, spread over a chunk's four dV groups.
constexpr uint32_t SPARSE_WALK_STEP = 2;
// Selection entries walked after each chunk's L0 loads in the dQ pass (StepPrewalk): the next
// token's two first chunks (128 entries of single picks) over a pass's ~100 chunk loads.
constexpr uint32_t SPARSE_PASS_WALK_STEP = 2;
// Event ids of the cube's buffer hand-offs: SPARSE_EVT_* in sync.h's table (MTE1 -> MTE2 "this
// L1 buffer was read into L0" for the two K copies, V and P/dS; M -> MTE1 per L0A/L0B copy;
// FIX -> M per L0C tile).

// Element offsets (in T) of chunk n's slots in a core's workspace area, the same for the cube
// and its vector cores: P and V by parity, dS and K in their rings (sparse_backward_params.h).
template <typename T> struct SparseSlot {
    __aicore__ inline static uint64_t P(const SparseBackwardParams *p, uint64_t n)
    {
        return (n % 2) * (p->wsSlotT / sizeof(T));
    }
    __aicore__ inline static uint64_t V(const SparseBackwardParams *p, uint64_t n)
    {
        return (n % 2) * (p->wsVSlot / sizeof(T));
    }
    __aicore__ inline static uint64_t Ds(const SparseBackwardParams *p, uint64_t n)
    {
        return (n % p->ringSlots) * (p->wsSlotT / sizeof(T));
    }
    __aicore__ inline static uint64_t K(const SparseBackwardParams *p, uint64_t n)
    {
        return (n % p->ringSlots) * (p->wsKSlot / sizeof(T));
    }
};

template <typename T> class SparseBackwardCube {
public:
    __aicore__ inline void Init(const SparseBackwardParams *p, AscendC::TPipe *pipe, GM_ADDR query, GM_ADDR indices,
                                GM_ADDR dy, GM_ADDR seqQ, GM_ADDR seqKv, GM_ADDR queryRope, GM_ADDR workspace)
    {
        p_ = p;
        gather_.InitSelection(p, indices, workspace, seqQ, seqKv);
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        dy_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dy));
        if (p->ropeDim != 0) {
            qr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(queryRope));
        }
        core_ = AscendC::GetBlockIdx();
        dq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDq));
        dk_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDk));
        dv_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDv));
        GM_ADDR slots = workspace + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + p->wsSlotF32));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32));
        wsV_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsV));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsDsRing));
        wsK_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsKRing));

        // L1 and L0 (sparse_backward_layout.h, the planner's checks): two K copies, then V in
        // kvL1_ (the dQ pass stages its operands over all three); L0C the ring, or the dQ
        // pass's accumulators when they take more.
        const SparseCubeL1 l1 = SparseBackwardCubeL1Layout(p->headsPad, p->blockKv, p->qkDim, p->headDim, sizeof(T));
        const SparseCubeL0 l0 =
            SparseBackwardCubeL0Layout(p->l0Copies, p->l0aElems, p->l0bElems, p->l0cTiles, p->l0cTileElems, p->dqTiles,
                                       p->headsPad, p->dqPassCols, sizeof(T));
        pipe->InitBuffer(l1_, static_cast<uint32_t>(l1.Total()));
        l1All_ = l1_.Get<T>();
        qL1_ = l1All_;
        dyL1_ = l1All_[l1.q / sizeof(T)];
        pdsL1_ = l1All_[(l1.q + l1.dy) / sizeof(T)];
        kvL1_ = l1All_[(l1.q + l1.dy + l1.pds) / sizeof(T)];
        l1Elems_ = static_cast<uint32_t>(l1.Total() / sizeof(T));
        pipe->InitBuffer(l0a_, l0.a);
        pipe->InitBuffer(l0b_, l0.b);
        pipe->InitBuffer(l0c_, l0.c);
    }

    __aicore__ inline void Process()
    {
        const uint64_t begin = p_->coreTokenStart[core_];
        const uint64_t end = SparseTokenEnd(p_, core_);
        if (begin < end) {
            LoadQueryRows(begin);  // nothing to wait for: under the vector cores' first pass
        }
        AscendC::SyncAll<false>();  // the vector cores zeroed the accumulators
        for (uint64_t t = begin; t < end; ++t) {
            Token(t, t == begin);
        }
        WaitBuffers();
        AscendC::SyncAll<false>();  // every atomic add landed before the cast-out pass
    }

private:
    using Slot = SparseSlot<T>;
    using Tiles = CubeTiles<T>;  // 16-bit only (the sparse grad takes FLOAT16 and BFLOAT16)
    // A walked chunk: its width; its runs stay in run list n % SPARSE_RUN_LISTS until its
    // dK/dV scatter is issued.
    struct ChunkInfo {
        uint32_t cols;
        uint32_t runCount;
    };

    __aicore__ inline static uint16_t MmadRows(uint32_t rows) { return static_cast<uint16_t>(rows == 1 ? 16 : rows); }

    // Chunk n's K copy in L1 (two, n % 2), V after them.
    __aicore__ inline AscendC::LocalTensor<T> KCopy(uint64_t n) { return kvL1_[(n % 2) * p_->blockKv * p_->qkDim]; }

    __aicore__ inline AscendC::LocalTensor<T> VBuf() { return kvL1_[2 * p_->blockKv * p_->qkDim]; }

    // MTE1 -> MTE2: buffer `id` (a K copy or V) was read into L0; the next load into it waits.
    __aicore__ inline void ReleaseBuffer(int32_t id)
    {
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(id);
        bufPending_[id] = true;
    }

    __aicore__ inline void AcquireBuffer(int32_t id)
    {
        if (bufPending_[id]) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(id);
            bufPending_[id] = false;
        }
    }

    __aicore__ inline void WaitBuffers()
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
    __aicore__ inline AscendC::LocalTensor<float> TakeTile(uint32_t &tile)
    {
        tile = tileIdx_;
        tileIdx_ = tileIdx_ + 1 == p_->l0cTiles ? 0 : tileIdx_ + 1;
        return l0c_.Get<float>()[tile * p_->l0cTileElems];
    }

    __aicore__ inline AscendC::LocalTensor<float> TileAt(uint32_t tile)
    {
        return l0c_.Get<float>()[tile * p_->l0cTileElems];
    }

    __aicore__ inline void TileWritten(uint32_t tile)
    {
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(SPARSE_EVT_TILE + static_cast<int32_t>(tile));
        tilePending_[tile] = true;
    }

    __aicore__ inline void TileFree(uint32_t tile)
    {
        if (tilePending_[tile]) {
            AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(SPARSE_EVT_TILE + static_cast<int32_t>(tile));
            tilePending_[tile] = false;
        }
    }

    // `rows` rows of `width` elements (pitch `pitch`) -> L1 Nz with `dstRows` rows per fractal
    // column, starting at row `row0` of the destination.
    __aicore__ inline void LoadNz(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                  uint32_t row0, uint32_t rows, uint32_t width, uint32_t pitch, uint32_t dstRows)
    {
        AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(width), 0,
                                static_cast<uint16_t>(pitch), static_cast<uint16_t>(dstRows), 1, 0);
        AscendC::DataCopy(dst[row0 * 16], src, nd);
    }

    // The first `rows` rows (rounded up to 16) of `width` columns of an Nz slot of blockKv rows
    // per column block -> an L1 tile of the same layout, one plain copy.
    __aicore__ inline void LoadSlotNz(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      uint32_t rows, uint32_t width)
    {
        const uint32_t rowsPad = AlignUp(rows, 16);
        const uint16_t gap = static_cast<uint16_t>(p_->blockKv - rowsPad);
        AscendC::DataCopy(dst, src,
                          AscendC::DataCopyParams(static_cast<uint16_t>(AlignUp(width, 16) / 16),
                                                  static_cast<uint16_t>(rowsPad), gap, gap));
    }

    __aicore__ inline void LoadQueryRows(uint64_t t)
    {
        LoadQuery(t);
        LoadDy(t);
    }

    // Q (+ rope) of token t -> L1, once the previous token's tiles (and the dQ pass's staging
    // over them) were read into L0.
    __aicore__ inline void LoadQuery(uint64_t t)
    {
        const uint32_t g = p_->heads;
        const uint32_t d = p_->headDim;
        const uint32_t dr = p_->ropeDim;
        PipeSync<AscendC::HardEvent::MTE1_MTE2>();
        const AscendC::LocalTensor<T> qL1 = qL1_;
        LoadNz(qL1, q_[t * g * d], 0, g, d, d, p_->headsPad);
        if (dr != 0) {
            LoadNz(qL1[d * p_->headsPad], qr_[t * g * dr], 0, g, dr, dr, p_->headsPad);
        }
    }

    // dO of token t -> L1 (after LoadQuery, which waited for the previous tiles' reads).
    __aicore__ inline void LoadDy(uint64_t t)
    {
        const uint32_t g = p_->heads;
        const uint32_t d = p_->headDim;
        LoadNz(dyL1_, dy_[t * g * d], 0, g, d, d, p_->headsPad);
    }

    // Walks the token's selection to chunk n's runs (scalar reads of the selection); false
    // when it is exhausted.
    __aicore__ inline bool WalkChunk(uint64_t n, ChunkInfo &info)
    {
        info.cols = gather_.NextChunk(runs_[n % SPARSE_RUN_LISTS], info.runCount);
        return info.cols != 0;
    }

    // The same walk in steps: BeginWalk, then StepWalk between the dV scatter's key tiles
    // (SPARSE_WALK_STEP entries each: the Fixpipe queue stays fed while the scalar unit
    // reads the selection), then FinishWalk before the chunk's width is needed.
    __aicore__ inline void BeginWalk(uint64_t n)
    {
        walkN_ = n;
        walking_ = true;
        gather_.BeginChunk();
    }

    __aicore__ inline void StepWalk(uint32_t budget)
    {
        if (walking_ && gather_.StepChunk(runs_[walkN_ % SPARSE_RUN_LISTS], budget)) {
            walking_ = false;
        }
    }

    __aicore__ inline bool FinishWalk(ChunkInfo &info)
    {
        StepWalk(KvGather::WALK_ALL);
        info.cols = gather_.ChunkRows(info.runCount);
        return info.cols != 0;
    }

    // Chunk n (walked): its K (+ rope) and V rows, gathered by the vector cores into their
    // slots, -> K copy n % 2 and V in L1, one DMA per tensor. At a token's start (`dyToken`
    // not ~0) that token's dO loads between K and V, and S = Q.K^T of the chunk (Scores)
    // waits only for Q and K (SPARSE_EVT_QK): it runs while dO and V load.
    __aicore__ inline void IssueChunk(uint64_t n, const ChunkInfo &info, uint64_t dyToken = ~0ULL)
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
    __aicore__ inline void LoadScoreGrad(const AscendC::LocalTensor<T> &pdsL1, const AscendC::GlobalTensor<T> &src)
    {
        AcquireBuffer(SPARSE_EVT_PDS);
        NzHandoff<T>::Load(pdsL1, src, p_->headsPad, p_->blockKv, p_->headsPad);
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
    }

    // S and dP of chunk n (K/V already loaded) -> slots, then FLAG_SPARSE_SDP; its K copy and
    // V are free for the next loads once read into L0B.
    __aicore__ inline void Scores(uint64_t n, const ChunkInfo &info)
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

    // This core's chunks of query token t: chunk n's gradients are computed while S/dP of chunk
    // n+1 are with the vector cores and chunk n+2 is being loaded; a full dQ segment (or the
    // last chunk) is followed by its dQ pass, and chunk n+2 is loaded after it (the pass
    // stages its operands over the K copies and V). `loaded`: Q and dO are in L1 already.
    __aicore__ inline void Token(uint64_t t, bool loaded)
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
        if (prewalked_) {  // the first two chunks were walked during the last token's dQ pass
            prewalked_ = false;
            cur = pre_[0];
            next = pre_[1];
            if (cur.cols == 0) {
                return;  // nothing selected here: the vector cores zero the dQ rows of a whole token
            }
            if (!loaded) {
                LoadQuery(t);
            }
            IssueChunk(n, cur, loaded ? ~0ULL : t);
            hasNext = next.cols != 0;
        } else {
            gather_.SetToken(t);
            gather_.LimitChunks(first, last, runs_[0]);
            if (!loaded) {
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
            if (hasNext) {
                Scores(n + 1, next);
            }
            KeyGrad(pdsL1, dyL1_, cur.cols, p_->headDim, dv_, runs, cur.runCount);  // dV += P^T.dO
            if (afterWalking) {
                hasAfter = FinishWalk(after);
                afterWalking = false;
            }
            LoadScoreGrad(pdsL1, wsDs_[Slot::Ds(p_, n)]);
            segCols_[n - segStart] = cur.cols;
            const bool segEnd = !hasNext || n + 1 - segStart == p_->dqSegChunks;
            if (hasAfter && !segEnd) {
                IssueChunk(n + 2, after);
            }
            KeyGrad(pdsL1, qL1_, cur.cols, p_->qkDim, dk_, runs, cur.runCount);  // dK += dS^T.Q
            if (segEnd) {
                if (!hasNext) {
                    BeginPrewalk(t + 1, n + 1);
                }
                QueryGradPass(t, segStart, static_cast<uint32_t>(n + 1 - segStart), plainDq);
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

    // The walks of token u's first two chunks (m, m + 1) during the dQ pass before it (the
    // pass is MTE2-bound, its scalar unit mostly waits for full queues), so that at the token's
    // start the scalar unit issues its loads and S/dP at once: BeginPrewalk, StepPrewalk after
    // each group of the pass, the rest after the pass; Token(u) takes pre_.
    __aicore__ inline void BeginPrewalk(uint64_t u, uint64_t m)
    {
        if (u >= SparseTokenEnd(p_, core_)) {
            return;
        }
        uint32_t first = 0;
        uint32_t last = 0;
        SparseChunkRange(p_, core_, u, first, last);
        gather_.SetToken(u);
        gather_.LimitChunks(first, last, runs_[m % SPARSE_RUN_LISTS]);
        pre_[1].cols = 0;
        preStage_ = 0;
        prewalking_ = true;
        BeginWalk(m);
    }

    __aicore__ inline void StepPrewalk(uint32_t budget)
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

    // A group of the dQ pass: chunks [i, i + m) of the segment, column pass p0.
    struct PassGroup {
        uint32_t p0;
        uint32_t i;
        uint32_t m;
    };

    // Elements of one staging half of the dQ pass (all of L1 split in two, 512-byte aligned).
    __aicore__ inline uint32_t PassHalfElems() const { return l1Elems_ / 2 / 256 * 256; }

    // The group's chunk count: up to dqPassChunks chunks in adjacent ring slots (no wrap).
    __aicore__ inline void GroupSize(PassGroup &g, uint64_t first, uint32_t count) const
    {
        const uint32_t most = p_->dqPassChunks;
        const uint32_t room = p_->ringSlots - static_cast<uint32_t>((first + g.i) % p_->ringSlots);
        g.m = count - g.i < most ? count - g.i : most;
        g.m = g.m < room ? g.m : room;
    }

    // The group's dS tiles and K column blocks -> staging half `half` (once MTE1 read its
    // previous group), then MTE2 -> MTE1. Several chunks share one copy per tensor; a short
    // last chunk's slot rows past its keys are staged too and never read.
    __aicore__ inline void StageGroup(const PassGroup &g, uint64_t first, uint32_t half)
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
    // its Q and dO again.
    __aicore__ inline void QueryGradPass(uint64_t t, uint64_t first, uint32_t count, bool plain)
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
        StageGroup(g, first, 0);
        uint32_t half = 0;
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

    // L0A / L0B copies (l0Copies of each): an L1 -> L0 load into a copy waits for the Mmads
    // that read it (M -> MTE1, ids SPARSE_EVT_L0A/L0B + copy), so the loads of the next step
    // run while the current Mmad does.
    __aicore__ inline AscendC::LocalTensor<T> TakeL0A(uint32_t &copy)
    {
        copy = NextCopy(l0aIdx_, p_->l0Copies);
        WaitL0(SPARSE_EVT_L0A + static_cast<int32_t>(copy));
        return l0a_.Get<T>()[copy * (p_->l0aElems)];
    }

    __aicore__ inline AscendC::LocalTensor<T> TakeL0B(uint32_t &copy)
    {
        copy = NextCopy(l0bIdx_, p_->l0Copies);
        WaitL0(SPARSE_EVT_L0B + static_cast<int32_t>(copy));
        return l0b_.Get<T>()[copy * (p_->l0bElems)];
    }

    // Both L0B copies as one buffer (the planner makes two copies whenever this is used);
    // released as copies 0 and 1.
    __aicore__ inline AscendC::LocalTensor<T> TakeL0BWhole()
    {
        WaitL0(SPARSE_EVT_L0B);
        WaitL0(SPARSE_EVT_L0B + 1);
        return l0b_.Get<T>();
    }

    __aicore__ inline void WaitL0(int32_t id)
    {
        if (l0Pending_[id]) {
            AscendC::WaitFlag<AscendC::HardEvent::M_MTE1>(id);
            l0Pending_[id] = false;
        }
    }

    __aicore__ inline void ReleaseL0(int32_t id)
    {
        AscendC::SetFlag<AscendC::HardEvent::M_MTE1>(id);
        l0Pending_[id] = true;
    }

    // out (heads x cols fp32, pitch blockKv) = A.B^T with A (heads x width, Nz of headsPad
    // rows) and B (cols x width, Nz of blockKv rows) in L1, into the next L0C tile.
    __aicore__ inline void ScoreLike(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t width,
                                     const AscendC::GlobalTensor<float> &out)
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
                          AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(kLen),
                                              0, false, kc == 0));
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
    __aicore__ inline void Scatter(const AscendC::LocalTensor<float> &l0c, uint32_t k0, uint32_t kLen, uint32_t width,
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
            AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(width), static_cast<uint16_t>(hi - lo), tileRows,
                                           width, false);
            AscendC::Fixpipe(out[(run.kvRow + (lo - run.pos)) * width], l0c[(lo - k0) * 16], fix);
            StepWalk(SPARSE_WALK_STEP);
        }
        AscendC::SetAtomicNone();
    }

    // out[run rows] (width columns, pitch width) += X^T.Y with X (heads x blockKv, Nz) and
    // Y (heads x width, Nz) in L1. The result is built in L0C for keyGradRows keys at a time
    // over the full width (Nz, keyGradRows rows per fractal column), so each run of gathered
    // rows leaves in one atomic Fixpipe, whatever the width: with single picks the scatter is
    // one Fixpipe per key and tensor, not one per key and 128-column chunk.
    __aicore__ inline void KeyGrad(const AscendC::LocalTensor<T> &xL1, const AscendC::LocalTensor<T> &yL1,
                                   uint32_t cols, uint32_t width, const AscendC::GlobalTensor<float> &out,
                                   const GatherRun *runs, uint32_t runCount)
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
                Tiles::LoadB(l0b, yL1, L1Shape{p_->headsPad, AlignUp(width, 16)}, p_->headsPad, dc, dLen);
                PipeSync<AscendC::HardEvent::MTE1_M>();
                for (uint32_t i = 0; i < tiles; ++i) {
                    const uint32_t k0 = g0 + i * step;
                    const uint16_t mRows = MmadRows(cols - k0 < step ? cols - k0 : step);
                    if (dc == 0) {
                        TileFree(tile[i]);
                    }
                    AscendC::Mmad(TileAt(tile[i])[dc * AlignUp(mRows, 16)], l0a[(k0 / 16) * m1 * Tiles::FRAC], l0b,
                                  AscendC::MmadParams(mRows, static_cast<uint16_t>(dLen), static_cast<uint16_t>(rows),
                                                      0, false, true));
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

    const SparseBackwardParams *p_ = nullptr;
    KvGather gather_;
    GatherRun runs_[SPARSE_RUN_LISTS][GATHER_MAX_RUNS];
    uint32_t segCols_[SPARSE_MAX_SEG];  // widths of the current dQ segment's chunks
    uint64_t seq_ = 0;                  // the core's next chunk number
    uint64_t walkN_ = 0;                // the chunk StepWalk walks
    bool walking_ = false;
    ChunkInfo pre_[2];       // the next token's first two chunks, walked ahead (BeginPrewalk)
    uint32_t preStage_ = 0;  // the one of them being walked
    bool prewalking_ = false;
    bool prewalked_ = false;  // pre_ holds them: Token takes them instead of walking
    bool qkOnly_ = false;     // the next Scores waits for Q and K alone (SPARSE_EVT_QK), then for dO/V
    bool bufPending_[SPARSE_EVT_PDS + 1] = {false, false, false, false, false};
    bool l0Pending_[SPARSE_EVT_L0B + 2] = {false, false, false, false, false};
    uint32_t l0aIdx_ = 0;
    uint32_t l0bIdx_ = 0;
    bool tilePending_[SPARSE_MAX_TILES] = {false, false, false};
    uint32_t tileIdx_ = 0;
    uint32_t core_ = 0;
    AscendC::GlobalTensor<T> q_, dy_, qr_;
    AscendC::GlobalTensor<float> dq_, dk_, dv_, wsS_, wsDp_;
    AscendC::GlobalTensor<T> wsP_, wsDs_, wsV_, wsK_;
    // L1 as one buffer (sparse_backward_layout.h): Q, dO, P/dS, the K copies and V, in that
    // order; the dQ pass stages its operands over all of it.
    AscendC::TBuf<AscendC::TPosition::A1> l1_;
    AscendC::LocalTensor<T> l1All_, qL1_, dyL1_, pdsL1_, kvL1_;
    uint32_t l1Elems_ = 0;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
};

}  // namespace AttentionCore
