// Geometry of the backward core, shared by its cube and vector sides so both walk the same
// steps: the units (batch, kv head, kv block) of a core, the per-batch sparse-mode band and
// the query rows a kv block is visible to.
//
// Sparse modes as a band (a key c of batch row r is visible when r - pre <= c <= r + next,
// right-down modes shift the diagonal by Skv - Sq): 0 user mask + left-up band(pre, next),
// 1 user mask, 2 left-up causal, 3 right-down causal, 4 right-down band, 7/8 the band batch
// right-down band(pre, next) and the others causal right-down (7) / left-up (8). Without a
// mask the modes do not apply (spec 001; docs/golden.md). The band is handed to the forward
// core's MaskMod<MaskTensorBand> as a left-up band (pre - shift, next + shift).
#pragma once
#include "kernel_operator.h"
#include "backward_params.h"
#include "sync.h"

namespace AttentionCore {

constexpr int64_t BAND_INFINITE = 1LL << 40;

// One unit: keys [k0, k0 + cols) of kv head nkv in batch b, whose query rows [rowLo, rowHi)
// (batch-relative) may see them.
struct BackwardUnit {
    uint32_t b;
    uint32_t nkv;
    uint64_t qStart;   // first T row of the batch in query
    uint64_t kvStart;  // first T row of the batch in key
    int64_t sq;
    int64_t sk;
    int64_t k0;
    uint32_t cols;
    bool band;
    int64_t pre;   // left-up band after the right-down shift
    int64_t next;
    int64_t rowLo;
    int64_t rowHi;
};

class BackwardSchedule {
public:
    __aicore__ inline void Init(const BackwardParams *p, GM_ADDR seqQ, GM_ADDR seqKv)
    {
        p_ = p;
        cumQ_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqQ));
        cumKv_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(seqKv));
    }

    // Positions the walk on `unit` (units are numbered batch-major, then kv head, then block).
    __aicore__ inline void Seek(uint64_t unit)
    {
        b_ = 0;
        nkv_ = 0;
        blk_ = 0;
        LoadBatch();
        while (b_ < p_->batch) {
            const uint64_t inBatch = static_cast<uint64_t>(blocks_) * p_->numKvHeads;
            if (unit < inBatch) {
                nkv_ = static_cast<uint32_t>(unit / blocks_);
                blk_ = static_cast<uint32_t>(unit % blocks_);
                return;
            }
            unit -= inBatch;
            ++b_;
            LoadBatch();
        }
    }

    __aicore__ inline void Advance()
    {
        if (++blk_ < blocks_) {
            return;
        }
        blk_ = 0;
        if (++nkv_ < p_->numKvHeads) {
            return;
        }
        nkv_ = 0;
        do {
            ++b_;
            LoadBatch();
        } while (b_ < p_->batch && blocks_ == 0);
    }

    __aicore__ inline void Current(BackwardUnit &u) const
    {
        u.b = b_;
        u.nkv = nkv_;
        u.qStart = qStart_;
        u.kvStart = kvStart_;
        u.sq = sq_;
        u.sk = sk_;
        u.k0 = static_cast<int64_t>(blk_) * p_->blockKv;
        const int64_t left = sk_ - u.k0;
        u.cols = left < static_cast<int64_t>(p_->blockKv) ? static_cast<uint32_t>(left) : p_->blockKv;
        BatchBand(u);
        u.rowLo = 0;
        u.rowHi = sq_;
        if (u.band) {
            const int64_t lo = u.k0 - u.next;
            const int64_t hi = u.k0 + static_cast<int64_t>(u.cols) + u.pre;
            u.rowLo = lo > 0 ? lo : 0;
            u.rowHi = hi < sq_ ? hi : sq_;
        }
        if (u.rowHi < u.rowLo) {
            u.rowHi = u.rowLo;
        }
    }

    // Query-row blocks of one head in a unit (steps of blockQ from rowLo).
    __aicore__ inline uint32_t QBlocks(const BackwardUnit &u) const
    {
        return static_cast<uint32_t>((u.rowHi - u.rowLo + p_->blockQ - 1) / p_->blockQ);
    }

private:
    __aicore__ inline void LoadBatch()
    {
        if (b_ >= p_->batch) {
            blocks_ = 0;
            return;
        }
        qStart_ = b_ == 0 ? 0 : static_cast<uint64_t>(cumQ_.GetValue(b_ - 1));
        kvStart_ = b_ == 0 ? 0 : static_cast<uint64_t>(cumKv_.GetValue(b_ - 1));
        sq_ = cumQ_.GetValue(b_) - static_cast<int64_t>(qStart_);
        sk_ = cumKv_.GetValue(b_) - static_cast<int64_t>(kvStart_);
        blocks_ = static_cast<uint32_t>((sk_ + p_->blockKv - 1) / p_->blockKv);
    }

    __aicore__ inline void BatchBand(BackwardUnit &u) const
    {
        const int64_t shift = u.sk - u.sq;  // right-down diagonal
        const uint32_t mode = p_->sparseMode;
        const bool bandBatch = static_cast<int64_t>(u.b) == p_->bandBatch;
        u.band = p_->hasMask != 0 && mode != 1;
        u.pre = BAND_INFINITE;
        u.next = 0;
        if (mode == 0) {
            u.pre = p_->preTokens;
            u.next = p_->nextTokens;
        } else if (mode == 3 || (mode == 7 && !bandBatch)) {
            u.next = shift;
        } else if (mode == 4 || ((mode == 7 || mode == 8) && bandBatch)) {
            u.pre = p_->preTokens - shift;
            u.next = p_->nextTokens + shift;
        }
    }

    const BackwardParams *p_ = nullptr;
    AscendC::GlobalTensor<int64_t> cumQ_, cumKv_;
    uint32_t b_ = 0, nkv_ = 0, blk_ = 0, blocks_ = 0;
    uint64_t qStart_ = 0, kvStart_ = 0;
    int64_t sq_ = 0, sk_ = 0;
};

}  // namespace AttentionCore
