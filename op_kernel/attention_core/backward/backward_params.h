// Parameters of the shared backward attention core (FlashAttentionScoreGrad family, TND).
// A plain POD the host tiling fills and the kernel reads from the tiling buffer.
// Work split and workspace are described in docs/attention_core.md ("Backward").
#pragma once
#include <cstdint>
#include "../forward/forward_params.h"
#include "../common/sparse_mode.h"

namespace AttentionCore {

// The most earlySteps (BackwardParams), a bound on the workspace: a slot each, blockQ x blockKv
// x 12 bytes per core (S, dP fp32 and P, dS fp16: 2 MiB per core for 14 at D = 128).
constexpr uint32_t BWD_MAX_EARLY_STEPS = 14;

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

    // The forward's element-wise policies, run on the recomputed scores with their own Params
    // (policy_params.h): MaskMod<MaskSparseMode> (sparse mode as the spec defines it; without
    // a mask the modes do not apply, full attention), ScoreMod<ScorePse> (pse types 0/1; its
    // scaleValue is 1 for type 0, which scales before the pse, and hasPse is 0 for types 2/3)
    // and SoftmaxMod<SoftmaxDropout> (keep bits). Modes, band and prefix also shape the
    // backward's unit walk (backward_geometry.h).
    PseParams score;
    SparseMaskParams mask;
    DropoutParams softmax;

    // pse. Types 0/1: an external tensor [Bp, N, pseRows, pseCols] bottom-right aligned as in
    // the forward (`score`); type 1 S = scale * (Q.K^T + pse), type 0 S = scale * Q.K^T + pse.
    // Types 2/3: generated alibi S = scale * Q.K^T - slope * |c - r - (Skv - Sq) - qStart +
    // kvStart| (square root of the distance for type 3), slopes fp32 [N] (slopeStrideB 0) or
    // [B, N]; start indices from int64 GM (count 0: none, 1: all batches, else one per batch).
    uint32_t hasPse;
    uint32_t pseType;
    uint64_t slopeStrideB;
    uint32_t qStartCount, kvStartCount;

    // Blocks: blockQ query rows (rowsPerVec per vector core) x blockKv keys; dChunk head-dim
    // columns per cube pass. The vector cores hold a block's rows in UB tiles of tileKv
    // columns (blockKv rounded up to whole 64-float repeats; the extra columns are masked
    // like a short last block's), the GM slots are packed at blockKv.
    uint32_t blockQ;
    uint32_t blockKv;
    uint32_t tileKv;
    uint32_t rowsPerVec;
    uint32_t dChunk;
    // accumKv 1: the cube keeps dK and dV of the unit in L0C over the unit's steps (two
    // blockKv x headDimAlign fp32 accumulators after the result tiles) and adds them into the
    // fp32 workspace once per unit; dQ partials go out with atomic Fixpipes. 0: dK/dV partials
    // go out per step (atomic), dQ partials through the dQ slots (backward_cube.h).
    // resElems: floats of one L0C result tile (a matmul whose result is larger goes out in
    // chunks of rows).
    uint32_t accumKv;
    uint32_t resElems;
    uint32_t usedCores;
    uint32_t hasSink;  // sink given: dsink = -sum over rows of exp(sink - max) / sum * D
    // prefetchRows (0 or blockKv): the vector cores read each unit's K (sub-block 0) and V
    // (sub-block 1), and the Q and dO rows of the steps of a head's first kv block, into UB
    // (prefetchRows rows per copy) some steps before the cube stages them, and drop them, so
    // that the cube's Nd2Nz copies find them in L2 (backward_prefetch.h, PrefetchKv).
    uint32_t prefetchRows;
    // dqGroupCast (accumKv only): the vector cores of core c cast the dQ rows of the (batch, KV
    // head) groups [dqCastLo[c], dqCastHi[c]) into dq in the main loop, the groups whose units
    // all lie in the core's range (groups are numbered b * numKvHeads + kv head); the groups
    // between the ranges (those a core boundary cuts) are cast after the final barrier by all.
    // dqTailRows[c]: core c also casts the first dqTailRows[c] query rows (batch-relative) of
    // group dqCastHi[c], a group that starts in its range but that it does not own, in the main
    // loop as they become final (a unit's dQ rows below the next unit's visible rows are, with
    // one query slice); those rows no later core touches (0: none). With causal masks a later
    // kv block sees fewer rows, so the rows of the kv blocks before a core boundary are final at
    // the earlier core. The rest of the group is cast after the final barrier.
    uint32_t dqGroupCast;
    uint64_t dqCastLo[MAX_CORES];
    uint64_t dqCastHi[MAX_CORES];
    uint64_t dqTailRows[MAX_CORES];

    // Units (batch, kv head, kv block, query slice) in that order; core c takes
    // [coreUnitStart[c], coreUnitStart[c + 1]). With qSplit 1 a core owns the dK/dV rows of its
    // kv blocks (one writer, fixed order); qSplit > 1 cuts a kv block's query rows into that
    // many slices of whole query blocks (more units than cores on short sequences) whose dK/dV
    // adds then come from several cores.
    uint32_t qSplit;
    // pipelined: steps the cube issues (S/dP) ahead of the step whose gradients it computes,
    // 0-2. tileSets: sets of the step tiles (Q, dO, Q_rope) and of K/K_rope in L1, pipelined + 1,
    // or pipelined + 2 where L1 allows: the cube then loads a step's tiles one step earlier.
    // earlySteps (0 or more than pipelined + 1): the cube computes the S/dP of the core's
    // first earlySteps steps before the first barrier, while the vector cores compute the row
    // terms (S and dP need none of them; only dS does), a slot each; it raises their
    // FLAG_BWD_SDP in the loop as for any step, and stages their tiles again for the gradients
    // (backward_cube.h).
    // slots: S/dP/P/dS slots per core, max(2, pipelined + 1, earlySteps).
    uint32_t pipelined;
    uint32_t tileSets;
    uint32_t earlySteps;
    uint32_t slots;
    uint32_t l0Bufs;   // 2: the cube's L0A/L0B operands and L0C results ping-pong (L0 permitting)
    uint32_t dqPitch;  // floats per row of a dQ slot (headDim rounded up to 8: whole 32-byte UB blocks)
    uint64_t unitCount;
    uint64_t coreUnitStart[MAX_CORES + 1];
    // Steps of unit coreUnitStart[c] that cores before c take (0: c starts at a unit's start);
    // core c runs up to step coreStepStart[c + 1] of unit coreUnitStart[c + 1]. A unit cut
    // between two cores has its dK/dV rows added by both.
    uint32_t coreStepStart[MAX_CORES + 1];

    // Workspace (bytes from the user workspace): fp32 accumulators of dQ, dK, dV (and of the
    // rope gradients), the row terms D = rowsum(dY o O) as [tq, numHeads, 8] fp32, then
    // per-core slots: S and dP (fp32, blockQ x blockKv, rows blockKv apart) and P and dS
    // (input dtype, same shape), `slots` of each (step i uses slot i % slots), then two dQ
    // partial slots of a step (fp32, blockQ x dqPitch; accumKv 0 only; step i uses i % 2).
    // wsDsink holds one partial dsink row (dsinkPitch floats) per vector core.
    uint64_t wsDq, wsDk, wsDv, wsDqRope, wsDkRope, wsDrow, wsDsink, wsSlots;
    uint64_t dsinkPitch;
    uint64_t wsSlotBytesPerCore;
    uint64_t wsSlotF32;  // bytes of one fp32 slot (slot areas: S at 0, dP, P, dS, dQ; BackwardSlotArea)
    uint64_t wsSlotT;    // bytes of one input-dtype slot
    uint64_t wsDqSlot;   // bytes of one dQ slot
};

// Byte offset of slot area `area` (0 S, 1 dP, 2 P, 3 dS, 4 dQ) in a core's slots. Areas 2 and
// 3 hold the P/dS slots in pairs (BackwardPdsSlot).
__aicore__ inline uint64_t BackwardSlotArea(const BackwardParams *p, uint32_t area)
{
    const uint64_t f32 = p->slots * p->wsSlotF32, t = p->slots * p->wsSlotT;
    return area <= 2 ? area * f32 : 2 * f32 + (area - 2) * t;
}

// Element offset of slot `slot`'s P from area 2; its dS follows P (wsSlotT bytes on), so in
// the cube's Nz order a full key block's P and dS column blocks form one run: one copy into L1.
__aicore__ inline uint64_t BackwardPdsSlot(const BackwardParams *p, uint32_t slot, uint32_t elemBytes)
{
    return 2ull * slot * (p->wsSlotT / elemBytes);
}

// Query rows [lo, hi) of a batch whose visible keys [band.Lo(r), band.Hi(r)) meet the key
// block [k0, k0 + cols): both ends never decrease with the row (sparse_mode.h), so the rows
// form one range. Shared by the kernel's unit walk and the host's unit pricing.
__aicore__ inline void BackwardVisibleRows(const SparseBand &band, int64_t k0, int64_t cols, int64_t seqQ, int64_t &lo,
                                           int64_t &hi)
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
