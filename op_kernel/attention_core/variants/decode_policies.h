// Decode (query S = 1) policies of the forward core, used by IncreFlashAttention:
//   WorkSplit<SplitKvCombine>  units (batch, KV head, head block, KV split); the query heads of
//                              one KV group are the unit's rows (GQA batched into the cube's M)
//   KvSource<KvDecode>         Q/O rows = heads of the group; K/V contiguous (BSH/BSND/BNSD) or
//                              paged through the block table (both cache layouts)
//   ScoreMod<ScoreDecodePse>   scale, then pse_shift rows of the unit's heads
//   MaskMod<MaskDecode>        the batch's KV window (actual lengths, left padding, split chunk)
//                              and the (B, 1, 1, S) mask row
// A unit's `n` encodes the pair (KV head, split) as kvHead * kvSplits + split. The split and
// the K/V source read the tiling's core `params` and `decode` pieces; the score and mask
// policies their own `score` and `mask` (DecodeTiling, decode_params.h).
#pragma once
#include "kernel_operator.h"
#include "decode_params.h"
#include "../forward/policies.h"

namespace AttentionCore {

struct SplitKvCombine {};
struct KvDecode {};
struct ScoreDecodePse {};
struct MaskDecode {};

// The policies' GM tensors (ForwardTensors' `split`, `kv`, `mask`; the score's is PseTensors):
// the INT8 output's quantisation (the combine pass), the block table, the KV window and mask.
struct SplitKvTensors {
    GM_ADDR quantScale = nullptr;   // INT8 output: fp32 or bf16
    GM_ADDR quantOffset = nullptr;  // same dtype, null without quantOffset2
};
struct PagedKvTensors {
    GM_ADDR blockTable = nullptr;  // int32 (B, maxBlocks)
};
struct DecodeMaskTensors {
    GM_ADDR mask = nullptr;       // (B, S)-like, one row per batch
    GM_ADDR kvLengths = nullptr;  // actual_seq_lengths (int64)
    GM_ADDR kvPadding = nullptr;  // kv_padding_size (int64, one value)
};

// ------------------------------------------------------------------- work split
template <> struct WorkSplit<SplitKvCombine> : WorkSplitBase {
    using Tensors = SplitKvTensors;
    template <class GmTensors> __aicore__ inline void Init(const DecodeTiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.params;
        d_ = &tiling.decode;
        workspace_ = t.workspace;
    }
    __aicore__ inline uint64_t Begin(uint32_t core) const { return p_->coreUnitStart[core]; }
    __aicore__ inline uint64_t End(uint32_t core) const { return p_->coreUnitStart[core + 1]; }
    // unit = ((b * numKvHeads + kvHead) * headBlocks + headBlock) * kvSplits + split
    __aicore__ inline void Decode(uint64_t unit, WorkUnit &u) const
    {
        const uint32_t splits = d_->kvSplits;
        const uint32_t split = static_cast<uint32_t>(unit % splits);
        uint64_t rest = unit / splits;
        const uint32_t hb = static_cast<uint32_t>(rest % p_->qBlocksPerHead);
        rest /= p_->qBlocksPerHead;
        const uint32_t kvHead = static_cast<uint32_t>(rest % p_->numKvHeads);
        u.b = static_cast<uint32_t>(rest / p_->numKvHeads);
        u.n = kvHead * splits + split;
        u.q0 = hb * p_->blockQ;
        const uint32_t left = p_->groupSize - u.q0;
        u.rows = left < p_->blockQ ? left : p_->blockQ;
        u.qValid = u.rows;
        u.qBase = 0;
        u.kvBase = 0;
        u.seqQ = 1;
        u.seqKv = p_->seqKv;
    }
    // The unit's rows go to the combine pass as partials (defined in split_kv_combine.h).
    __aicore__ inline bool StorePartialOutput(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                              const AscendC::LocalTensor<float> &acc,
                                              const AscendC::LocalTensor<float> &m,
                                              const AscendC::LocalTensor<float> &l) const;
    // Lazy P.V: the cube writes a unit's unflushed sum straight into its partial rows
    // (split_kv_combine.h, whose pass also applies INT8 K/V's value antiquant to partials).
    __aicore__ inline bool PartialRows(const WorkUnit &u, AscendC::GlobalTensor<float> &rows) const;
    __aicore__ inline void StorePartialStats(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                             const AscendC::LocalTensor<float> &m,
                                             const AscendC::LocalTensor<float> &l) const;

    const ForwardParams *p_ = nullptr;
    const DecodeParams *d_ = nullptr;
    GM_ADDR workspace_ = nullptr;
};

// -------------------------------------------------------------------- KV source
template <> struct KvSource<KvDecode> : KvSourceBase {
    using Tensors = PagedKvTensors;
    template <class GmTensors> __aicore__ inline void Init(const DecodeTiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.params;
        d_ = &tiling.decode;
        if (d_->paged != 0) {
            table_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(t.kv.blockTable));
        }
    }
    // Row `row` of unit head n is query head kvHead * G + row (S = 1: the head pitch is the row pitch).
    __aicore__ inline uint64_t QOffset(uint32_t b, uint32_t n, uint32_t row) const
    {
        return b * p_->qStrideB + QueryHead(n, row) * p_->qStrideN;
    }
    // Key `token` of batch b; rows from here are KvRowPitch apart up to the end of the page
    // (RowsInRun).
    __aicore__ inline uint64_t KvOffset(uint32_t b, uint32_t n, uint32_t token) const
    {
        const DecodeParams &d = *d_;
        const uint32_t kvHead = n / d.kvSplits;
        if (d.paged == 0) {
            return b * p_->kvStrideB + kvHead * p_->kvStrideN + static_cast<uint64_t>(token) * p_->kvStrideS;
        }
        int32_t block = table_.GetValue(static_cast<uint64_t>(b) * d.maxBlocks + token / d.blockSize);
        // The host rejects a table entry outside the cache when it can read the table; a table
        // written on the device after that check must still not make the kernel read foreign
        // memory, so such an entry reads block 0 (wrong numbers, never an out-of-cache access).
        if (block < 0 || static_cast<uint32_t>(block) >= d.cacheBlocks) block = 0;
        return static_cast<uint64_t>(block) * d.pageStride + kvHead * d.pageHeadStride +
               static_cast<uint64_t>(token % d.blockSize) * p_->kvStrideS;
    }
    __aicore__ inline uint64_t OutOffset(uint32_t b, uint32_t n, uint32_t row) const
    {
        return b * p_->oStrideB + QueryHead(n, row) * p_->oStrideN;
    }
    __aicore__ inline uint32_t QRowPitch() const { return static_cast<uint32_t>(p_->qStrideN); }
    __aicore__ inline uint32_t KvRowPitch() const { return static_cast<uint32_t>(p_->kvStrideS); }
    __aicore__ inline uint32_t OutRowPitch() const { return static_cast<uint32_t>(p_->oStrideN); }

    // A paged cache is contiguous up to the end of the token's page.
    __aicore__ inline uint32_t RowsInRun(uint32_t, uint64_t token) const
    {
        const DecodeParams &d = *d_;
        return d.paged == 0 ? 0xFFFFFFFFu : d.blockSize - static_cast<uint32_t>(token % d.blockSize);
    }

    __aicore__ inline uint64_t QueryHead(uint32_t n, uint32_t row) const
    {
        return static_cast<uint64_t>(n / d_->kvSplits) * p_->groupSize + row;
    }

    const ForwardParams *p_ = nullptr;
    const DecodeParams *d_ = nullptr;
    AscendC::GlobalTensor<int32_t> table_;
};

// ------------------------------------------------------------------------ score
// S = scale * Q.K^T, then the pse_shift rows of the unit's query heads (query dtype, added
// after the scale).
template <> struct ScoreMod<ScoreDecodePse> : ScoreModBase {
    using Params = DecodePseParams;
    using Tensors = PseTensors;
    __aicore__ inline bool UsesScratch() const { return p_->hasPse != 0; }  // the pse rows as half
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.score;
        if (p_->hasPse != 0) pse_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(t.score.pse));
    }

    // Scores of query heads (kvHead * G + row0 + r) against keys [k0, k0 + colsValid).
    template <typename T>
    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                 const AscendC::LocalTensor<T> &scratch, const WorkUnit &u, uint32_t row0,
                                 uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        AscendC::Muls(s, s, p_->scaleValue, static_cast<int32_t>(rows * cols));
        AscendC::PipeBarrier<PIPE_V>();
        if (p_->hasPse != 0) {
            AddPse(s, tmp, scratch.template ReinterpretCast<half>(), u, row0, rows, k0, colsValid, cols);
        }
    }

private:
    // s += pse rows (query dtype, cast to fp32). The element size is the query's: 2 bytes.
    __aicore__ inline void AddPse(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                  const AscendC::LocalTensor<half> &scratch, const WorkUnit &u, uint32_t row0,
                                  uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        const DecodePseParams &d = *p_;
        const uint64_t head = static_cast<uint64_t>(u.n / d.kvSplits) * d.groupSize + row0;
        const uint64_t elem = u.b * d.pseStrideB + head * d.pseStrideN + static_cast<uint64_t>(k0);
        const uint32_t count = rows * cols;
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Duplicate(scratch, static_cast<half>(0), static_cast<int32_t>(count));  // pad columns stay 0
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(0);
        const uint32_t rowBlocks = (colsValid * 2 + 31) / 32;
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), colsValid * 2,
                                        static_cast<uint32_t>((d.pseStrideN - colsValid) * 2),
                                        cols * 2 / 32 - rowBlocks, 0);
        AscendC::DataCopyPadExtParams<half> pad(false, 0, 0, static_cast<half>(0));
        AscendC::DataCopyPad(scratch, pse_[elem], copy, pad);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
        if (d.pseIsBf16 != 0) {
            AscendC::Cast(tmp, scratch.ReinterpretCast<bfloat16_t>(), AscendC::RoundMode::CAST_NONE, count);
        } else {
            AscendC::Cast(tmp, scratch, AscendC::RoundMode::CAST_NONE, count);
        }
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Add(s, s, tmp, static_cast<int32_t>(count));
        AscendC::PipeBarrier<PIPE_V>();
    }

    const DecodePseParams *p_ = nullptr;
    AscendC::GlobalTensor<half> pse_;  // bf16 pse is read through the same 2-byte view
};

// ------------------------------------------------------------------------- mask
template <> struct MaskMod<MaskDecode> : MaskModBase {
    using Params = DecodeMaskParams;
    // Scratch takes the mask row as half. (Also without a mask: the P buffer's wait then stays
    // ahead of the mask pass, where the pse scratch of the decode score policy puts it.)
    __aicore__ inline bool UsesScratch() const { return true; }
    // Mask rows are read inside Apply (one row per query head group): nothing to load ahead.
    using Tensors = DecodeMaskTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.mask;
        if (p_->hasKvLengths != 0) lens_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.mask.kvLengths));
        if (p_->hasLeftPadding != 0) pad_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.mask.kvPadding));
        if (p_->hasMask != 0) mask_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(t.mask.mask));
        padColumns_.Init(noBand_, t);  // no tensor, no band: it only kills pad columns
    }

    // The batch's KV window ([0, S), [0, L_b), or [S - pad - L_b, S - pad) with left padding;
    // empty if it leaves the cache), then the split's chunk of it.
    __aicore__ inline void KvRange(WorkUnit &u) const
    {
        const DecodeMaskParams &d = *p_;
        int64_t lo = 0;
        int64_t hi = u.seqKv;
        if (d.hasKvLengths != 0) {
            const int64_t len = lens_.GetValue(d.kvLengthsCount == 1 ? 0 : u.b);
            hi = len;
            if (d.hasLeftPadding != 0) {
                const int64_t pad = pad_.GetValue(0);
                hi = u.seqKv - (pad > 0 ? pad : 0);
                lo = len <= hi ? hi - len : -1;  // reaching below key 0 leaves the cache (no int64 wrap)
            }
        }
        if (lo < 0 || hi <= lo) {
            lo = 0;
            hi = 0;
        }
        const int64_t begin = lo + static_cast<int64_t>(u.n % d.kvSplits) * d.kvChunk;
        const int64_t end = begin + d.kvChunk;
        u.kvBegin = begin < hi ? begin : hi;
        u.kvEnd = end < hi ? end : hi;
    }

    // Scores of query heads (kvHead * G + row0 + r) against keys [k0, k0 + colsValid).
    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                 const AscendC::LocalTensor<uint8_t> &maskBytes,
                                 const AscendC::LocalTensor<half> &scratch, const WorkUnit &u, uint32_t row0,
                                 uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        if (p_->hasMask != 0) {
            AddMaskRow(s, tmp, maskBytes, scratch, u, rows, k0, colsValid, cols);
        }
        padColumns_.Apply(s, tmp, maskBytes, scratch, u, row0, rows, k0, colsValid, cols);
    }

private:
    // s[r][:] += MASKED_SCORE * mask[b][k0 : k0 + cols] for every row (one mask row per batch).
    __aicore__ inline void AddMaskRow(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                      const AscendC::LocalTensor<uint8_t> &maskBytes,
                                      const AscendC::LocalTensor<half> &scratch, const WorkUnit &u, uint32_t rows,
                                      int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        const DecodeMaskParams &d = *p_;
        AscendC::PipeBarrier<PIPE_V>();
        // zero bytes: the pad columns pass (they are killed below)
        AscendC::Duplicate(maskBytes.ReinterpretCast<half>(), static_cast<half>(0), static_cast<int32_t>(cols / 2));
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(0);
        AscendC::DataCopyExtParams copy(1, colsValid, 0, 0, 0);
        AscendC::DataCopyPadExtParams<uint8_t> pad(false, 0, 0, 0);
        AscendC::DataCopyPad(maskBytes, mask_[u.b * d.maskStrideB + static_cast<uint64_t>(k0)], copy, pad);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(0);
        AscendC::Cast(scratch, maskBytes, AscendC::RoundMode::CAST_NONE, cols);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Cast(tmp, scratch, AscendC::RoundMode::CAST_NONE, cols);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Muls(tmp, tmp, MASKED_SCORE, static_cast<int32_t>(cols));
        AscendC::PipeBarrier<PIPE_V>();
        const uint8_t pitch = static_cast<uint8_t>(cols / 8);
        for (uint32_t c0 = 0; c0 < cols; c0 += 64) {
            AscendC::Add(s[c0], s[c0], tmp[c0], 64, static_cast<uint8_t>(rows),
                         AscendC::BinaryRepeatParams(1, 1, 1, pitch, pitch, 0));
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    const DecodeMaskParams *p_ = nullptr;
    AscendC::GlobalTensor<int64_t> lens_, pad_;
    AscendC::GlobalTensor<uint8_t> mask_;
    struct {
        MaskBandParams mask;
    } noBand_{};
    MaskMod<MaskTensorBand> padColumns_;
};

}  // namespace AttentionCore
