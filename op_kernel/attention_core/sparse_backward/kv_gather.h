// KvGather: the KV source of the sparse backward core. For one query token it walks the KV
// rows its sparse_indices select and hands them out in chunks of at most blockKv gathered rows,
// each chunk a list of runs of consecutive KV rows (a run lands at row `pos` of the chunk).
// The cube (to scatter dK/dV) and the vector cores (to gather K/V and know the chunk widths)
// walk the same chunks, so no list is exchanged between them. A vector core copies the token's
// index row into UB first (UseLocalIndices), so its walk reads UB, not GM, per entry.
//
// Selection rule (docs/golden_decode_sparse.md): index i selects KV tokens
// [i * blockSize, (i + 1) * blockSize) of the token's batch; only tokens < threshold count,
//   threshold = actKv                       (sparse mode 0)
//             = actKv - actQ + s + 1        (sparse mode 3, right-down causal; s = row in batch)
// only the first min(K, ceil(threshold / blockSize)) entries are read, the first negative
// entry ends the list, a block starting at or beyond the threshold is skipped, the block
// containing it is clipped, and a repeated index gathers its rows again. Query rows beyond
// actQ (BSND padding) select nothing.
#pragma once
#include "kernel_operator.h"
#include "sparse_backward_params.h"
#include "../common/sync.h"

namespace AttentionCore {

constexpr uint32_t GATHER_MAX_RUNS = 128;  // >= blockKv: one run per gathered row at worst

struct GatherRun {
    uint64_t kvRow;  // first KV token row (flat over the batches)
    uint32_t len;
    uint32_t pos;  // first row of the run inside the chunk
};

class KvGather {
public:
    // The selection the main loop walks: the sorted INT32 lists in the workspace with
    // sortSelection (sparse_backward_params.h; `table` 0 or 1), else sparse_indices as given.
    __aicore__ inline void InitSelection(const SparseBackwardParams *p, GM_ADDR indices, GM_ADDR workspace,
                                         GM_ADDR seqQ, GM_ADDR seqKv, uint32_t table = 0)
    {
        const bool sorted = p->sortSelection != 0;
        Init(p, sorted ? workspace + p->wsSorted + table * p->t1 * p->topK * 4 : indices, !sorted && p->index64 != 0,
             seqQ, seqKv);
        sorted_ = sorted;
        merge_ = sorted && p->pairTokens != 0;
    }

    // `indices`: sparse_indices (index64 = p->index64) or the sorted INT32 lists (index64 0).
    __aicore__ inline void Init(const SparseBackwardParams *p, GM_ADDR indices, bool index64, GM_ADDR seqQ,
                                GM_ADDR seqKv)
    {
        p_ = p;
        index64_ = index64;
        idx32_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(indices));
        idx64_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(indices));
        idxPairs_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(indices));
        indexCount_ = p->t1 * p->topK;
        // Pairs need an 8-byte aligned tensor (a view at an odd INT32 offset is read singly).
        pairs_ = (reinterpret_cast<uint64_t>(indices) & 7) == 0;
        seqQ32_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(seqQ));
        seqQ64_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqQ));
        seqKv32_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(seqKv));
        seqKv64_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqKv));
    }

    // The walk reads sparse_indices from `buf` (UB, topK entries of the index dtype), which
    // SetToken fills with the token's row.
    __aicore__ inline void UseLocalIndices(const AscendC::LocalTensor<int32_t> &buf)
    {
        local_ = true;
        loc32_ = buf;
        loc64_ = buf.ReinterpretCast<int64_t>();
    }

    // Positions the walk at the first selected row of query token t (pairTokens, walking the
    // sorted lists: of pair item t, both halves' first entries).
    __aicore__ inline void SetToken(uint64_t t)
    {
        const int64_t reach = Position(t);
        count_ = reach < static_cast<int64_t>(p_->topK) ? static_cast<uint32_t>(reach) : p_->topK;
        if (merge_) {  // the merged list of a pair item: up to both halves' entries
            const uint32_t half = p_->halfTopK;
            count_ = 2 * (reach < static_cast<int64_t>(half) ? static_cast<uint32_t>(reach) : half);
        }
        if (local_ && count_ != 0) {
            const uint32_t bytes = count_ * (index64_ ? 8u : 4u);
            PipeSync<AscendC::HardEvent::S_MTE2>();  // the previous token's row was read
            if (index64_) {
                AscendC::DataCopyPad(loc64_, idx64_[t * p_->topK], AscendC::DataCopyExtParams(1, bytes, 0, 0, 0),
                                     AscendC::DataCopyPadExtParams<int64_t>(false, 0, 0, 0));
            } else {
                AscendC::DataCopyPad(loc32_, idx32_[t * p_->topK], AscendC::DataCopyExtParams(1, bytes, 0, 0, 0),
                                     AscendC::DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
            }
            PipeSync<AscendC::HardEvent::MTE2_S>();
        }
    }

    // pairTokens, the sort's read of half h of pair item t (the original selection): its
    // first min(halfTopK, reach) entries into the local buffer, Entries() of them.
    __aicore__ inline void SetTokenHalf(uint64_t t, uint32_t h)
    {
        const int64_t reach = Position(t);
        const uint32_t half = p_->halfTopK;
        count_ = reach < static_cast<int64_t>(half) ? static_cast<uint32_t>(reach) : half;
        if (local_ && count_ != 0) {
            PipeSync<AscendC::HardEvent::S_MTE2>();  // the previous row was read
            AscendC::DataCopyPad(loc32_, idx32_[t * p_->topK + h * half],
                                 AscendC::DataCopyExtParams(1, count_ * 4, 0, 0, 0),
                                 AscendC::DataCopyPadExtParams<int32_t>(false, 0, 0, 0));
            PipeSync<AscendC::HardEvent::MTE2_S>();
        }
    }

    // Restricts the token's walk to its chunks [first, end) (SparseChunkRange; `scratch` takes
    // the runs of skipped chunks). In a sorted selection every entry before the clipped and
    // skipped ones (sorted last) is a full block, so with blockKv a multiple of the block size
    // chunk `first` starts at entry first * blockKv / blockSize when the entry before it is a
    // full block (one scalar read); otherwise the chunks before it are walked.
    __aicore__ inline void LimitChunks(uint32_t first, uint32_t end, GatherRun *scratch)
    {
        if (first != 0) {
            const int64_t bs = p_->blockSize;
            const uint64_t e = static_cast<uint64_t>(first) * (p_->blockKv / p_->blockSize);
            bool jumped = false;
            if (sorted_ && p_->blockKv % p_->blockSize == 0) {
                if (e > count_) {
                    entry_ = count_;  // fewer chunks than `first`: nothing left
                    jumped = true;
                } else {
                    const int64_t raw = Index(token_ * p_->topK + e - 1);
                    const int64_t idx = merge_ && raw >= 0 ? raw >> 2 : raw;  // one row per entry
                    if (merge_ && raw < 0) {
                        entry_ = count_;  // only -1s follow a merged list's union: the part is empty
                        jumped = true;
                    } else if (idx >= 0 && idx < reach_ && (idx + 1) * bs <= threshold_) {
                        entry_ = static_cast<uint32_t>(e);
                        jumped = true;
                    }
                }
            }
            uint32_t runCount = 0;
            for (uint32_t i = 0; !jumped && i < first && NextChunk(scratch, runCount) != 0; ++i) {}
        }
        chunksLeft_ = end == SPARSE_ALL_CHUNKS ? SPARSE_ALL_CHUNKS : end - first;
    }

    // Entries of the token's row the walk may read (min(K, ceil(threshold / blockSize))).
    __aicore__ inline uint32_t Entries() const { return count_; }

    // Next chunk of at most blockKv rows: fills runs[0, runCount) and returns the row count
    // (0 when the token's selection is exhausted).
    __aicore__ inline uint32_t NextChunk(GatherRun *runs, uint32_t &runCount)
    {
        BeginChunk();
        StepChunk(runs, WALK_ALL);
        return ChunkRows(runCount);
    }

    // The same walk in steps (the cube spreads it between the issues of a scatter, so its
    // scalar reads of the selection do not hold the pipes' queues back): BeginChunk, then
    // StepChunk until it returns true (each call reads at most `budget` entries), then
    // ChunkRows as NextChunk returns it.
    static constexpr uint32_t WALK_ALL = 0xFFFFFFFFu;

    __aicore__ inline void BeginChunk()
    {
        walkRows_ = 0;
        walkRuns_ = 0;
        notSel_[0] = 0;
        notSel_[1] = 0;
        walkDone_ = chunksLeft_ == 0;  // the end of this core's part of the token
    }

    __aicore__ inline bool StepChunk(GatherRun *runs, uint32_t budget)
    {
        if (walkDone_) {
            return true;
        }
        if (merge_) {
            return StepMerged(runs, budget);
        }
        const int64_t bs = p_->blockSize;
        uint32_t &rows = walkRows_;
        uint32_t &runCount = walkRuns_;
        for (uint32_t read = 0; rows < p_->blockKv && entry_ < count_; ++read) {
            if (read == budget) {
                return false;
            }
            const int64_t idx = Index(token_ * p_->topK + entry_);
            if (idx < 0) {
                count_ = entry_;  // -1 fills the list after the valid entries
                break;
            }
            if (idx >= reach_) {  // the block starts at or past the threshold (no idx * bs overflow)
                ++entry_;
                continue;
            }
            const int64_t begin = idx * bs;
            const int64_t blockLen = threshold_ - begin < bs ? threshold_ - begin : bs;
            const int64_t left = blockLen - offset_;
            const int64_t room = static_cast<int64_t>(p_->blockKv - rows);
            const uint32_t take = static_cast<uint32_t>(left < room ? left : room);
            const uint64_t row = kvBase_ + static_cast<uint64_t>(begin + offset_);
            if (runCount > 0 && runs[runCount - 1].kvRow + runs[runCount - 1].len == row) {
                runs[runCount - 1].len += take;  // consecutive rows: one copy, one scatter
            } else {
                runs[runCount].kvRow = row;
                runs[runCount].len = take;
                runs[runCount].pos = rows;
                ++runCount;
            }
            rows += take;
            offset_ += take;
            if (offset_ == blockLen) {
                ++entry_;
                offset_ = 0;
            }
        }
        if (rows != 0 && chunksLeft_ != SPARSE_ALL_CHUNKS) {
            --chunksLeft_;
        }
        walkDone_ = true;
        return true;
    }

    __aicore__ inline uint32_t ChunkRows(uint32_t &runCount) const
    {
        runCount = walkRuns_;
        return walkRows_;
    }

    // Whether the chunk being walked is known to exist or not yet (it has a row, or the walk
    // ended): a walk in steps can tell before its width is known.
    __aicore__ inline bool ChunkDecided() const { return walkDone_ || walkRows_ != 0; }

    // pairTokens: bit r set where row r of the chunk just walked is not selected by token h of
    // the pair (blockKv <= 64).
    __aicore__ inline int64_t Reach() const { return reach_; }
    __aicore__ inline uint64_t NotSelected(uint32_t h) const { return notSel_[h]; }

private:
    // Locates query token (pair item) t and resets the walk; returns the blocks it may reach.
    __aicore__ inline int64_t Position(uint64_t t)
    {
        int64_t s, actQ, actKv;
        Locate(t, s, actQ, actKv);
        int64_t thr = p_->sparseMode == 3 ? actKv - actQ + s + 1 : actKv;
        if (s >= actQ || thr < 0) {
            thr = 0;
        }
        const int64_t bs = p_->blockSize;
        const int64_t reach = (thr + bs - 1) / bs;
        token_ = t;
        threshold_ = thr;
        reach_ = reach;
        entry_ = 0;
        offset_ = 0;
        chunksLeft_ = SPARSE_ALL_CHUNKS;
        return reach;
    }

    // StepChunk of a pair item (block size 1) over its merged list (sparse_backward_params.h,
    // pairTokens): entry idx * 4 + sel is one chunk row, KV row idx, selected by token 0 of the
    // pair (sel bit 0) and / or token 1 (bit 1); the other token's NotSelected bit is set.
    __aicore__ inline bool StepMerged(GatherRun *runs, uint32_t budget)
    {
        uint32_t &rows = walkRows_;
        uint32_t &runCount = walkRuns_;
        for (uint32_t read = 0; rows < p_->blockKv && entry_ < count_; ++read) {
            if (read == budget) {
                return false;
            }
            const int64_t e = Index(token_ * p_->topK + entry_);
            if (e < 0) {
                count_ = entry_;  // -1 after the merged entries
                break;
            }
            ++entry_;
            const uint64_t bit = 1ULL << rows;
            notSel_[0] |= (e & 1) == 0 ? bit : 0;
            notSel_[1] |= (e & 2) == 0 ? bit : 0;
            const uint64_t row = kvBase_ + static_cast<uint64_t>(e >> 2);
            if (runCount > 0 && runs[runCount - 1].kvRow + runs[runCount - 1].len == row) {
                ++runs[runCount - 1].len;
            } else {
                runs[runCount].kvRow = row;
                runs[runCount].len = 1;
                runs[runCount].pos = rows;
                ++runCount;
            }
            ++rows;
        }
        if (rows != 0 && chunksLeft_ != SPARSE_ALL_CHUNKS) {
            --chunksLeft_;
        }
        walkDone_ = true;
        return true;
    }

    __aicore__ inline int64_t Index(uint64_t i)
    {
        if (local_) {
            const uint32_t e = static_cast<uint32_t>(i - token_ * p_->topK);
            return index64_ ? loc64_.GetValue(e) : static_cast<int64_t>(loc32_.GetValue(e));
        }
        if (index64_) {
            return idx64_.GetValue(i);
        }
        // INT32 indices from GM: one 8-byte scalar load brings an aligned pair of entries (the
        // walk reads them in order); the last entry of an odd-sized tensor is read alone.
        const uint64_t pair = i & ~static_cast<uint64_t>(1);
        if (pair != pairAt_) {
            if (!pairs_ || pair + 1 >= indexCount_) {
                return static_cast<int64_t>(idx32_.GetValue(i));
            }
            pairVal_ = static_cast<uint64_t>(idxPairs_.GetValue(pair / 2));
            pairAt_ = pair;
        }
        const uint32_t half = static_cast<uint32_t>((i & 1) != 0 ? pairVal_ >> 32 : pairVal_ & 0xffffffffULL);
        return static_cast<int64_t>(static_cast<int32_t>(half));
    }

    // Lengths are device data the host cannot check: out-of-range values are clamped so a
    // wrong length never reads outside the tensors.
    __aicore__ inline static int64_t Clamp(int64_t v, uint64_t hi)
    {
        return v < 0 ? 0 : (v > static_cast<int64_t>(hi) ? static_cast<int64_t>(hi) : v);
    }

    __aicore__ inline int64_t SeqQ(uint32_t b) const
    {
        return p_->seq64 != 0 ? seqQ64_.GetValue(b) : static_cast<int64_t>(seqQ32_.GetValue(b));
    }

    __aicore__ inline int64_t SeqKv(uint32_t b) const
    {
        return p_->seq64 != 0 ? seqKv64_.GetValue(b) : static_cast<int64_t>(seqKv32_.GetValue(b));
    }

    // Batch row s of token t, the batch's query/KV lengths, and kvBase_ (its first KV row).
    __aicore__ inline void Locate(uint64_t t, int64_t &s, int64_t &actQ, int64_t &actKv)
    {
        if (p_->tnd == 0) {
            const uint32_t b = static_cast<uint32_t>(t / p_->s1);
            s = static_cast<int64_t>(t % p_->s1);
            actQ = p_->hasSeqQ != 0 ? Clamp(SeqQ(b), p_->s1) : static_cast<int64_t>(p_->s1);
            actKv = p_->hasSeqKv != 0 ? Clamp(SeqKv(b), p_->s2) : static_cast<int64_t>(p_->s2);
            kvBase_ = static_cast<uint64_t>(b) * p_->s2;
            return;
        }
        // TND: tokens are walked in increasing order, so the batch only moves forward.
        if (t < batchQStart_) {
            batch_ = 0;
            batchQStart_ = 0;
        }
        while (batch_ + 1 < p_->batch && static_cast<int64_t>(t) >= SeqQ(batch_)) {
            batchQStart_ = static_cast<uint64_t>(SeqQ(batch_));
            ++batch_;
        }
        const int64_t qStart = static_cast<int64_t>(batchQStart_);
        const int64_t kvStart = batch_ == 0 ? 0 : Clamp(SeqKv(batch_ - 1), p_->t2);
        const int64_t kvEnd = Clamp(SeqKv(batch_), p_->t2);
        s = static_cast<int64_t>(t) - qStart;
        actQ = Clamp(SeqQ(batch_), p_->t1) - qStart;
        actKv = kvEnd > kvStart ? kvEnd - kvStart : 0;
        kvBase_ = static_cast<uint64_t>(kvStart);
    }

    const SparseBackwardParams *p_ = nullptr;
    AscendC::GlobalTensor<int32_t> idx32_, seqQ32_, seqKv32_;
    AscendC::GlobalTensor<int64_t> idx64_, idxPairs_, seqQ64_, seqKv64_;
    uint64_t indexCount_ = 0;
    bool pairs_ = false;
    uint64_t pairAt_ = ~static_cast<uint64_t>(0);
    uint64_t pairVal_ = 0;
    AscendC::LocalTensor<int32_t> loc32_;
    AscendC::LocalTensor<int64_t> loc64_;
    bool local_ = false;
    bool index64_ = false;
    bool sorted_ = false;  // walking the sorted lists (InitSelection with sortSelection)
    uint32_t chunksLeft_ = SPARSE_ALL_CHUNKS;
    uint64_t token_ = 0, kvBase_ = 0, batchQStart_ = 0;
    uint32_t batch_ = 0, count_ = 0, entry_ = 0;
    int64_t threshold_ = 0, reach_ = 0, offset_ = 0;
    uint32_t walkRows_ = 0, walkRuns_ = 0;  // the chunk being walked
    bool walkDone_ = true;
    // pairTokens (merge_: walking the merged lists of pair items): the chunk's rows each token
    // of the pair does not select.
    bool merge_ = false;
    uint64_t notSel_[2] = {0, 0};
};

}  // namespace AttentionCore
