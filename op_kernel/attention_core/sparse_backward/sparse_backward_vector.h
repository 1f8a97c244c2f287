// Vector side (AIV) of the sparse backward core, in three passes separated by SyncAll:
//   1. zero the fp32 dK/dV accumulators (the cube writes each token's dQ rows, plainly
//      first); with sortSelection, sort each token's selection (SortSelections) so the walks
//      of pass 2 meet consecutive KV rows as runs;
//   2. per query token of the core: D = rowsum(dO o O) and 1 / softmax_sum of its heads; per
//      chunk n of gathered keys (sparse_backward_cube.h), on its half of the heads:
//      P = exp(scale.S - max) / sum, dS = P o (dP - D), both 0 in the columns past the chunk,
//      cast and handed to the cube; and the gather: this core's half of the rows of chunk
//      n+2 (K + rope, V: one DMA per span of nearby runs and tensor, GatherRows) copied into
//      the chunk's K and V slots (FLAG_SPARSE_KV), so the cube loads each chunk with one DMA
//      per tensor. A token that selects nothing gets its dQ rows zeroed here (the cube
//      skips it);
//   3. cast the accumulators into dq/dk/dv (+ rope parts), dq and dk times the scale.
// Heads with softmax_sum = 0 (nothing selected in the forward pass) get P = 0.
#pragma once
#include "kernel_operator.h"
#include "kv_gather.h"
#include "sparse_backward_cube.h"
#include "sparse_backward_layout.h"
#include "../common/sync.h"
#include "../common/row_ops.h"
#include "../common/nz_handoff.h"

namespace AttentionCore {

constexpr float SPARSE_MASKED = -1e30f;         // finite "minus infinity": exp gives 0, never NaN
constexpr int32_t SORT_INDEX_CAP = 0x7E000000;  // sortSelection needs t2 below it (tiling)
// Unselected bytes a gather span may read between two runs: at the L2 rate about a third of a
// DMA's fixed start, at the HBM rate about one (docs/performance.md, cost table).
constexpr uint32_t GATHER_GAP_BYTES = 8192;

template <typename T> class SparseBackwardVector {
public:
    __aicore__ inline void Init(const SparseBackwardParams *p, AscendC::TPipe *pipe, GM_ADDR query, GM_ADDR key,
                                GM_ADDR value, GM_ADDR queryRope, GM_ADDR keyRope, GM_ADDR indices, GM_ADDR dy,
                                GM_ADDR out, GM_ADDR softmaxMax, GM_ADDR softmaxSum, GM_ADDR seqQ, GM_ADDR seqKv,
                                GM_ADDR dq, GM_ADDR dk, GM_ADDR dv, GM_ADDR dqRope, GM_ADDR dkRope, GM_ADDR workspace)
    {
        p_ = p;
        // With sortSelection all sides walk the sorted lists (this vector core its own table);
        // the original ones are read once.
        gather_.InitSelection(p, indices, workspace, seqQ, seqKv, AscendC::GetSubBlockIdx());
        raw_.Init(p, indices, p->index64 != 0, seqQ, seqKv);
        sorted_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(workspace + p->wsSorted));
        k_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(key));
        v_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(value));
        if (p->ropeDim != 0) {
            kr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(keyRope));
        }
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        if (p->ropeDim != 0) {
            qr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(queryRope));
        }
        dy_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dy));
        o_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(out));
        max_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(softmaxMax));
        sum_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(softmaxSum));
        dq_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dq));
        dk_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dk));
        dv_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dv));
        if (p->ropeDim != 0) {
            dqr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dqRope));
            dkr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dkRope));
        }
        accDq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDq));
        accDk_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDk));
        accDv_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDv));
        vecId_ = AscendC::GetBlockIdx();
        core_ = vecId_ / 2;  // MIX 1:2: vector cores 2c and 2c+1 serve cube c
        sub_ = AscendC::GetSubBlockIdx();
        GM_ADDR slots = workspace + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + p->wsSlotF32));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32));
        wsV_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsV));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsDsRing));
        wsK_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + p->wsKRing));

        const uint32_t first = (p->heads + 1) / 2;
        rowOff_ = sub_ == 0 ? 0 : first;
        mine_ = sub_ == 0 ? first : p->heads - first;
        // UB (sparse_backward_layout.h, the planner's check). The gather staging also holds
        // the selection sort of pass 1: the sorted (score, index) list and Sort's tmp in the
        // K staging, the keys in the V staging; INT64 index rows are narrowed in place.
        const SparseVectorUb ub = SparseBackwardVectorUbLayout(
            p->rowsPerVec, p->blockKv, p->qkDim, p->headDim, sizeof(T), p->sortSelection != 0, p->sortPad,
            SparseIndexRowBytes(p->index64 != 0, p->pairTokens != 0, p->topK, p->sortPad), p->gatherSpanBytes);
        pipe->InitBuffer(sBuf_, ub.s);
        pipe->InitBuffer(dpBuf_, ub.dp);
        pipe->InitBuffer(pOutBuf_, ub.pOut);
        pipe->InitBuffer(dsOutBuf_, ub.dsOut);
        pipe->InitBuffer(aBuf_, ub.a);
        pipe->InitBuffer(bBuf_, ub.b);
        pipe->InitBuffer(aTBuf_, ub.aT);
        pipe->InitBuffer(bTBuf_, ub.bT);
        const uint32_t statRows = AlignUp(p->rowsPerVec, 8);
        pipe->InitBuffer(rawBuf_, ub.raw);
        gatherRows_ = (p->blockKv + 1) / 2;
        pipe->InitBuffer(kStageBuf_, ub.kStage);
        pipe->InitBuffer(vStageBuf_, ub.vStage);
        kStageBytes_ = ub.kStage;
        vStageBytes_ = ub.vStage;
        pipe->InitBuffer(idxBuf_, ub.idx);
        if (ub.span != 0) {
            pipe->InitBuffer(spanBuf_, ub.span);
        }
        gather_.UseLocalIndices(idxBuf_.Get<int32_t>());
        raw_.UseLocalIndices(idxBuf_.Get<int32_t>());
        pipe->InitBuffer(statBuf_, ub.stats);
        s_ = sBuf_.Get<float>();
        dp_ = dpBuf_.Get<float>();
        const AscendC::LocalTensor<float> raw = rawBuf_.Get<float>();
        rawMax_ = raw;
        rawRecip_ = raw[statRows];
        rawD_ = raw[statRows * 2];
        const AscendC::LocalTensor<float> stats = statBuf_.Get<float>();
        rowMax_ = stats;
        rowRecip_ = stats[statRows * 8];
        rowD_ = stats[statRows * 16];
    }

    __aicore__ inline void Process()
    {
        // The zeros come from the span staging when it is not much smaller than the K staging:
        // then the selection sort (K and V stagings) runs while the zeroing DMAs go out.
        const bool spanZeros = p_->gatherSpanBytes * 2 >= kStageBytes_;
        const AscendC::LocalTensor<float> zero = spanZeros ? spanBuf_.Get<float>() : kStageBuf_.Get<float>();
        const uint32_t zeroElems = (spanZeros ? p_->gatherSpanBytes : kStageBytes_) / 4;
        uint64_t lo, hi;
        Share(p_->t2 * p_->qkDim, lo, hi);
        Zero(accDk_, lo, hi, zero, zeroElems);  // fills the zeros once: the later copies reuse them
        Share(p_->t2 * p_->headDim, lo, hi);
        Zero(accDv_, lo, hi, zero, zeroElems, false);
        // A token cut here: its parts add into rows zeroed once, by the first core that starts
        // inside it (two cores zeroing the same rows at once would be a GM write race).
        const bool cutHere = p_->coreChunkStart[core_] != 0;
        const bool cutBefore = core_ > 0 && p_->coreChunkStart[core_ - 1] != 0 &&
                               p_->coreTokenStart[core_ - 1] == p_->coreTokenStart[core_];
        if (cutHere && !cutBefore) {
            ZeroQueryRows(p_->coreTokenStart[core_], zero, zeroElems, false);
        }
        if (!spanZeros) {
            PipeSync<AscendC::HardEvent::MTE3_V>();  // the sort reuses the staging
        }
        if (p_->sortSelection != 0) {
            SortFirstSelections();
        }
        PipeSync<AscendC::HardEvent::MTE3_V>();
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();
        AscendC::SyncAll<false>();
        // Tokens are a continuous stream: the next token's first two chunks are gathered and its
        // row statistics computed while the cube still finishes the last chunk of this one.
        const uint64_t end = SparseTokenEnd(p_, core_);
        uint32_t cols[3];
        uint64_t t = p_->coreTokenStart[core_];
        bool open = false;
        for (; t < end && !open; ++t) {
            open = Open(t, cols);
        }
        while (open) {
            const uint64_t mineT = t - 1;
            Chunks(mineT, cols);
            open = false;
            for (; t < end && !open; ++t) {
                open = Open(t, cols);
            }
            // A token this core holds whole has its dQ once the cube's last pass is out
            // (FLAG_SPARSE_DQ, set before the next token's first S/dP): cast while the cube
            // loads that token.
            uint32_t first = 0;
            uint32_t last = 0;
            SparseChunkRange(p_, core_, mineT, first, last);
            if (first == 0 && last == SPARSE_ALL_CHUNKS) {
                AscendC::CrossCoreWaitFlag(FLAG_SPARSE_DQ);
                CastQueryRows(mineT);
            }
        }
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();
        AscendC::SyncAll<false>();
        CastOut();
    }

private:
    // Opens this core's part of query token t (SparseChunkRange): its first two chunks
    // gathered (chunk widths in cols[0..1]) and its row statistics; false when it has no chunk
    // (the cube skips it too: the dQ rows of a whole token are zeroed here).
    __aicore__ inline bool Open(uint64_t t, uint32_t *cols)
    {
        SortAhead(t + 1);
        uint32_t first = 0;
        uint32_t last = 0;
        SparseChunkRange(p_, core_, t, first, last);
        gather_.SetToken(t);
        gather_.LimitChunks(first, last, runs_);
        uint32_t runCount = 0;
        cols[0] = gather_.NextChunk(runs_, runCount);
        if (cols[0] == 0) {
            if (first == 0 && last == SPARSE_ALL_CHUNKS) {
                ZeroQueryRows(t);
                PipeSync<AscendC::HardEvent::MTE3_MTE2>();
                CastQueryRows(t);
            }
            return false;
        }
        Gather(seq_, cols[0], runCount);
        cols[1] = gather_.NextChunk(runs_, runCount);
        if (cols[1] != 0) {
            Gather(seq_ + 1, cols[1], runCount);
        }
        if (mine_ != 0) {
            TokenStats(t);
        }
        return true;
    }

    // Q (+ rope) rows of token t's heads this core owns read into the span staging and
    // dropped, a token ahead: no one else reads them before the cube, whose Nd2Nz load at the
    // token's start then finds them in L2, not in HBM (the cube loads the core's first token
    // before the first SyncAll). The staging is free: every gather copies out of it before
    // its next read (V -> MTE2).
    __aicore__ inline void PrefetchQuery(uint64_t t)
    {
        const uint64_t row0 = t * p_->heads + rowOff_;
        PipeSync<AscendC::HardEvent::V_MTE2>();
        PrefetchRows(q_, row0 * p_->headDim, mine_ * p_->headDim);
        if (p_->ropeDim != 0) {
            PrefetchRows(qr_, row0 * p_->ropeDim, mine_ * p_->ropeDim);
        }
    }

    // Elements [x, x + n) of `src` into the span staging, as many as it holds per copy.
    __aicore__ inline void PrefetchRows(const AscendC::GlobalTensor<T> &src, uint64_t x, uint64_t n)
    {
        const uint64_t piece = p_->gatherSpanBytes / 32 * 32 / sizeof(T);
        for (uint64_t e = x; e < x + n; e += piece) {
            const uint64_t len = x + n - e < piece ? x + n - e : piece;
            AscendC::DataCopy(spanBuf_.Get<T>(), src[e], static_cast<uint32_t>(len));
        }
    }

    // The chunks of the open token t: after handing back P/dS of chunk n, this core gathers its
    // half of chunk n+2 (the cube has loaded chunk n's K/V: it computed S/dP from them). After
    // the first chunk's, the next token's Q rows are read ahead (PrefetchQuery).
    __aicore__ inline void Chunks(uint64_t t, uint32_t *cols)
    {
        uint32_t runCount = 0;
        uint32_t j = 0;
        for (; cols[j % 3] != 0; ++j) {
            Chunk(seq_ + j, cols[j % 3]);
            uint32_t &ahead = cols[(j + 2) % 3];
            ahead = cols[(j + 1) % 3] != 0 ? gather_.NextChunk(runs_, runCount) : 0;
            if (ahead != 0) {
                Gather(seq_ + j + 2, ahead, runCount);
            }
            if (j == 0 && mine_ != 0 && t + 1 < SparseTokenEnd(p_, core_)) {
                PrefetchQuery(t + 1);
            }
        }
        seq_ += j;
    }

    // This core's half of the rows of chunk n (cols rows, runs_) -> its K slot (ring; rows of
    // K + rope at pitch qkDim) and V slot, then FLAG_SPARSE_KV to the cube. The ring slot is
    // free: the cube's dQ pass read it before this core could get here (docs/attention_core.md,
    // "dQ by segments").
    __aicore__ inline void Gather(uint64_t n, uint32_t cols, uint32_t runCount)
    {
        const uint32_t d = p_->headDim;
        const uint32_t dr = p_->ropeDim;
        const uint32_t w = p_->qkDim;
        const uint32_t half = (cols + 1) / 2;
        const uint32_t lo = sub_ == 0 ? 0 : half;
        const uint32_t hi = sub_ == 0 ? half : cols;
        notMine_[n % 3] = p_->pairTokens != 0 ? gather_.NotSelected(sub_) : 0;  // the walk just done: chunk n's
        if (lo < hi) {
            const AscendC::LocalTensor<T> kStage = kStageBuf_.Get<T>();
            const AscendC::LocalTensor<T> vStage = vStageBuf_.Get<T>();
            PipeSync<AscendC::HardEvent::MTE3_V>();  // the previous slot write left the staging
            GatherRows(k_, d, kStage, 0, lo, hi, runCount);
            if (dr != 0) {
                GatherRows(kr_, dr, kStage, d, lo, hi, runCount);
            }
            GatherRows(v_, d, vStage, 0, lo, hi, runCount);
            PipeSync<AscendC::HardEvent::V_MTE3>();
            NzHandoff<T>::Store(wsK_[SparseSlot<T>::K(p_, n)], kStage, lo, hi - lo, w, p_->blockKv);
            NzHandoff<T>::Store(wsV_[SparseSlot<T>::V(p_, n)], vStage, lo, hi - lo, d, p_->blockKv);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_SPARSE_KV);
    }

    // Run r of the chunk clipped to the chunk rows [lo, hi): its first KV row, its row count
    // and its first row in the staging; false when nothing of it lies there.
    __aicore__ inline bool Clip(uint32_t r, uint32_t lo, uint32_t hi, GatherRun &x) const
    {
        const GatherRun &run = runs_[r];
        const uint32_t a = run.pos > lo ? run.pos : lo;
        const uint32_t b = run.pos + run.len < hi ? run.pos + run.len : hi;
        if (a >= b) {
            return false;
        }
        x.kvRow = run.kvRow + (a - run.pos);
        x.len = b - a;
        x.pos = a - lo;
        return true;
    }

    // The chunk rows [lo, hi) of `src` (KV rows of `width` elements) into `stage` in the cube's
    // Nz order (hi - lo rows per column block of 16) from column `col` on. Every run is read
    // into the span staging (a run longer than it in pieces) and copied to its place by the
    // vector unit; a DMA costs a fixed start besides its bytes, so runs lying close together
    // in `src` (ascending, at most GATHER_GAP_BYTES of unselected rows between them, the whole
    // span within gatherSpanBytes) share one read.
    __aicore__ inline void GatherRows(const AscendC::GlobalTensor<T> &src, uint32_t width,
                                      const AscendC::LocalTensor<T> &stage, uint32_t col, uint32_t lo, uint32_t hi,
                                      uint32_t runCount)
    {
        const uint32_t rowBytes = width * sizeof(T);
        const uint64_t cap = p_->gatherSpanBytes / rowBytes;  // >= 1 (the planner's check)
        const uint64_t maxGap = GATHER_GAP_BYTES / rowBytes;
        const uint32_t nzRows = hi - lo;
        GatherRun x, y;
        uint32_t r = 0;
        uint32_t done = 0;  // rows of run r already read (a run longer than the span)
        while (r < runCount) {
            if (!Clip(r, lo, hi, x)) {
                ++r;
                done = 0;
                continue;
            }
            x.kvRow += done;
            x.pos += done;
            x.len -= done;
            if (x.len > cap) {  // the span's worth of the run, then the rest
                x.len = static_cast<uint32_t>(cap);
                ReadSpan(src, width, x.kvRow, x.kvRow + x.len);
                PlaceRows(stage, col, x.pos, x.len, width, 0, nzRows);
                done += x.len;
                continue;
            }
            uint64_t end = x.kvRow + x.len;
            uint32_t e = r + 1;
            while (e < runCount && Clip(e, lo, hi, y) && y.kvRow >= end && y.kvRow - end <= maxGap &&
                   y.kvRow + y.len - x.kvRow <= cap) {
                end = y.kvRow + y.len;
                ++e;
            }
            ReadSpan(src, width, x.kvRow, end);
            PlaceRows(stage, col, x.pos, x.len, width, 0, nzRows);
            for (uint32_t q = r + 1; q < e; ++q) {
                Clip(q, lo, hi, y);
                PlaceRows(stage, col, y.pos, y.len, width, static_cast<uint32_t>(y.kvRow - x.kvRow), nzRows);
            }
            r = e;
            done = 0;
        }
    }

    // KV rows [first, end) of `src` -> the span staging, once its previous rows were copied out.
    __aicore__ inline void ReadSpan(const AscendC::GlobalTensor<T> &src, uint32_t width, uint64_t first, uint64_t end)
    {
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopy(spanBuf_.Get<T>(), src[first * width], static_cast<uint32_t>(end - first) * width);
        PipeSync<AscendC::HardEvent::MTE2_V>();
    }

    // n rows of the span staging from its row `from` -> rows [pos, pos + n) of the Nz stage
    // (nzRows rows per column block) from column `col` on: a row's 16-column blocks nzRows
    // blocks apart, one Copy per 128 columns, one repeat per row.
    __aicore__ inline void PlaceRows(const AscendC::LocalTensor<T> &stage, uint32_t col, uint32_t pos, uint32_t n,
                                     uint32_t width, uint32_t from, uint32_t nzRows)
    {
        constexpr uint32_t lanes = 128;
        const AscendC::LocalTensor<uint16_t> d16 = stage.template ReinterpretCast<uint16_t>();
        const AscendC::LocalTensor<uint16_t> s16 = spanBuf_.Get<T>()[from * width].template ReinterpretCast<uint16_t>();
        const uint16_t srcRep = static_cast<uint16_t>(width * sizeof(T) / 32);
        for (uint32_t c0 = 0; c0 < width; c0 += lanes) {
            const uint32_t m = width - c0 < lanes ? width - c0 : lanes;
            AscendC::Copy(d16[(col + c0) * nzRows + pos * 16], s16[c0], m, static_cast<uint8_t>(n),
                          AscendC::CopyRepeatParams(static_cast<uint16_t>(nzRows), 1, 1, srcRep));
        }
    }

    // This vector core's share [lo, hi) of `total` items.
    __aicore__ inline void Share(uint64_t total, uint64_t &lo, uint64_t &hi) const
    {
        const uint64_t parts = static_cast<uint64_t>(p_->usedCores) * 2;
        lo = total * vecId_ / parts;
        hi = total * (vecId_ + 1) / parts;
    }

    // The selection sorts and the pair merge (sparse_vector_sort.h).
    __aicore__ inline void SortFirstSelections();
    __aicore__ inline void SortAhead(uint64_t upto);
    __aicore__ inline void SortSelection(uint64_t t, bool both);
    __aicore__ inline uint32_t MergeHalves(const AscendC::LocalTensor<int32_t> &a, uint32_t countA,
                                           const AscendC::LocalTensor<int32_t> &b, uint32_t countB,
                                           const AscendC::LocalTensor<int32_t> &dst);
    __aicore__ inline uint32_t SortList(uint64_t t, uint32_t h, const AscendC::LocalTensor<uint32_t> &dst);
    __aicore__ inline uint32_t ValidEntries(const AscendC::LocalTensor<int32_t> &idx, uint32_t count,
                                            const AscendC::LocalTensor<int32_t> &scratch);

    // acc[lo, hi) := 0 from `zero` (elems floats: a DMA costs a fixed start, so few large
    // ones), which is filled first (unless `fill` is false: it holds zeros already), once the
    // copies out of it before have left.
    __aicore__ inline void Zero(const AscendC::GlobalTensor<float> &acc, uint64_t lo, uint64_t hi,
                                const AscendC::LocalTensor<float> &zero, uint32_t elems, bool fill = true)
    {
        const uint32_t chunk = elems / 8 * 8;
        if (fill) {
            PipeSync<AscendC::HardEvent::MTE3_V>();
            AscendC::Duplicate(zero, 0.0f, static_cast<int32_t>(chunk));
            PipeSync<AscendC::HardEvent::V_MTE3>();
        }
        for (uint64_t x = lo; x < hi; x += chunk) {
            const uint32_t n = hi - x < chunk ? static_cast<uint32_t>(hi - x) : chunk;
            AscendC::DataCopyPad(acc[x], zero, AscendC::DataCopyExtParams(1, n * 4, 0, 0, 0));
        }
    }

    // The fp32 dQ rows of token t's heads this core owns := 0.
    __aicore__ inline void ZeroQueryRows(uint64_t t, const AscendC::LocalTensor<float> &zero, uint32_t elems,
                                         bool fill = true)
    {
        if (mine_ != 0) {
            const uint64_t row0 = (t * p_->heads + rowOff_) * p_->qkDim;
            Zero(accDq_, row0, row0 + mine_ * p_->qkDim, zero, elems, fill);
        }
    }

    // The same from the K staging in the main loop (a gather's slot store has left it; the
    // next gather waits for these copies).
    __aicore__ inline void ZeroQueryRows(uint64_t t)
    {
        ZeroQueryRows(t, kStageBuf_.Get<float>(), kStageBytes_ / 4);
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // Per-head terms of token t for this core's heads, each replicated 8 times (one 32-byte
    // block per head) so a row-wise broadcast reads it as is: the max, 1 / sum (0 for an
    // empty row) and D = rowsum(dO o O).
    __aicore__ inline void TokenStats(uint64_t t)
    {
        const uint64_t row0 = t * p_->heads + rowOff_;
        const AscendC::DataCopyPadExtParams<float> noPad(false, 0, 0, 0);
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopyPad(rawMax_, max_[row0], AscendC::DataCopyExtParams(1, mine_ * 4, 0, 0, 0), noPad);
        AscendC::DataCopyPad(rawRecip_, sum_[row0], AscendC::DataCopyExtParams(1, mine_ * 4, 0, 0, 0), noPad);
        PipeSync<AscendC::HardEvent::MTE2_S>();
        for (uint32_t r = 0; r < mine_; ++r) {
            const float l = rawRecip_.GetValue(r);
            rawRecip_.SetValue(r, l > 0.0f ? 1.0f / l : 0.0f);
        }
        PipeSync<AscendC::HardEvent::S_V>();
        RowTerms(row0);
        const uint8_t reps = static_cast<uint8_t>((mine_ + 7) / 8);
        AscendC::Brcb(rowMax_, rawMax_, reps, AscendC::BrcbRepeatParams(1, 8));
        AscendC::Brcb(rowRecip_, rawRecip_, reps, AscendC::BrcbRepeatParams(1, 8));
        AscendC::Brcb(rowD_, rawD_, reps, AscendC::BrcbRepeatParams(1, 8));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // rawD_[r] = sum_d dO[row0 + r, d] * O[row0 + r, d], SPARSE_ROW_CHUNK heads at a time in
    // fp32. dO and O come in through the span staging, as many heads per copy as its halves
    // hold (a copy costs a fixed start: the core's first token waits for this pass), or
    // SPARSE_ROW_CHUNK at a time through the 16-bit row buffers where the span is smaller.
    __aicore__ inline void RowTerms(uint64_t row0)
    {
        const uint32_t d = p_->headDim;
        const AscendC::LocalTensor<float> a = aBuf_.Get<float>();
        const AscendC::LocalTensor<float> b = bBuf_.Get<float>();
        const uint32_t fit = p_->gatherSpanBytes / (2 * d * sizeof(T));
        const bool wide = fit > SPARSE_ROW_CHUNK;
        const uint32_t perCopy = wide ? fit : SPARSE_ROW_CHUNK;
        const AscendC::LocalTensor<T> dyRows = wide ? spanBuf_.Get<T>() : aTBuf_.Get<T>();
        const AscendC::LocalTensor<T> oRows = wide ? spanBuf_.Get<T>()[perCopy * d] : bTBuf_.Get<T>();
        const uint8_t pitch = static_cast<uint8_t>(d / 8);
        for (uint32_t r0 = 0; r0 < mine_; r0 += perCopy) {
            const uint32_t loaded = mine_ - r0 < perCopy ? mine_ - r0 : perCopy;
            PipeSync<AscendC::HardEvent::V_MTE2>();
            AscendC::DataCopy(dyRows, dy_[(row0 + r0) * d], loaded * d);
            AscendC::DataCopy(oRows, o_[(row0 + r0) * d], loaded * d);
            PipeSync<AscendC::HardEvent::MTE2_V>();
            for (uint32_t c0 = 0; c0 < loaded; c0 += SPARSE_ROW_CHUNK) {
                const uint32_t rows = loaded - c0 < SPARSE_ROW_CHUNK ? loaded - c0 : SPARSE_ROW_CHUNK;
                const int32_t count = static_cast<int32_t>(rows * d);
                AscendC::Cast(a, dyRows[c0 * d], AscendC::RoundMode::CAST_NONE, count);
                AscendC::Cast(b, oRows[c0 * d], AscendC::RoundMode::CAST_NONE, count);
                AscendC::PipeBarrier<PIPE_V>();
                AscendC::Mul(a, a, b, count);
                AscendC::PipeBarrier<PIPE_V>();
                for (uint32_t x = 64; x < d; x += 64) {  // fold each row onto its first 64 lanes
                    AscendC::Add(a, a, a[x], static_cast<uint64_t>(64), static_cast<uint8_t>(rows),
                                 AscendC::BinaryRepeatParams(1, 1, 1, pitch, pitch, pitch));
                    AscendC::PipeBarrier<PIPE_V>();
                }
                AscendC::WholeReduceSum(rawD_[r0 + c0], a, 64, static_cast<int32_t>(rows), 1, 1, pitch);
                AscendC::PipeBarrier<PIPE_V>();
            }
        }
    }

    // x[r][:] op= stat[r] (8 replicated floats per row) over this core's rows and the blockKv columns.
    template <RowOp op>
    __aicore__ inline void RowOpTile(const AscendC::LocalTensor<float> &x, const AscendC::LocalTensor<float> &stat)
    {
        RowBroadcast<op>(x, stat, mine_, p_->blockKv, p_->blockKv);
    }

    // Columns [cols, blockKv) of every row of x (stale slot data past the chunk) := value.
    __aicore__ inline void MaskTail(const AscendC::LocalTensor<float> &x, uint32_t cols, float value)
    {
        const uint32_t c = p_->blockKv;
        for (uint32_t c0 = cols / 64 * 64; c0 < c; c0 += 64) {
            const uint32_t from = cols > c0 ? cols - c0 : 0;  // first masked lane of this group
            uint64_t mask[2] = {from >= 64 ? 0 : (~0ULL << from), 0};
            if (mask[0] != 0) {
                AscendC::Duplicate(x[c0], value, mask, static_cast<uint8_t>(mine_), 1, static_cast<uint8_t>(c / 8));
            }
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // pairTokens: the chunk's columns this core's token did not select (bits of NotSelected,
    // blockKv <= 64) := value in every row.
    __aicore__ inline void MaskColumns(const AscendC::LocalTensor<float> &x, uint64_t bits, float value)
    {
        uint64_t mask[2] = {bits, 0};
        AscendC::Duplicate(x, value, mask, static_cast<uint8_t>(mine_), 1, static_cast<uint8_t>(p_->blockKv / 8));
        AscendC::PipeBarrier<PIPE_V>();
    }

    __aicore__ inline void Chunk(uint64_t n, uint32_t cols)
    {
        AscendC::CrossCoreWaitFlag(FLAG_SPARSE_SDP);
        if (mine_ != 0) {
            const uint32_t c = p_->blockKv;
            const int32_t count = static_cast<int32_t>(mine_ * c);
            PipeSync<AscendC::HardEvent::V_MTE2>();
            AscendC::DataCopy(s_, wsS_[rowOff_ * c], mine_ * c);
            AscendC::DataCopy(dp_, wsDp_[rowOff_ * c], mine_ * c);
            PipeSync<AscendC::HardEvent::MTE2_V>();
            PipeSync<AscendC::HardEvent::MTE3_V>();  // the previous P/dS stores left the UB

            // P = exp(scale.S - max) / sum, 0 past the chunk's columns.
            AscendC::Muls(s_, s_, p_->scaleValue, count);
            AscendC::PipeBarrier<PIPE_V>();
            RowOpTile<RowOp::Sub>(s_, rowMax_);
            if (cols < c) {
                MaskTail(s_, cols, SPARSE_MASKED);
            }
            if (notMine_[n % 3] != 0) {  // P = 0 there, so dS = 0 too
                MaskColumns(s_, notMine_[n % 3], SPARSE_MASKED);
            }
            AscendC::Exp(s_, s_, count);
            AscendC::PipeBarrier<PIPE_V>();
            RowOpTile<RowOp::Mul>(s_, rowRecip_);

            // dS = P o (dP - D); the scale of dQ and dK is applied in fp32 by the cast-out.
            RowOpTile<RowOp::Sub>(dp_, rowD_);
            if (cols < c) {
                MaskTail(dp_, cols, 0.0f);
            }
            AscendC::Mul(dp_, dp_, s_, count);
            AscendC::PipeBarrier<PIPE_V>();

            const AscendC::LocalTensor<T> pOut = pOutBuf_.Get<T>();
            const AscendC::LocalTensor<T> dsOut = dsOutBuf_.Get<T>();
            // P and dS in the cube's Nz order (nz_handoff.h): the cube stages them with plain copies.
            NzHandoff<T>::CastArranged(pOut, s_, mine_, c);
            NzHandoff<T>::CastArranged(dsOut, dp_, mine_, c);
            PipeSync<AscendC::HardEvent::V_MTE3>();
            NzHandoff<T>::Store(wsP_[SparseSlot<T>::P(p_, n)], pOut, rowOff_, mine_, c, p_->headsPad);
            NzHandoff<T>::Store(wsDs_[SparseSlot<T>::Ds(p_, n)], dsOut, rowOff_, mine_, c, p_->headsPad);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_SPARSE_GRAD);
    }

    // Rows [lo, hi) of `width` fp32 accumulators -> `dst` (first headDim columns) and
    // `dstRope` (the rest), in the input dtype, times `scale`; as many rows at a time as the
    // gather stagings hold (fp32 in the K staging, the cast in the V staging: a DMA costs a
    // fixed start, so few large ones).
    __aicore__ inline void CastRows(const AscendC::GlobalTensor<float> &acc, uint64_t lo, uint64_t hi, uint32_t width,
                                    float scale, const AscendC::GlobalTensor<T> &dst,
                                    const AscendC::GlobalTensor<T> &dstRope)
    {
        const uint32_t d = p_->headDim;
        const uint32_t dr = width - d;
        const AscendC::LocalTensor<float> a = kStageBuf_.Get<float>();
        const AscendC::LocalTensor<T> aT = vStageBuf_.Get<T>();
        const uint32_t fit32 = kStageBytes_ / (width * 4);
        const uint32_t fitT = vStageBytes_ / (width * sizeof(T));
        const uint32_t step = fit32 < fitT ? fit32 : fitT;
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // in the main loop: a gather's slot stores left the K staging
        for (uint64_t r0 = lo; r0 < hi; r0 += step) {
            const uint32_t rows = hi - r0 < step ? static_cast<uint32_t>(hi - r0) : step;
            const int32_t count = static_cast<int32_t>(rows * width);
            PipeSync<AscendC::HardEvent::V_MTE2>();
            AscendC::DataCopy(a, acc[r0 * width], rows * width);
            PipeSync<AscendC::HardEvent::MTE2_V>();
            PipeSync<AscendC::HardEvent::MTE3_V>();
            if (scale != 1.0f) {
                AscendC::Muls(a, a, scale, count);
                AscendC::PipeBarrier<PIPE_V>();
            }
            AscendC::Cast(aT, a, AscendC::RoundMode::CAST_RINT, count);
            PipeSync<AscendC::HardEvent::V_MTE3>();
            const uint32_t gap = dr * sizeof(T);  // skip the rope part of each UB row
            AscendC::DataCopyPad(
                dst[r0 * d], aT,
                AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), d * sizeof(T), gap / 32, 0, 0));
            if (dr != 0) {
                AscendC::DataCopyPad(
                    dstRope[r0 * dr], aT[d],
                    AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dr * sizeof(T), d * sizeof(T) / 32, 0, 0));
            }
        }
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // dq / dq_rope of token t's heads this core owns, from their fp32 accumulator rows.
    __aicore__ inline void CastQueryRows(uint64_t t)
    {
        const uint64_t row0 = t * p_->heads + rowOff_;
        CastRows(accDq_, row0, row0 + mine_, p_->qkDim, p_->scaleValue, dq_, dqr_);
    }

    // After the last SyncAll: dK and dV (this core's share of the rows), and the dQ of a token
    // cut between cores, by the core holding its last part (the others cast theirs in the
    // main loop).
    __aicore__ inline void CastOut()
    {
        const uint64_t cut = p_->coreTokenStart[core_];
        if (p_->coreChunkStart[core_] != 0 &&
            !(p_->coreTokenStart[core_ + 1] == cut && p_->coreChunkStart[core_ + 1] != 0)) {
            CastQueryRows(cut);
        }
        uint64_t lo, hi;
        Share(p_->t2, lo, hi);
        CastRows(accDk_, lo, hi, p_->qkDim, p_->scaleValue, dk_, dkr_);
        CastRows(accDv_, lo, hi, p_->headDim, 1.0f, dv_, dv_);
    }

    const SparseBackwardParams *p_ = nullptr;
    KvGather gather_;
    KvGather raw_;                     // the original selection, read by SortSelection
    uint64_t sortedUpTo_ = 0;          // every token up to it this core needs is sorted
    uint64_t notMine_[3] = {0, 0, 0};  // pairTokens: NotSelected of chunks n % 3 (in flight: n .. n + 2)
    AscendC::GlobalTensor<int32_t> sorted_;
    GatherRun runs_[GATHER_MAX_RUNS];
    uint64_t seq_ = 0;  // the core's next chunk number (the cube counts alike)
    uint32_t vecId_ = 0, core_ = 0, sub_ = 0, rowOff_ = 0, mine_ = 0, gatherRows_ = 0;
    uint32_t kStageBytes_ = 0, vStageBytes_ = 0;
    AscendC::GlobalTensor<T> q_, qr_, k_, v_, kr_, dy_, o_, dq_, dk_, dv_, dqr_, dkr_, wsP_, wsDs_, wsV_, wsK_;
    AscendC::GlobalTensor<float> max_, sum_, accDq_, accDk_, accDv_, wsS_, wsDp_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> sBuf_, dpBuf_, pOutBuf_, dsOutBuf_, aBuf_, bBuf_, aTBuf_, bTBuf_,
        rawBuf_, statBuf_, kStageBuf_, vStageBuf_, idxBuf_, spanBuf_;
    AscendC::LocalTensor<float> s_, dp_, rawMax_, rawRecip_, rawD_, rowMax_, rowRecip_, rowD_;
};

}  // namespace AttentionCore

#include "sparse_vector_sort.h"
