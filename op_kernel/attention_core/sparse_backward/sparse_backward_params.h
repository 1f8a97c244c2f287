// Parameters of the sparse (gathered-KV) backward core, aclnnSparseFlashAttentionGrad: a POD
// the host tiling fills and the kernel reads from the tiling buffer. One work item is one query
// token: its G query heads (N1 / N2, N2 = 1) form the cube's M dimension, its keys are the
// blocks sparse_indices selects (kv_gather.h). docs/attention_core.md ("Sparse backward").
#pragma once
#include <cstdint>
#include "../forward/forward_params.h"

namespace AttentionCore {

// Chunks of a dQ segment at most (dqSegChunks; the cube keeps the segment's chunk widths).
constexpr uint32_t SPARSE_MAX_SEG = 64;

struct SparseBackwardParams {
    // Shapes flattened to tokens: query/dO/out/dq [t1, heads, headDim] (+ rope [t1, heads,
    // ropeDim]); key/value/dk/dv [t2, 1, headDim] (+ key rope [t2, 1, ropeDim]).
    uint32_t batch;
    uint32_t heads;    // G = N1 (one KV head)
    uint32_t headDim;  // D of value and of the non-rope part of query/key
    uint32_t ropeDim;  // 0 without rope
    uint32_t qkDim;    // headDim + ropeDim: the score's contraction length
    uint64_t t1;
    uint64_t t2;
    uint64_t s1;  // BSND: rows per batch of query / key (0 for TND)
    uint64_t s2;
    uint32_t tnd;      // 1: actual_seq_lengths_* are cumulative (TND), 0: per-batch (BSND)
    uint32_t hasSeqQ;  // the optional per-batch lengths are given (BSND)
    uint32_t hasSeqKv;
    uint32_t seq64;       // actual_seq_lengths_* are INT64 (1) or INT32 (0)
    uint32_t index64;     // sparse_indices are INT64 (1) or INT32 (0)
    uint32_t topK;        // K: entries per query token
    uint32_t blockSize;   // sparse_block_size
    uint32_t sparseMode;  // 0 or 3 (right-down causal on the selection)
    float scaleValue;

    // Blocks: blockKv gathered keys per cube pass, dChunk columns per matmul pass, the heads
    // rounded up to the cube's 16 rows (headsPad), and the heads each vector core owns.
    uint32_t blockKv;
    uint32_t dChunk;
    uint32_t headsPad;
    uint32_t rowsPerVec;
    uint32_t usedCores;
    // Gathered keys whose dK / dV rows are built in L0C at once over the full width (32, or 16
    // when 32 rows of qkDim fp32 do not fit L0C); each run of keys then leaves in one Fixpipe.
    uint32_t keyGradRows;
    // dK/dV key tiles computed together (1 or 2, sharing each L1 -> L0B load of Q / dO): 2 when
    // reloading Q / dO per tile would cost the MTE1 more than half the tile's scatter.
    uint32_t keyGradGroup;
    // L0C: a ring of l0cTiles (<= 3) tiles of l0cTileElems fp32, each holding one result: S
    // or dP (headsPad x blockKv) or a dK/dV key tile.
    uint32_t l0cTiles;
    uint32_t l0cTileElems;
    // dQ is not written per chunk: after every dqSegChunks chunks of a token (and after its
    // last) the cube computes dQ += dS.K of those chunks in a separate pass, accumulated in
    // L0C over the segment in column passes of dqPassCols (dqTiles accumulators: 2 let a
    // pass's Fixpipe run under the next pass's Mmads), one Fixpipe per pass into the fp32 dQ
    // (plain for a token's first segment, atomic after). The pass re-reads the segment's dS
    // and gathered K rows from two rings of ringSlots (= dqSegChunks + 3) per-core slots,
    // staged in L1 over all of it (two halves, each dS tiles + K column blocks).
    uint32_t dqSegChunks;
    uint32_t ringSlots;
    uint32_t dqPassCols;
    uint32_t dqTiles;
    // Chunks whose dS and K column block the pass stages with one copy each (chunks in
    // adjacent ring slots share the copies' fixed start cost): as many as half of L1 holds.
    uint32_t dqPassChunks;
    // L0A / L0B: l0Copies (2 when they fit) copies of l0aElems / l0bElems elements.
    uint32_t l0Copies;
    uint32_t l0aElems;
    uint32_t l0bElems;
    // sortSelection: the vector cores sort each token's valid entries (those before the first
    // negative one, at most min(K, reach)) ascending into wsSorted, two tables [t1, topK] INT32
    // (then -1s), and all three cores walk them: consecutive KV rows then form runs (one gather
    // DMA and one scatter Fixpipe per run, not per row). The cube and vector core 0 read table
    // 0, vector core 1 table 1. A core's first token (a token some core starts in) and its
    // second are sorted before the first SyncAll into both tables; its later tokens by its own
    // vector cores in the main loop, each into its table (SparseSortedInLoop). INT64 rows are
    // narrowed to INT32 first (sortPad = topK rounded up to the Sort's 32-element repeat).
    uint32_t sortSelection;
    uint32_t sortPad;
    // pairTokens: every work item is two consecutive query tokens of one batch run as one item
    // of 2G heads over the union of their selections (the host halves t1 and s1 and doubles
    // heads and topK; halfTopK is the caller's K). The index row of an item is then the two
    // tokens' rows back to back; the vector cores sort each half and merge them into one
    // sorted row of entries idx * 4 + sel (sel: which tokens select KV row idx, then -1), so
    // a KV row both select is gathered and scattered once. Vector core v owns the heads of
    // token v of the pair and zeroes P in the columns its token did not select
    // (KvGather::NotSelected). The scatter per key, the bound at G = 64, is then shared by the
    // two tokens. Sparse mode 0, BSND without actual_seq_qlen, block size 1, INT32 indices
    // (the planner's choice).
    uint32_t pairTokens;
    uint32_t halfTopK;
    // Bytes of a vector core's span staging in UB (the UB the other buffers leave, capped, at
    // least one K row): the runs of a chunk are read from K / rope / V into it (neighbouring
    // ones as one span of KV rows) and copied by the vector unit into the chunk's K and V slots
    // in the cube's Nz order (SparseBackwardVector::GatherRows); the cube loads a chunk's K and
    // V, and the dQ pass its K column blocks, with plain copies.
    uint32_t gatherSpanBytes;
    // Core c owns the (token, chunk) positions from (coreTokenStart[c], coreChunkStart[c]) up
    // to (coreTokenStart[c + 1], coreChunkStart[c + 1]), exclusive: whole tokens, or with a
    // nonzero coreChunkStart a token cut between cores (SparseChunkRange).
    uint64_t coreTokenStart[MAX_CORES + 1];
    uint32_t coreChunkStart[MAX_CORES + 1];

    // Workspace (bytes from the user workspace): fp32 accumulators dQ [t1, heads, qkDim],
    // dK [t2, qkDim], dV [t2, headDim], then per-core slot areas. A core's chunks are numbered
    // in one sequence over its tokens (chunk n); its area holds S and dP (fp32, headsPad x
    // blockKv, one slot each), P (input dtype, same shape) and the gathered V rows [blockKv,
    // headDim] in two slots each (n % 2), and the rings (n % ringSlots) of dS (same shape as
    // P) and of the gathered K rows [blockKv, qkDim] (rope part after the first headDim
    // columns). The vector cores write P, dS and the gathered rows; the cube reads them.
    uint64_t wsDq, wsDk, wsDv, wsSlots;
    uint64_t wsSlotBytesPerCore;
    uint64_t wsSlotF32;  // bytes of one S / dP slot
    uint64_t wsSlotT;    // bytes of one P / dS slot
    uint64_t wsV;        // offset of the two V slots inside a core's area
    uint64_t wsVSlot;    // bytes of one V slot
    uint64_t wsDsRing;   // offset of the dS ring
    uint64_t wsKRing;    // offset of the K ring
    uint64_t wsKSlot;    // bytes of one K slot
    uint64_t wsSorted;   // the sorted selection lists (sortSelection), after the slots
};

constexpr uint32_t SPARSE_ALL_CHUNKS = 0xFFFFFFFFu;

// One past the last token core c holds a part of.
__aicore__ inline uint64_t SparseTokenEnd(const SparseBackwardParams *p, uint32_t c)
{
    return p->coreTokenStart[c + 1] + (p->coreChunkStart[c + 1] != 0 ? 1 : 0);
}

// Token t of core c is sorted in the main loop by the core's own vector cores (sortSelection):
// every token it holds after its first two, except one cut with core c + 1 (that core's first,
// sorted before the first SyncAll). Each vector core sets FLAG_SPARSE_SORTED once it stored its
// list; the cube waits for it before walking t.
__aicore__ inline bool SparseSortedInLoop(const SparseBackwardParams *p, uint32_t c, uint64_t t)
{
    return p->sortSelection != 0 && t > p->coreTokenStart[c] + 1 && t < p->coreTokenStart[c + 1];
}

// The chunks [first, end) of token t that core c computes (end SPARSE_ALL_CHUNKS: to the
// token's last). A token cut between cores (not first == 0 with end SPARSE_ALL_CHUNKS) has
// its dQ rows zeroed before the first SyncAll by the vector cores of every core that starts
// inside it, and every part adds into them.
__aicore__ inline void SparseChunkRange(const SparseBackwardParams *p, uint32_t c, uint64_t t, uint32_t &first,
                                        uint32_t &end)
{
    first = t == p->coreTokenStart[c] ? p->coreChunkStart[c] : 0;
    end = t == p->coreTokenStart[c + 1] ? p->coreChunkStart[c + 1] : SPARSE_ALL_CHUNKS;
}

}  // namespace AttentionCore
