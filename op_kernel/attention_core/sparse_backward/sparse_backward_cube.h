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
// The class declares its parts; their member functions live in a file each (included at the
// end): sparse_cube_buffers.h (L1 events, the L0C ring, the L0A/L0B copies), sparse_cube_loads.h,
// sparse_cube_walk.h (the selection into runs), sparse_cube_token.h (the chunk loop of a
// token), sparse_cube_dq_pass.h and sparse_cube_mmads.h (S/dP, dK/dV and their scatter).
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
// Selection entries the cube walks after each scatter Fixpipe (StepWalk; two entries are
// one scalar GM read): a 64-key chunk is 64 entries, spread over the dV and dK scatters of
// the chunk before it. Two entries each by default; one for single tokens of 128 heads
// (SparseBackwardCube::fixBound_), whose chunks take long enough for the ~70 Fixpipes of
// ~2-row runs to spread the reads thinner (docs/performance.md, "SparseFlashAttentionGrad").
constexpr uint32_t SPARSE_WALK_STEP = 2;
constexpr uint32_t SPARSE_FIX_BOUND_WALK_STEP = 1;
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
        fixBound_ = p->pairTokens == 0 && p->headsPad >= 128;
        walkStep_ = fixBound_ ? SPARSE_FIX_BOUND_WALK_STEP : SPARSE_WALK_STEP;
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

    __aicore__ inline AscendC::LocalTensor<float> TileAt(uint32_t tile)
    {
        return l0c_.Get<float>()[tile * p_->l0cTileElems];
    }

    // A group of the dQ pass: chunks [i, i + m) of the segment, column pass p0.
    struct PassGroup {
        uint32_t p0;
        uint32_t i;
        uint32_t m;
    };

    // Elements of one staging half of the dQ pass (all of L1 split in two, 512-byte aligned).
    __aicore__ inline uint32_t PassHalfElems() const { return l1Elems_ / 2 / 256 * 256; }

    // L1 buffer events, the L0C tile ring and the L0A/L0B copies (sparse_cube_buffers.h).
    __aicore__ inline void ReleaseBuffer(int32_t id);
    __aicore__ inline void AcquireBuffer(int32_t id);
    __aicore__ inline void WaitBuffers();
    __aicore__ inline AscendC::LocalTensor<float> TakeTile(uint32_t &tile);
    __aicore__ inline void TileWritten(uint32_t tile);
    __aicore__ inline void TileFree(uint32_t tile);
    __aicore__ inline AscendC::LocalTensor<T> TakeL0A(uint32_t &copy);
    __aicore__ inline AscendC::LocalTensor<T> TakeL0B(uint32_t &copy);
    __aicore__ inline AscendC::LocalTensor<T> TakeL0BWhole();
    __aicore__ inline void WaitL0(int32_t id);
    __aicore__ inline void ReleaseL0(int32_t id);

    // Loads into L1: Q and dO of a token, a chunk's K and V, P and dS (sparse_cube_loads.h).
    __aicore__ inline void LoadNz(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                  uint32_t row0, uint32_t rows, uint32_t width, uint32_t pitch, uint32_t dstRows);
    __aicore__ inline void LoadSlotNz(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                      uint32_t rows, uint32_t width);
    __aicore__ inline void LoadQueryRows(uint64_t t);
    __aicore__ inline void LoadQuery(uint64_t t);
    __aicore__ inline void CopyQuery(uint64_t t);
    __aicore__ inline void LoadDy(uint64_t t);
    __aicore__ inline void IssueChunk(uint64_t n, const ChunkInfo &info, uint64_t dyToken = ~0ULL);
    __aicore__ inline void LoadScoreGrad(const AscendC::LocalTensor<T> &pdsL1, const AscendC::GlobalTensor<T> &src);

    // The walk of the selection into chunks of runs, in steps (sparse_cube_walk.h).
    __aicore__ inline bool WalkChunk(uint64_t n, ChunkInfo &info);
    __aicore__ inline void BeginWalk(uint64_t n);
    __aicore__ inline void StepWalk(uint32_t budget);
    __aicore__ inline bool FinishWalk(ChunkInfo &info);
    __aicore__ inline bool WalkHasRows();
    __aicore__ inline uint32_t LoadRows();
    __aicore__ inline void BeginPrewalk(uint64_t u, uint64_t m);
    __aicore__ inline void StepPrewalk(uint32_t budget);
    __aicore__ inline void WaitSorted(uint64_t u);

    // The chunks of one query token (sparse_cube_token.h).
    __aicore__ inline void Token(uint64_t t, bool loaded);

    // The dQ pass over a segment of chunks (sparse_cube_dq_pass.h).
    __aicore__ inline void GroupSize(PassGroup &g, uint64_t first, uint32_t count) const;
    __aicore__ inline uint32_t FirstHalf(uint64_t first, uint32_t count) const;
    __aicore__ inline void StageGroup(const PassGroup &g, uint64_t first, uint32_t half);
    __aicore__ inline void QueryGradPass(uint64_t t, uint64_t first, uint32_t count, bool plain, uint64_t nextQ);

    // The Mmads: S and dP, dK and dV with their scatter (sparse_cube_mmads.h).
    __aicore__ inline void Scores(uint64_t n, const ChunkInfo &info);
    __aicore__ inline void ScoreLike(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t width,
                                     const AscendC::GlobalTensor<float> &out);
    __aicore__ inline void Scatter(const AscendC::LocalTensor<float> &l0c, uint32_t k0, uint32_t kLen, uint32_t width,
                                   const AscendC::GlobalTensor<float> &out, const GatherRun *runs, uint32_t runCount);
    __aicore__ inline void KeyGrad(const AscendC::LocalTensor<T> &xL1, const AscendC::LocalTensor<T> &yL1,
                                   uint32_t cols, uint32_t width, const AscendC::GlobalTensor<float> &out,
                                   const GatherRun *runs, uint32_t runCount);

    const SparseBackwardParams *p_ = nullptr;
    KvGather gather_;
    GatherRun runs_[SPARSE_RUN_LISTS][GATHER_MAX_RUNS];
    uint32_t segCols_[SPARSE_MAX_SEG];  // widths of the current dQ segment's chunks
    uint64_t seq_ = 0;                  // the core's next chunk number
    uint64_t walkN_ = 0;                // the chunk StepWalk walks
    bool walking_ = false;
    uint32_t walkStep_ = SPARSE_WALK_STEP;  // entries per StepWalk in the scatter
    // Single tokens of 128 heads: the Fixpipe binds their chunks (the pair items and G = 64
    // bind MTE1 or the walk): S/dP of the next chunk go after the dV key groups, one walk
    // entry per scatter Fixpipe.
    bool fixBound_ = false;
    ChunkInfo pre_[2];       // the next token's first two chunks, walked ahead (BeginPrewalk)
    uint32_t preStage_ = 0;  // the one of them being walked
    bool prewalking_ = false;
    bool prewalked_ = false;  // pre_ holds them: Token takes them instead of walking
    bool qkOnly_ = false;     // the next Scores waits for Q and K alone (SPARSE_EVT_QK), then for dO/V
    bool qAhead_ = false;     // the next token's Q was loaded under the dQ pass's last group
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

#include "sparse_cube_buffers.h"
#include "sparse_cube_loads.h"
#include "sparse_cube_walk.h"
#include "sparse_cube_token.h"
#include "sparse_cube_dq_pass.h"
#include "sparse_cube_mmads.h"
