// Seam policies of the varlen forward (FlashAttentionVarLenScore, TND): the work split over
// per-batch query lengths, the sparse-mode mask (modes 0-8 through sparse_mode.h) and the
// pse score modifier. Included by policies.h after the PFA policies.
#pragma once
#include "../common/sparse_mode.h"
#include "../common/sync.h"
#include "../common/float_cast.h"

namespace AttentionCore {

// The policies' GM tensors (ForwardTensors' `split`, `score`, `mask`, `softmax`): the cumulative
// int64 query / key lengths (TND), the pse, the mask and prefix, the keep bits.
struct TndTensors {
    GM_ADDR cumSeqQ = nullptr;
    GM_ADDR cumSeqKv = nullptr;
    GM_ADDR unitOrder = nullptr;  // uint32 unit per position, read with ForwardParams UNITS_TABLE
};
struct PseTensors {
    GM_ADDR pse = nullptr;
};
struct SparseMaskTensors {
    GM_ADDR mask = nullptr;
    GM_ADDR prefix = nullptr;
};
struct DropoutTensors {
    GM_ADDR dropMask = nullptr;
    GM_ADDR cumSeqQ = nullptr;  // the keep bits of batch b start after those of the batches before it
    GM_ADDR cumSeqKv = nullptr;
};

// Units (b, n, q-block) in that order over TND tensors: batch b has ceil(Sq_b / blockQ)
// q-blocks per head, Sq_b and Skv_b from the cumulative int64 lengths in GM. A core walks its
// contiguous range of positions in order, so Decode keeps a cursor on the current batch instead
// of searching from batch 0 each time. With UNITS_TABLE position i is unit table[i]: the host
// then deals the units to the cores by cost (uneven lengths leave units too coarse for
// contiguous ranges to end together) and lists each core's units in ascending order, so the
// cursor still only moves forward within a core.
template <> struct WorkSplit<SplitTnd> : WorkSplitBase {
    using Tensors = TndTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.params;
        cumQ_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.split.cumSeqQ));
        cumKv_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.split.cumSeqKv));
        table_ = (p_->foldQBlocks & UNITS_TABLE) != 0;
        if (table_) {
            order_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(t.split.unitOrder));
        }
        Load(0, 0);
    }
    __aicore__ inline uint64_t Begin(uint32_t core) const { return p_->coreUnitStart[core]; }
    __aicore__ inline uint64_t End(uint32_t core) const { return p_->coreUnitStart[core + 1]; }
    __aicore__ inline void Decode(uint64_t pos, WorkUnit &u)
    {
        const uint64_t unit = table_ ? static_cast<uint64_t>(order_.GetValue(pos)) : pos;
        if (unit < base_) {
            Load(0, 0);
        }
        while (unit >= base_ + units_ && b_ + 1 < p_->batch) {
            Load(b_ + 1, base_ + units_);
        }
        const uint64_t local = unit - base_;
        const uint32_t qb = static_cast<uint32_t>(local % qBlocks_);
        u.b = b_;
        u.n = static_cast<uint32_t>(local / qBlocks_);
        // With UNITS_TAIL_FIRST a batch's short q-block (Sq_b % blockQ rows) is its first: under a
        // causal band it then sees a few keys, where last it would stream all of the batch's K and
        // V for a few rows.
        const uint32_t shift = (p_->foldQBlocks & UNITS_TAIL_FIRST) != 0
                                   ? static_cast<uint32_t>(qBlocks_ * p_->blockQ - static_cast<uint64_t>(seqQ_))
                                   : 0;
        u.q0 = qb == 0 ? 0 : qb * p_->blockQ - shift;
        const int64_t end = static_cast<int64_t>(qb + 1) * p_->blockQ - shift;
        u.rows = static_cast<uint32_t>((end < seqQ_ ? end : seqQ_) - static_cast<int64_t>(u.q0));
        u.qValid = u.rows;
        u.qBase = qStart_;
        u.kvBase = kvStart_;
        u.seqQ = seqQ_;
        u.seqKv = seqKv_;
    }

private:
    __aicore__ inline void Load(uint32_t b, uint64_t base)
    {
        b_ = b;
        base_ = base;
        const int64_t q0 = b == 0 ? 0 : cumQ_.GetValue(b - 1);
        const int64_t k0 = b == 0 ? 0 : cumKv_.GetValue(b - 1);
        qStart_ = static_cast<uint64_t>(q0);
        kvStart_ = static_cast<uint64_t>(k0);
        seqQ_ = cumQ_.GetValue(b) - q0;
        seqKv_ = cumKv_.GetValue(b) - k0;
        qBlocks_ = static_cast<uint64_t>((seqQ_ + p_->blockQ - 1) / p_->blockQ);
        units_ = qBlocks_ * p_->numHeads;
    }

    const ForwardParams *p_ = nullptr;
    AscendC::GlobalTensor<int64_t> cumQ_, cumKv_;
    AscendC::GlobalTensor<uint32_t> order_;
    bool table_ = false;
    uint32_t b_ = 0;
    uint64_t base_ = 0;   // first unit of batch b_
    uint64_t units_ = 0;  // units of batch b_
    uint64_t qBlocks_ = 0;
    uint64_t qStart_ = 0, kvStart_ = 0;
    int64_t seqQ_ = 0, seqKv_ = 0;
};

// Sparse modes 0-8 (sparse_mode.h) per batch of a TND problem: the band bounds the key range of
// a unit (blocks outside it are never computed) and is applied element-wise inside the
// computed blocks; modes 0 and 1 also read the user mask [maxSq, maxSkv] (non-zero excludes).
template <> struct MaskMod<MaskSparseMode> : MaskModBase {
    using Params = SparseMaskParams;
    using Tensors = SparseMaskTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.mask;
        if (p_->hasMask != 0) {
            mask_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(t.mask.mask));
        }
        if (p_->hasPrefix != 0) {
            prefix_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.mask.prefix));
        }
    }

    __aicore__ inline SparseBand Band(const WorkUnit &u) const
    {
        const int64_t prefix = p_->hasPrefix != 0 ? prefix_.GetValue(u.b) : 0;
        return MakeSparseBand(p_->sparseMode, p_->hasMask != 0, p_->preTokens, p_->nextTokens, u.seqQ, u.seqKv, prefix,
                              static_cast<int64_t>(u.b) == p_->bandBatch);
    }

    __aicore__ inline void KvRange(WorkUnit &u) const
    {
        u.kvBegin = 0;
        u.kvEnd = 0;
        if (u.qValid == 0) {
            return;
        }
        const SparseBand band = Band(u);
        const int64_t lo = band.Lo(u.q0);
        const int64_t hi = band.Hi(u.q0 + u.qValid - 1);
        if (hi > lo) {
            // With dropout, blocks start on a multiple of 16 keys (keyAlign) so that, when Skv is a
            // multiple of 8, every row's keep bits start on a byte (the extra keys are masked like
            // any other excluded key).
            u.kvBegin = lo / p_->keyAlign * p_->keyAlign;
            u.kvEnd = hi;
        }
    }

    __aicore__ inline bool HasRowsBefore() const { return true; }

    // MaskModBase::RowsBefore: the band's end never decreases with the row (sparse_mode.h), so
    // the rows that end at or before k0 come first; a binary search for the first that does not.
    __aicore__ inline uint32_t RowsBefore(const WorkUnit &u, uint32_t row0, uint32_t rows, int64_t k0) const
    {
        const SparseBand band = Band(u);
        uint32_t lo = 0;
        uint32_t hi = rows;
        while (lo < hi) {
            const uint32_t mid = (lo + hi) / 2;
            if (band.Hi(static_cast<int64_t>(row0 + mid)) <= k0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    // MaskModBase::KeysSeen: the band's end at lastRow (it never decreases with the row).
    __aicore__ inline uint32_t KeysSeen(const WorkUnit &u, uint32_t lastRow, int64_t k0, uint32_t cols) const
    {
        const int64_t n = Band(u).Hi(static_cast<int64_t>(lastRow)) - k0;
        return n <= 0 ? 0 : (n >= static_cast<int64_t>(cols) ? cols : static_cast<uint32_t>(n));
    }

    // Same contracts as MaskMod<MaskTensorBand>::Load and ::Apply.
    __aicore__ inline void Load(const AscendC::LocalTensor<uint8_t> &maskBytes, const WorkUnit &u, uint32_t row0,
                                uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols)
    {
        if (ReadsTensor()) {
            MaskMod<MaskTensorBand>::LoadTensorMask(mask_, p_->strides, maskBytes, u, row0, rows, k0, colsValid, cols);
            loaded_ = true;
        }
    }

    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                 const AscendC::LocalTensor<uint8_t> &maskBytes,
                                 const AscendC::LocalTensor<half> &maskHalf, const WorkUnit &u, uint32_t row0,
                                 uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        using Helpers = MaskMod<MaskTensorBand>;
        (void)maskHalf;
        if (ReadsTensor()) {
            if (!loaded_) {
                Helpers::LoadTensorMask(mask_, p_->strides, maskBytes, u, row0, rows, k0, colsValid, cols);
            }
            loaded_ = false;
            Helpers::AddTensorMask(s, tmp, maskBytes, rows, cols);
        }
        Helpers::KillOutside(s, rows, cols, TileBand{Band(u), row0, k0, colsValid});
    }

private:
    // The visible columns [lo, hi) of row r of a tile (query rows from row0, keys from k0):
    // the band, clamped to the tile's valid columns.
    struct TileBand {
        SparseBand band;
        uint32_t row0;
        int64_t k0;
        uint32_t colsValid;
        __aicore__ inline void operator()(uint32_t r, int64_t &lo, int64_t &hi) const
        {
            const int64_t row = static_cast<int64_t>(row0 + r);
            lo = band.Lo(row) - k0 < 0 ? 0 : band.Lo(row) - k0;
            hi = band.Hi(row) - k0 > static_cast<int64_t>(colsValid) ? static_cast<int64_t>(colsValid)
                                                                     : band.Hi(row) - k0;
        }
    };

    // Modes 0 and 1 read the mask tensor; the others generate their band.
    __aicore__ inline bool ReadsTensor() const { return p_->hasMask != 0 && p_->sparseMode <= SPARSE_ALL_MASK; }

    const SparseMaskParams *p_ = nullptr;
    AscendC::GlobalTensor<uint8_t> mask_;
    AscendC::GlobalTensor<int64_t> prefix_;
    mutable bool loaded_ = false;  // Load issued the next Apply's mask rows (Apply consumes them)
};

// S = (Q.K^T + pse) * scale (pse added before the scale, FlashAttentionScore's order). The pse
// [Bp, N, H, W] (Bp = 1 broadcasts) is aligned to the bottom-right corner of each batch's
// Sq x Skv scores: score (r, c) reads stored row H - Sq + r, column W - Skv + c. When Sq > H
// (the alibi-compressed form: the last H = 1024 rows of a Toeplitz bias) a row above the
// stored ones moves down-right along its diagonal by a multiple of H; columns that then fall
// past W read 0 (they are masked in the causal modes where compression is allowed).
template <> struct ScoreMod<ScorePse> : ScoreModBase {
    using Params = PseParams;
    using Tensors = PseTensors;
    __aicore__ inline bool UsesScratch() const { return p_->hasPse != 0; }  // the pse rows
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.score;
        pse_ = t.score.pse;
    }

    template <typename T>
    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                 const AscendC::LocalTensor<T> &scratch, const WorkUnit &u, uint32_t row0,
                                 uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        const uint32_t count = rows * cols;
        if (p_->hasPse != 0) {
            AscendC::GlobalTensor<T> pse;
            pse.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(pse_));
            const int64_t h = p_->pseRows;
            const int64_t w = p_->pseCols;
            const uint64_t head = u.b * p_->pseStrideB + u.n * p_->pseStrideN;
            const int64_t top = h - u.seqQ + static_cast<int64_t>(row0);
            const int64_t cFirst = w - u.seqKv + k0;
            const bool window = top >= 0 && cFirst + colsValid <= w;
            if (!window) {  // rows rebuilt along the diagonal may read past W: those stay 0
                AscendC::Duplicate(scratch.template ReinterpretCast<int16_t>(), static_cast<int16_t>(0),
                                   static_cast<int32_t>(count));  // +0.0 in fp16 and bf16
            }
            PipeSync<AscendC::HardEvent::V_MTE2>();
            if (window) {
                // Uncompressed rows: one strided copy of the rows x colsValid window (columns
                // past colsValid are masked later).
                const uint32_t rowBytes = colsValid * sizeof(T);
                AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), rowBytes,
                                                static_cast<uint32_t>((w - colsValid) * sizeof(T)),
                                                (cols * sizeof(T) - AlignUp(rowBytes, 32)) / 32, 0);
                AscendC::DataCopyPadExtParams<T> pad(false, 0, 0, 0);
                AscendC::DataCopyPad(scratch, pse[head + static_cast<uint64_t>(top * w + cFirst)], copy, pad);
            }
            for (uint32_t r = 0; !window && r < rows; ++r) {
                int64_t t = h - u.seqQ + static_cast<int64_t>(row0 + r);
                const int64_t shift = t < 0 ? (-t + h - 1) / h * h : 0;
                t += shift;
                const int64_t c0 = w - u.seqKv + k0 + shift;
                if (c0 >= w) {
                    continue;
                }
                const int64_t n = c0 + colsValid > w ? w - c0 : colsValid;
                AscendC::DataCopyExtParams copy(1, static_cast<uint32_t>(n * sizeof(T)), 0, 0, 0);
                AscendC::DataCopyPadExtParams<T> pad(false, 0, 0, 0);
                AscendC::DataCopyPad(scratch[r * cols], pse[head + static_cast<uint64_t>(t * w + c0)], copy, pad);
            }
            PipeSync<AscendC::HardEvent::MTE2_V>();
            CastToFloat(tmp, scratch, count);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Add(s, s, tmp, static_cast<int32_t>(count));
            AscendC::PipeBarrier<PIPE_V>();
        }
        if (p_->scaleInKey != 0) {  // set without pse only: S arrives scaled (ScoreMod<ScoreScale>)
            return;
        }
        AscendC::Muls(s, s, p_->scaleValue, static_cast<int32_t>(count));
        AscendC::PipeBarrier<PIPE_V>();
    }
    __aicore__ inline float KeyScale() const { return p_->scaleInKey != 0 ? p_->scaleValue : 1.0f; }

private:
    const PseParams *p_ = nullptr;
    GM_ADDR pse_ = nullptr;
};

// Dropout with the caller's keep bits: P(r, c) *= keep(r, c) / keep_prob after the row sums
// (the softmax denominator is the plain one). The bits are dense, as the spec sizes the mask
// ((sum over batches of N * Sq * Skv) / 8 bytes, least-significant bit first): batch b's
// [N, Sq, Skv] bits start after those of the batches before it, so a row may start in the
// middle of a byte. A core walks its units in order, so a cursor carries the batch offset.
template <> struct SoftmaxMod<SoftmaxDropout> : SoftmaxModBase {
    using Params = DropoutParams;
    using Tensors = DropoutTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.softmax;
        if (p_->hasDropMask != 0) {
            drop_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(t.softmax.dropMask));
            cumQ_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.softmax.cumSeqQ));
            cumKv_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.softmax.cumSeqKv));
        }
    }

    __aicore__ inline void AfterExp(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<uint8_t> &bits,
                                    const WorkUnit &u, uint32_t row0, uint32_t rows, int64_t k0, uint32_t colsValid,
                                    uint32_t cols)
    {
        if (p_->hasDropMask == 0) {
            return;
        }
        Seek(u.b);
        const uint64_t skv = static_cast<uint64_t>(u.seqKv);
        const uint64_t firstBit =
            bitBase_ + (static_cast<uint64_t>(u.n) * u.seqQ + row0) * skv + static_cast<uint64_t>(k0);
        const uint32_t bytes = (colsValid + 7) / 8;
        AscendC::DataCopyPadExtParams<uint8_t> pad(false, 0, 0, 0);
        PipeSync<AscendC::HardEvent::V_MTE2>();
        if (firstBit % 8 == 0 && skv % 8 == 0) {
            // Every row starts on a byte: one strided copy, one 32-byte UB block per row
            // (DataCopyPad pads each row's <= 16 bytes).
            AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), bytes, static_cast<uint32_t>(skv / 8 - bytes),
                                            0, 0);
            AscendC::DataCopyPad(bits, drop_[firstBit / 8], copy, pad);
            PipeSync<AscendC::HardEvent::MTE2_V>();
        } else {
            LoadUnaligned(bits, firstBit, skv, rows, colsValid);
        }
        for (uint32_t r = 0; r < rows; ++r) {
            AscendC::Select(s[r * cols], bits[r * 32], s[r * cols], 0.0f, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE,
                            cols);
        }
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Muls(s, s, p_->keepProbInv, static_cast<int32_t>(rows * cols));
        AscendC::PipeBarrier<PIPE_V>();
    }

private:
    // Rows whose keep bits start inside a byte: each row's bytes go to its own 32-byte UB block
    // (at most 17 bytes for <= 128 columns), then the scalar unit shifts the row down so that
    // column k0's bit is bit 0 of the block, as Select expects. Rows r and r + 8 start 8 * Skv
    // bits = Skv bytes apart at the same bit of a byte, so the rows of one residue of r mod 8
    // share a shift and a span and come in with one strided copy (<= 8 copies, not one per row;
    // their stride Skv - span is >= 0 for any Skv), and the shift works on 32-bit words.
    __aicore__ inline void LoadUnaligned(const AscendC::LocalTensor<uint8_t> &bits, uint64_t firstBit, uint64_t skv,
                                         uint32_t rows, uint32_t colsValid)
    {
        constexpr uint32_t PERIOD = 8;
        AscendC::DataCopyPadExtParams<uint8_t> pad(false, 0, 0, 0);
        for (uint32_t i = 0; i < rows && i < PERIOD; ++i) {
            const uint64_t bit = firstBit + i * skv;
            const uint32_t span = (static_cast<uint32_t>(bit % 8) + colsValid + 7) / 8;
            AscendC::DataCopyExtParams copy(static_cast<uint16_t>((rows - i + PERIOD - 1) / PERIOD), span,
                                            static_cast<uint32_t>(skv - span), PERIOD - 1, 0);
            AscendC::DataCopyPad(bits[i * 32], drop_[bit / 8], copy, pad);
        }
        PipeSync<AscendC::HardEvent::MTE2_S>();
        const AscendC::LocalTensor<uint32_t> words = bits.template ReinterpretCast<uint32_t>();
        const uint32_t count = (colsValid + 31) / 32;  // words of keep bits per row
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t shift = static_cast<uint32_t>((firstBit + r * skv) % 8);
            if (shift == 0) {
                continue;
            }
            const uint32_t span = (shift + colsValid + 7) / 8;
            uint32_t w = words.GetValue(r * 8);
            for (uint32_t j = 0; j < count; ++j) {
                // The next word holds the bits shifted in from above (read only if copied).
                const uint32_t next = (j + 1) * 4 < span ? words.GetValue(r * 8 + j + 1) : 0;
                words.SetValue(r * 8 + j, (w >> shift) | (next << (32 - shift)));
                w = next;
            }
        }
        PipeSync<AscendC::HardEvent::S_V>();
    }

    __aicore__ inline void Seek(uint32_t b)
    {
        if (b < b_) {
            b_ = 0;
            bitBase_ = 0;
        }
        for (; b_ < b; ++b_) {
            const int64_t q0 = b_ == 0 ? 0 : cumQ_.GetValue(b_ - 1);
            const int64_t k0 = b_ == 0 ? 0 : cumKv_.GetValue(b_ - 1);
            const int64_t sq = cumQ_.GetValue(b_) - q0;
            const int64_t sk = cumKv_.GetValue(b_) - k0;
            bitBase_ += static_cast<uint64_t>(p_->numHeads) * static_cast<uint64_t>(sq) * static_cast<uint64_t>(sk);
        }
    }

    const DropoutParams *p_ = nullptr;
    AscendC::GlobalTensor<uint8_t> drop_;
    AscendC::GlobalTensor<int64_t> cumQ_, cumKv_;
    uint32_t b_ = 0;
    uint64_t bitBase_ = 0;  // first keep bit of batch b_
};

}  // namespace AttentionCore
