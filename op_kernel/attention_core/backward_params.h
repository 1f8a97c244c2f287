// Parameters of the shared backward attention core (FlashAttentionScoreGrad family, TND).
// A plain POD the host tiling fills and the kernel reads from the tiling buffer.
// Work split and workspace are described in docs/attention_core.md ("Backward").
#pragma once
#include <cstdint>
#include "forward_params.h"
#include "sparse_mode.h"

namespace AttentionCore {

struct BackwardParams {
    // Shape (TND): query/dy/attention_in/dq [tq, numHeads, headDim], key/value/dk/dv
    // [tkv, numKvHeads, headDim]; per-batch rows from the cumulative actual_seq_qlen/kvlen.
    uint32_t batch;
    uint32_t numHeads;
    uint32_t numKvHeads;
    uint32_t groupSize;  // numHeads / numKvHeads (GQA)
    uint32_t headDim;
    uint32_t headDimAlign;  // headDim rounded up to 16
    uint32_t ropeDim;       // D of query_rope/key_rope (0: no rope part)
    uint32_t ropeDimAlign;
    uint64_t tq;
    uint64_t tkv;

    float scaleValue;
    uint32_t statsTnd;  // bit 0: softmax_max is [T, N, 8] (else [N, T, 8]); bit 1: softmax_sum likewise

    // Mask: sparse mode as the spec defines it; with hasMask == 0 the modes do not apply
    // (full attention). Modes 0/1 read the 1-byte user mask with these strides.
    uint32_t sparseMode;
    uint32_t hasMask;
    int64_t preTokens;   // clamped by the host to +-2^40
    int64_t nextTokens;
    uint64_t maskStrideB, maskStrideN, maskStrideS;
    int64_t bandBatch;  // the batch carrying the band in sparse modes 7/8 (-1: none)
    uint32_t hasPrefix;  // mode 6: per-batch prefix (int64 GM), keys [0, prefix) always visible

    // pse. Types 0/1: an external tensor [Bp, N, pseRows, pseCols] bottom-right aligned as in
    // the forward (ScoreMod<ScorePse>); type 1 S = scale * (Q.K^T + pse), type 0
    // S = scale * Q.K^T + pse. Types 2/3: generated alibi S = scale * Q.K^T - slope *
    // |c - r - (Skv - Sq) - qStart + kvStart| (square root of the distance for type 3), slopes
    // fp32 [N] (slopeStrideB 0) or [B, N]; start indices from int64 GM (count 0: none, 1: all
    // batches, else one per batch). Dropout keep bits as SoftmaxMod<SoftmaxDropout> reads them.
    uint32_t hasPse;
    uint32_t pseType;
    uint64_t pseStrideB, pseStrideN;
    uint32_t pseRows, pseCols;
    uint64_t slopeStrideB;
    uint32_t qStartCount, kvStartCount;
    uint32_t hasDropMask;
    float keepProbInv;

    // Blocks: blockQ query rows (rowsPerVec per vector core) x blockKv keys; dChunk head-dim
    // columns per cube pass.
    uint32_t blockQ;
    uint32_t blockKv;
    uint32_t rowsPerVec;
    uint32_t dChunk;
    uint32_t usedCores;
    uint32_t hasSink;  // sink given: dsink = -sum over rows of exp(sink - max) / sum * D

    // Units (batch, kv head, kv block, query slice) in that order; core c takes
    // [coreUnitStart[c], coreUnitStart[c + 1]). With qSplit 1 a core owns the dK/dV rows of its
    // kv blocks (one writer, fixed order); qSplit > 1 cuts a kv block's query rows into that
    // many slices of whole query blocks (more units than cores on short sequences) whose dK/dV
    // adds then come from several cores.
    uint32_t qSplit;
    uint32_t pipelined;  // the cube double-buffers its step tiles (L1 permitting)
    uint32_t l0Bufs;     // 2: the cube's L0A/L0B operands and L0C results ping-pong (L0 permitting)
    uint32_t dqPitch;    // floats per row of a dQ slot (headDim rounded up to 8: whole 32-byte UB blocks)
    uint64_t unitCount;
    uint64_t coreUnitStart[MAX_CORES + 1];

    // Workspace (bytes from the user workspace): fp32 accumulators of dQ, dK, dV (and of the
    // rope gradients), the row
    // terms D = rowsum(dY o O) as [tq, numHeads, 8] fp32, then per-core slots: S and dP (fp32,
    // blockQ x blockKv) and P and dS (input dtype, same shape), then the dQ partial of a step
    // (fp32, blockQ x dqPitch), two of each (step i uses slot i % 2).
    // wsDsink holds one partial dsink row (dsinkPitch floats) per vector core.
    uint64_t wsDq, wsDk, wsDv, wsDqRope, wsDkRope, wsDrow, wsDsink, wsSlots;
    uint64_t dsinkPitch;
    uint64_t wsSlotBytesPerCore;
    uint64_t wsSlotF32;  // bytes of one fp32 slot
    uint64_t wsSlotT;    // bytes of one input-dtype slot
    uint64_t wsDqSlot;   // bytes of one dQ slot
};

// Query rows [lo, hi) of a batch whose visible keys [band.Lo(r), band.Hi(r)) meet the key
// block [k0, k0 + cols): both ends never decrease with the row (sparse_mode.h), so the rows
// form one range. Shared by the kernel's unit walk and the host's unit pricing.
__aicore__ inline void BackwardVisibleRows(const SparseBand &band, int64_t k0, int64_t cols, int64_t seqQ,
                                           int64_t &lo, int64_t &hi)
{
    lo = band.prefix > k0 ? 0 : k0 - band.diag - band.next;
    hi = k0 + cols - band.diag + band.pre;
    lo = lo < 0 ? 0 : lo;
    hi = hi > seqQ ? seqQ : hi;
    if (hi < lo) {
        hi = lo;
    }
}

}  // namespace AttentionCore
