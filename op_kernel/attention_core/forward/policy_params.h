// The Params of the element-wise policies (score, mask, softmax): plain POD structs the host
// tiling fills and the kernel reads from the tiling buffer, host-includable like
// sparse_mode.h. Each policy names its own (`using Params = ...`) and reads nothing else, so a
// tiling is composed of its variant's pieces — the core's ForwardParams (`params`) and the
// members `score`, `mask` and `softmax` — and the backward embeds the same pieces to run the
// same policies (docs/attention_core.md, "The policy contract").
#pragma once
#include <cstdint>

namespace AttentionCore {

// Element strides (batch, head, query row) of a 1-byte mask tensor read from its top-left
// corner; 0 broadcasts.
struct MaskStrides {
    uint64_t b, n, s;
};

// ScoreMod<ScoreScale>: S = scale * Q.K^T. scaleInKey: the K/V staging (kv_nz.h) multiplies K
// by the scale, an exact power of two, so the cube's S is already scaled (fp16 only).
struct ScaleParams {
    float scaleValue;
    uint32_t scaleInKey;
};

// ScoreMod<ScorePse>: S = (Q.K^T + pse) * scale, pse [Bp, N, pseRows, pseCols] bottom-right
// aligned to each batch's scores (pseRows < Sq: the alibi-compressed form).
struct PseParams {
    float scaleValue;
    uint32_t hasPse;
    uint64_t pseStrideB, pseStrideN;
    uint32_t pseRows, pseCols;
    uint32_t scaleInKey;  // as ScaleParams::scaleInKey, without pse only
    uint32_t reserved;
};

// ScoreMod<ScoreDecodePse>: S = scale * Q.K^T + pse_shift rows (B or 1, N, 1, S) in the query
// dtype; a decode unit's row r is query head (n / kvSplits) * groupSize + r.
struct DecodePseParams {
    float scaleValue;
    uint32_t hasPse;
    uint64_t pseStrideB, pseStrideN;
    uint32_t pseIsBf16;  // pse has the query dtype: bf16 (1) or fp16 (0)
    uint32_t groupSize;
    uint32_t kvSplits;
    uint32_t reserved;
};

// MaskMod<MaskTensorBand> (PFA, sparse mode 0): the optional mask tensor over the padded
// seqQ x seqKv plane and, only with it, the left-up band. The mask summary (one mark per 16
// query rows x 128 keys of a plane every (batch, head) shares; maskSummary = 0: none) sits at
// wsMaskSummary bytes from the workspace start, [key column][row group], summaryPitch bytes
// per column.
struct MaskBandParams {
    uint32_t hasMask;
    uint32_t bandActive;
    MaskStrides strides;
    int64_t preTokens;  // clamped by the host to +-2^40 so row +- tokens never overflows
    int64_t nextTokens;
    uint32_t seqQ, seqKv;
    uint32_t maskSummary;
    uint32_t summaryCols;   // ceil(seqKv / 128)
    uint32_t summaryPitch;  // ceil(seqQ / 16) rounded up to 8, plus 8 (whole uint64 reads)
    uint32_t reserved;
    uint64_t wsMaskSummary;
};

// MaskMod<MaskSparseMode>: sparse modes 0-8 through sparse_mode.h; modes 0/1 read the user
// mask. bandBatch carries the band of modes 7/8 (-1: none). keyAlign: a unit's key range
// starts on a multiple of it (16 with dropout, so each row's keep bits start on a byte when
// Skv is a multiple of 8: the dense drop mask's rows then need no shift).
struct SparseMaskParams {
    uint32_t hasMask;
    uint32_t sparseMode;
    MaskStrides strides;
    int64_t preTokens;
    int64_t nextTokens;
    int64_t bandBatch;
    uint32_t hasPrefix;
    uint32_t keyAlign;
};

// MaskMod<MaskDecode>: the batch's KV window (actual lengths, optional left padding) cut into
// kvSplits chunks of kvChunk keys, and one (B, S)-like mask row per batch (row pitch
// maskStrideB; non-zero excludes).
struct DecodeMaskParams {
    uint32_t hasKvLengths;  // actual_seq_lengths given (count 1 = one value for all batches)
    uint32_t kvLengthsCount;
    uint32_t hasLeftPadding;  // kv_padding_size given together with actual_seq_lengths
    uint32_t hasMask;
    uint32_t kvSplits;
    uint32_t kvChunk;
    uint64_t maskStrideB;
};

// SoftmaxMod<SoftmaxDropout>: keep bits per batch [N, Sq, Skv rounded up to 16], batches one
// after the other; a kept P is scaled by 1 / keep_prob.
struct DropoutParams {
    uint32_t hasDropMask;
    float keepProbInv;
    uint32_t numHeads;
    uint32_t reserved;
};

}  // namespace AttentionCore
