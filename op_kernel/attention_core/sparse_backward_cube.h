// Cube side (AIC) of the sparse backward core. Per query token (its G heads are the M rows)
// it stages Q (+ rope) and dO in L1 once; then per chunk j of gathered keys (KvGather):
//   K (+ rope), V rows gathered by the vector cores --FLAG_SPARSE_KV--> L1 (one DMA each)
//   S = Q.K^T and dP = dO.V^T -> S/dP slots (fp32)        --FLAG_SPARSE_SDP-->  vector cores
//   P, dS from the P/dS slots <--FLAG_SPARSE_GRAD--       (P from the saved max/sum, dS)
//   dV[rows] += P^T.dO, dK[rows] += dS^T.Q   (Fixpipe atomic add, one per run of rows over
//                                             the full width)
//   dQ partial = dS.K -> dQ slot --FLAG_SPARSE_DQ--> vector cores (atomic add into dQ)
// Two chunks are in flight: S/dP of chunk j+1 go to the vector cores before the dK/dV scatter
// of chunk j, and chunk j+2 is loaded once chunk j's dQ released its K copy (K in two L1
// copies, V in one: V is dead once dP is computed; P and dS take turns in one buffer). L0A
// and L0B are in two copies; L0C is a ring of three tiles (S, dP, dQ column passes and dK/dV
// tiles of keyGradRows keys take turns), so Mmads run up to two results ahead of the
// Fixpipe, which is the busiest pipe (docs/performance.md, "SparseFlashAttentionGrad").
// The fractal moves are those of the dense backward core (backward_cube.h); what differs is
// the KV source (gathered rows) and the scatter of dK/dV.
// A KV row gathered by several tokens receives atomic adds from every core holding one of
// them (order-free fp32 sum); deterministic mode runs on one core, so the order is fixed.
#pragma once
#include "kernel_operator.h"
#include "cube_tiles.h"
#include "kv_gather.h"
#include "sync.h"

namespace AttentionCore {

constexpr uint16_t FLAG_SPARSE_SDP = 7;   // cube -> vector: S and dP of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_GRAD = 8;  // vector -> cube: P and dS of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_KV = 9;    // vector -> cube: the chunk's K/V rows are in its gathered-KV slot
constexpr uint16_t FLAG_SPARSE_DQ = 10;   // cube -> vector: the chunk's dQ partial is in its dQ slot

// Run lists kept at once: chunk j's (its scatter), j+1's and j+2's (walked ahead).
constexpr uint32_t SPARSE_RUN_LISTS = 3;
// Event ids of the cube's buffer hand-offs (id 0 stays with PipeSync): MTE1 -> MTE2 "this L1
// buffer was read into L0" for the two K copies, V and P/dS; M -> MTE1 per L0A/L0B copy;
// FIX -> M per L0C tile.
constexpr int32_t SPARSE_EVT_K = 1;  // + copy
constexpr int32_t SPARSE_EVT_V = 3;
constexpr int32_t SPARSE_EVT_PDS = 4;
constexpr int32_t SPARSE_EVT_L0A = 1;  // M -> MTE1, + copy
constexpr int32_t SPARSE_EVT_L0B = 3;  // M -> MTE1, + copy
constexpr int32_t SPARSE_EVT_TILE = 1;  // FIX -> M: L0C tile written out, + tile (up to 3)
constexpr uint32_t SPARSE_MAX_TILES = 3;

template <typename T>
class SparseBackwardCube {
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
        dk_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDk));
        dv_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDv));
        GM_ADDR slots = workspace + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + p->wsSlotF32));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32 + p->wsSlotT));
        wsGather_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsGather));
        wsDqPart_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + p->wsDqPart));

        const uint32_t g = p->headsPad;
        const uint32_t c = p->blockKv;
        pipe->InitBuffer(qL1_, g * p->qkDim * sizeof(T));
        pipe->InitBuffer(dyL1_, g * p->headDim * sizeof(T));
        pipe->InitBuffer(pdsL1_, g * c * sizeof(T));
        pipe->InitBuffer(kL1_, p->kBufs * c * p->qkDim * sizeof(T));
        pipe->InitBuffer(vL1_, c * p->headDim * sizeof(T));
        pipe->InitBuffer(l0a_, p->l0Copies * p->l0aElems * sizeof(T));
        pipe->InitBuffer(l0b_, p->l0Copies * p->l0bElems * sizeof(T));
        pipe->InitBuffer(l0c_, p->l0cTiles * p->l0cTileElems * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        AscendC::SyncAll<false>();  // the vector cores zeroed the accumulators
        const uint64_t begin = p_->coreTokenStart[core_];
        const uint64_t end = p_->coreTokenStart[core_ + 1];
        for (uint64_t t = begin; t < end; ++t) {
            Token(t);
        }
        WaitBuffers();
        AscendC::SyncAll<false>();  // every atomic add landed before the cast-out pass
    }

private:
    using Tiles = CubeTiles<T>;  // 16-bit only (the sparse grad takes FLOAT16 and BFLOAT16)
    // Chunk bookkeeping: the runs of a chunk stay until its dK/dV scatter is issued; chunk j
    // uses K copy j % kBufs and run list j % SPARSE_RUN_LISTS.
    struct ChunkInfo {
        uint32_t cols;
        uint32_t runCount;
    };

    __aicore__ inline static uint16_t MmadRows(uint32_t rows) { return static_cast<uint16_t>(rows == 1 ? 16 : rows); }

    __aicore__ inline AscendC::LocalTensor<T> KCopy(uint32_t j)
    {
        return kL1_.Get<T>()[(j % p_->kBufs) * p_->blockKv * p_->qkDim];
    }

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

    // L0C is a ring of l0cTiles tiles (l0cTileElems fp32 each); every result (S, dP, a dQ
    // column pass, a dK/dV key tile) takes the next one, so the Mmads of the next results run
    // while the Fixpipe drains the current one. FIX -> M per tile.
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
    __aicore__ inline void LoadNz(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src, uint32_t row0,
                                  uint32_t rows, uint32_t width, uint32_t pitch, uint32_t dstRows)
    {
        AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(width), 0,
                                static_cast<uint16_t>(pitch), static_cast<uint16_t>(dstRows), 1, 0);
        AscendC::DataCopy(dst[row0 * 16], src, nd);
    }

    __aicore__ inline void LoadQueryRows(uint64_t t)
    {
        const uint32_t g = p_->heads;
        const uint32_t d = p_->headDim;
        const uint32_t dr = p_->ropeDim;
        PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // the previous token's tiles are consumed
        const AscendC::LocalTensor<T> qL1 = qL1_.Get<T>();
        LoadNz(qL1, q_[t * g * d], 0, g, d, d, p_->headsPad);
        if (dr != 0) {
            LoadNz(qL1[d * p_->headsPad], qr_[t * g * dr], 0, g, dr, dr, p_->headsPad);
        }
        LoadNz(dyL1_.Get<T>(), dy_[t * g * d], 0, g, d, d, p_->headsPad);
    }

    // Walks the token's selection to chunk j's runs (scalar reads of sparse_indices); false
    // when the selection is exhausted.
    __aicore__ inline bool WalkChunk(uint32_t j, ChunkInfo &info)
    {
        info.cols = gather_.NextChunk(runs_[j % SPARSE_RUN_LISTS], info.runCount);
        return info.cols != 0;
    }

    // Chunk j (walked): its K (+ rope) and V rows, gathered by the vector cores into slot
    // j % 2, -> K copy j % kBufs and V in L1, one DMA per tensor.
    __aicore__ inline void IssueChunk(uint32_t j, const ChunkInfo &info)
    {
        const uint32_t c = p_->blockKv;
        const uint32_t w = p_->qkDim;
        const uint32_t d = p_->headDim;
        const uint64_t slot = (j % 2) * (p_->wsGatherBytes / sizeof(T));
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_SPARSE_KV);
        AcquireBuffer(SPARSE_EVT_K + static_cast<int32_t>(j % p_->kBufs));
        LoadNz(KCopy(j), wsGather_[slot], 0, info.cols, w, w, c);
        AcquireBuffer(SPARSE_EVT_V);
        LoadNz(vL1_.Get<T>(), wsGather_[slot + c * w], 0, info.cols, d, d, c);
    }

    // P or dS of the current chunk (heads x blockKv) from its slot -> the P/dS L1 buffer, once
    // the previous one was read into L0A (P and dS take turns in one buffer: with G = 128 the
    // second K copy leaves no room for two).
    __aicore__ inline void LoadScoreGrad(const AscendC::LocalTensor<T> &pdsL1, const AscendC::GlobalTensor<T> &src)
    {
        AcquireBuffer(SPARSE_EVT_PDS);
        LoadNz(pdsL1, src, 0, p_->heads, p_->blockKv, p_->blockKv, p_->headsPad);
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
    }

    // S and dP of chunk j (K/V already gathered) -> slots, then FLAG_SPARSE_SDP.
    __aicore__ inline void Scores(uint32_t j, const ChunkInfo &info)
    {
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();  // the chunk's K/V landed
        ScoreLike(qL1_.Get<T>(), KCopy(j), p_->heads, info.cols, p_->qkDim, wsS_);  // S = Q.K^T
        ScoreLike(dyL1_.Get<T>(), vL1_.Get<T>(), p_->heads, info.cols, p_->headDim, wsDp_);  // dP = dO.V^T
        ReleaseBuffer(SPARSE_EVT_V);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_SPARSE_SDP);
    }

    // One query token: chunk j's gradients are computed while S/dP of chunk j+1 are with the
    // vector cores and chunk j+2 is being gathered.
    __aicore__ inline void Token(uint64_t t)
    {
        const bool ahead = p_->kBufs == 2;  // else: gather chunk j+1 after chunk j's dQ
        gather_.SetToken(t);
        ChunkInfo cur;
        ChunkInfo next;
        ChunkInfo after;
        LoadQueryRows(t);
        if (!WalkChunk(0, cur)) {
            return;  // nothing selected: zero gradients
        }
        IssueChunk(0, cur);
        Scores(0, cur);
        bool hasNext = ahead && WalkChunk(1, next);
        if (hasNext) {
            IssueChunk(1, next);
        }
        bool hasAfter = hasNext && WalkChunk(2, after);
        for (uint32_t j = 0;; ++j) {
            AscendC::CrossCoreWaitFlag(FLAG_SPARSE_GRAD);
            const AscendC::LocalTensor<T> pdsL1 = pdsL1_.Get<T>();
            const GatherRun *runs = runs_[j % SPARSE_RUN_LISTS];
            const uint64_t pds = (j % 2) * 2 * (p_->wsSlotT / sizeof(T));  // P/dS slot of chunk j
            LoadScoreGrad(pdsL1, wsP_[pds]);
            if (hasNext) {
                Scores(j + 1, next);
            }
            KeyGrad(pdsL1, dyL1_.Get<T>(), cur.cols, p_->headDim, dv_, runs, cur.runCount);  // dV += P^T.dO
            LoadScoreGrad(pdsL1, wsDs_[pds]);
            QueryGrad(pdsL1, KCopy(j), cur.cols, wsDqPart_[(j % 2) * p_->heads * p_->qkDim]);  // dS.K
            ReleaseBuffer(SPARSE_EVT_K + static_cast<int32_t>(j % p_->kBufs));
            if (hasAfter) {
                IssueChunk(j + 2, after);  // into the K copy dQ just released
            }
            KeyGrad(pdsL1, qL1_.Get<T>(), cur.cols, p_->qkDim, dk_, runs, cur.runCount);  // dK += dS^T.Q
            if (!ahead) {
                if (!WalkChunk(j + 1, cur)) {
                    break;
                }
                IssueChunk(j + 1, cur);
                Scores(j + 1, cur);
                continue;
            }
            if (!hasNext) {
                break;
            }
            // The next chunk's walk runs while the vector cores work on chunk j+1.
            cur = next;
            next = after;
            hasNext = hasAfter;
            hasAfter = hasNext && WalkChunk(j + 3, after);
        }
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

    // out (heads x qkDim fp32, the chunk's dQ slot) = dS.K with dS (heads x cols, Nz) and K
    // (cols x qkDim, Nz of blockKv rows) in L1, queryGradChunk columns per pass, each into the
    // next L0C tile; then FLAG_SPARSE_DQ: the vector cores add the partial into dQ (an atomic
    // Fixpipe here would write twice the bytes through the busiest pipe).
    __aicore__ inline void QueryGrad(const AscendC::LocalTensor<T> &dsL1, const AscendC::LocalTensor<T> &kL1,
                                     uint32_t cols, const AscendC::GlobalTensor<float> &out)
    {
        const uint32_t rows = p_->heads;
        const uint32_t width = p_->qkDim;
        const uint32_t chunk = p_->queryGradChunk;
        uint32_t ca = 0;
        const AscendC::LocalTensor<T> l0a = TakeL0A(ca);
        // dS stays in L1 for dK (KeyGrad releases it)
        Tiles::LoadA(l0a, dsL1, L1Shape{p_->headsPad, AlignUp(cols, 16)}, 0, cols);
        for (uint32_t dc = 0; dc < width; dc += chunk) {
            const uint32_t dLen = width - dc < chunk ? width - dc : chunk;
            uint32_t cb = 0;
            const AscendC::LocalTensor<T> l0b = TakeL0B(cb);
            Tiles::LoadB(l0b, kL1, L1Shape{p_->blockKv, AlignUp(width, 16)}, cols, dc, dLen);
            PipeSync<AscendC::HardEvent::MTE1_M>();
            uint32_t tile = 0;
            const AscendC::LocalTensor<float> l0c = TakeTile(tile);
            TileFree(tile);
            AscendC::Mmad(l0c, l0a, l0b,
                          AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(dLen), static_cast<uint16_t>(cols),
                                              0, false, true));
            ReleaseL0(SPARSE_EVT_L0B + static_cast<int32_t>(cb));
            PipeSync<AscendC::HardEvent::M_FIX>();
            AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(dLen), static_cast<uint16_t>(rows),
                                           static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), width, false);
            AscendC::Fixpipe(out[dc], l0c, fix);
            TileWritten(tile);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_SPARSE_DQ);
        ReleaseL0(SPARSE_EVT_L0A + static_cast<int32_t>(ca));
    }

    const SparseBackwardParams *p_ = nullptr;
    KvGather gather_;
    GatherRun runs_[SPARSE_RUN_LISTS][GATHER_MAX_RUNS];
    bool bufPending_[SPARSE_EVT_PDS + 1] = {false, false, false, false, false};
    bool l0Pending_[SPARSE_EVT_L0B + 2] = {false, false, false, false, false};
    uint32_t l0aIdx_ = 0;
    uint32_t l0bIdx_ = 0;
    bool tilePending_[SPARSE_MAX_TILES] = {false, false, false};
    uint32_t tileIdx_ = 0;
    uint32_t core_ = 0;
    AscendC::GlobalTensor<T> q_, dy_, qr_;
    AscendC::GlobalTensor<float> dk_, dv_, wsS_, wsDp_, wsDqPart_;
    AscendC::GlobalTensor<T> wsP_, wsDs_, wsGather_;
    AscendC::TBuf<AscendC::TPosition::A1> qL1_, dyL1_, pdsL1_;
    AscendC::TBuf<AscendC::TPosition::B1> kL1_, vL1_;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
};

}  // namespace AttentionCore
