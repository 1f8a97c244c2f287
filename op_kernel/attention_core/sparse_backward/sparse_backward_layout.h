// Buffer layouts of the sparse backward stages, in bytes: what SparseBackwardCube::Init
// (sparse_backward_cube.h) and SparseBackwardVector::Init (sparse_backward_vector.h) allocate,
// and what the host planner (PlanSparseBackward,
// op_host/sparse_flash_attention_grad/sparse_flash_attention_grad_tiling.cpp) checks against the
// core's L1 / L0 / UB sizes. One definition for both, host-includable like backward_layout.h.
#pragma once
#include <cstdint>

#ifndef __aicore__  // host builds (tiling) include this header without the kernel headers
#define __aicore__
#endif

namespace AttentionCore {

// Heads per pass of the vector stage's D = rowsum(dO o O) loop; also the cast-out chunk.
constexpr uint32_t SPARSE_ROW_CHUNK = 4;

// The cube stage's L1 for g heads (padded to 16) and chunks of c gathered keys: Q (+ rope,
// qkDim columns), dO (headDim), one P / dS buffer (g x c), two K copies (+ rope) and V (the dQ
// pass stages its operands over these three).
struct SparseCubeL1 {
    uint32_t q, dy, pds, kv;
    __aicore__ inline uint64_t Total() const { return uint64_t(q) + dy + pds + kv; }
};

__aicore__ inline SparseCubeL1 SparseBackwardCubeL1Layout(uint32_t g, uint32_t c, uint32_t qkDim, uint32_t headDim,
                                                          uint32_t tBytes)
{
    SparseCubeL1 l;
    l.q = g * qkDim * tBytes;
    l.dy = g * headDim * tBytes;
    l.pds = g * c * tBytes;
    l.kv = (2 * c * qkDim + c * headDim) * tBytes;
    return l;
}

// The cube stage's L0: `copies` copies of the L0A and L0B operand tiles (aElems, bElems
// elements each); L0C holds the ring of `tiles` result tiles (tileElems floats each) or the dQ
// pass's accumulators (dqTiles x g x dqCols floats), whichever is larger.
struct SparseCubeL0 {
    uint32_t a, b, c;
};

__aicore__ inline SparseCubeL0 SparseBackwardCubeL0Layout(uint32_t copies, uint32_t aElems, uint32_t bElems,
                                                          uint32_t tiles, uint32_t tileElems, uint32_t dqTiles,
                                                          uint32_t g, uint32_t dqCols, uint32_t tBytes)
{
    SparseCubeL0 l;
    l.a = copies * aElems * tBytes;
    l.b = copies * bElems * tBytes;
    const uint32_t ring = tiles * tileElems, dqAcc = dqTiles * g * dqCols;
    l.c = (ring > dqAcc ? ring : dqAcc) * 4;
    return l;
}

// One vector core's UB for r heads (rowsPerVec) and chunks of c gathered keys: S, dP (fp32)
// and P, dS (fp16 width) of r x c; two fp32 and two 16-bit rows of SPARSE_ROW_CHUNK x qkDim
// (the row-term and cast-out passes); the raw row statistics (3 floats per head, heads rounded
// up to 8) and their 8-float broadcasts (3 x 32 bytes per head); the gather staging, half a
// chunk of K (+ rope) and of V rows, which with the selection sort (sortPad > 0 entries) also
// holds the sorted (score, index) list and Sort's tmp (16 bytes per entry) and the sort keys
// (4 bytes per entry); the index row (sortPad int32, or idxBytes when larger: SparseIndexRowBytes);
// the span staging of the gather (spanBytes, gatherSpanBytes).
struct SparseVectorUb {
    uint32_t s, dp, pOut, dsOut, a, b, aT, bT, raw, stats, kStage, vStage, idx, span;
    __aicore__ inline uint64_t Total() const
    {
        return uint64_t(s) + dp + pOut + dsOut + a + b + aT + bT + raw + stats + kStage + vStage + idx + span;
    }
};

// The index row's bytes when more than sortPad int32: an INT64 row (narrowed in place), or
// with pairTokens the two sorted halves at entries 0 and halfTopK (sortPad: its 32-rounding).
__aicore__ inline uint32_t SparseIndexRowBytes(bool index64, bool pair, uint32_t topK, uint32_t sortPad)
{
    return index64 ? topK * 8 : (pair ? 2 * sortPad * 4 : 0);
}

__aicore__ inline SparseVectorUb SparseBackwardVectorUbLayout(uint32_t r, uint32_t c, uint32_t qkDim, uint32_t headDim,
                                                              uint32_t tBytes, bool sort, uint32_t sortPad,
                                                              uint32_t idxBytes, uint32_t spanBytes)
{
    SparseVectorUb l;
    const uint32_t cells = r * c;
    const uint32_t wide = SPARSE_ROW_CHUNK * qkDim;
    const uint32_t statRows = (r + 7) / 8 * 8;
    const uint32_t gatherRows = (c + 1) / 2;
    l.s = cells * 4;
    l.dp = l.s;
    l.pOut = cells * 2;
    l.dsOut = l.pOut;
    l.a = wide * 4;
    l.b = l.a;
    l.aT = wide * 2;
    l.bT = l.aT;
    l.raw = statRows * 4 * 3;
    l.stats = statRows * 32 * 3;
    const uint32_t kStage = gatherRows * qkDim * tBytes, sortList = sort ? sortPad * 16 : 0;
    const uint32_t vStage = gatherRows * headDim * tBytes, sortKeys = sort ? sortPad * 4 : 0;
    l.kStage = kStage > sortList ? kStage : sortList;
    l.vStage = vStage > sortKeys ? vStage : sortKeys;
    l.idx = idxBytes > sortPad * 4 ? idxBytes : sortPad * 4;
    l.span = spanBytes;
    return l;
}

}  // namespace AttentionCore
