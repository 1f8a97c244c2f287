// Parameters of the decode (query S = 1) variant of the forward core, used by
// IncreFlashAttention: DecodeTiling is the shared ForwardParams, the Params of the decode score
// and mask policies (policy_params.h) and DecodeParams, the piece the decode work split, K/V
// source, int8 K/V producer and combine pass read.
//
// A decode unit is (batch, KV head, head block, KV split): the query heads of one KV group are
// the rows of the unit (GQA heads batched into the cube's M dimension; forward rows = heads),
// and the batch's valid KV window is cut into kvSplits chunks of whole key blocks that
// different cores compute; a combine pass merges them (split_kv_combine.h).
#pragma once
#include <cstdint>
#include "../forward/forward_params.h"

namespace AttentionCore {

// Most tensors of a per-batch K/V tensor list (spec: B <= 256 in that form).
constexpr uint32_t MAX_KV_LIST = 256;

// K/V ring producer (kv_ring.h): chunks of cache rows that wait in UB for their conversion, Nz
// chunks that wait for their ring write (at most; DecodeParams::ringInCopies / ringOutCopies);
// a chunk holds at most one key block's rows. The lean set is what the producer's three stages
// hold in the steady state with one chunk per tensor and block (a block's K and V read, the
// previous block's converted): it leaves the forward stage the UB of many rows per core.
constexpr uint32_t KV_RING_IN_COPIES = 4;
constexpr uint32_t KV_RING_OUT_COPIES = 4;
constexpr uint32_t KV_RING_LEAN_IN_COPIES = 3;
constexpr uint32_t KV_RING_LEAN_OUT_COPIES = 2;
constexpr uint32_t KV_RING_MAX_CHUNK_ROWS = 128;
// By tensor (DecodeParams::ringByTensor): a whole key block per chunk, two in copies and two out
// copies, or one out copy where two leave the stage too little UB (G = 64 at D = 128).
constexpr uint32_t KV_RING_TENSOR_COPIES = 2;

// The int8 x int8 decode core (int8_digit_layout.h, int8_digits.h): planned by the host where
// DecodeProblem::int8Digits asks for it and the shape qualifies; enabled 0 leaves the cast ring.
struct Int8DigitParams {
    uint32_t enabled;
    uint32_t rowsPad;  // AlignUp(2 G, 16): a unit's hi and lo digit rows as the cube's M
    // The ring's producer as the copied (16-bit) ring of headDim / 2 columns: its chunk and copies.
    uint32_t ringChunkElems;
    uint32_t ringInCopies;
    uint32_t ringOutCopies;
    uint32_t ringByTensor;
    uint64_t queryItemBytes;  // Int8DigitQueryItemBytes
    uint64_t queryOffset;     // core c's query digits at queryOffset + c * queryCoreBytes
    uint64_t queryCoreBytes;
    uint64_t slotOffset;  // core c's S / O / P slots at slotOffset + c * slotCoreBytes
    uint64_t slotCoreBytes;
    uint64_t ringOffset;  // core c's int8 ring at ringOffset + c * ringCoreBytes
    uint64_t ringCoreBytes;
    uint64_t end;  // the workspace this plan needs
};

struct DecodeParams {
    // KV window. kvSplits chunks of kvChunk keys (a multiple of 16; of blockKv for int8
    // K/V) per (batch, KV head).
    uint32_t kvSplits;
    uint32_t kvChunk;

    // Paged KV cache: token t of batch b is row t % blockSize of cache block
    // blockTable[b * maxBlocks + t / blockSize]; the block starts at block * pageStride and the
    // KV head at kvHead * pageHeadStride (row pitch ForwardParams::kvStrideS).
    uint32_t paged;
    uint32_t blockSize;
    uint32_t maxBlocks;
    uint32_t cacheBlocks;  // blocknum of the cache (fills the padding before pageStride)
    uint64_t pageStride;
    uint64_t pageHeadStride;

    // Tensor list of B batch-1 tensors (per-batch S): the kernel entry runs the core once per
    // batch with that batch's tensors (the plan is for batch 1), setting seqKv = kvListSeq[b]
    // and, for BNSD, kvStrideN = kvListSeq[b] * headDim.
    uint32_t kvListBatches;  // 0: one tensor holds every batch
    uint32_t kvListBnsd;
    uint32_t kvListSeq[MAX_KV_LIST];

    // INT8 output: y = out * quantScale2 + quantOffset2 (fp32 or bf16 parameters, per tensor or per
    // channel n * D + d), through fp16 to int8. It is written by the combine pass, so every
    // unit stores its partial (also with one split); headDimAlign is then a multiple of 32.
    uint32_t quantOut;
    uint32_t quantPerChannel;
    uint32_t hasQuantOffset;
    uint32_t quantParamsBf16;  // quantScale2/quantOffset2 in BFLOAT16 (else FLOAT32)

    // K/V through the ring (kv_ring.h): the vector cores copy (int8: cast) each key block's K
    // and V into a per-core ring of ringSlots (K, V) slot pairs at ringOffset + core *
    // ringCoreBytes (a slot holds blockKv rows of headDimAlign elements in the cube's Nz order),
    // ringAhead blocks ahead of their softmax, in chunks of ringChunkElems cache elements (whole
    // rows; UB left by the stage), ringInCopies / ringOutCopies chunks in UB.
    // INT8 key/value (kv_antiquant.h, always through the ring), dequantised inside the kernel
    // with the scale and offset folded out of the cache: the cube of core c reads Q * scale_k
    // from its own region at antiQueryOffset + c * antiQueryCoreBytes (the query's element
    // offsets from the core's first batch on: no barrier between the cores, kv_antiquant.h)
    // against K cast to the query dtype, and
    // the vector cores map each unit's output rows to (O + offset_v) * scale_v before
    // normalising them.
    uint32_t antiquant;
    uint32_t antiPerChannel;
    uint32_t ring;
    uint32_t ringSlots;
    uint32_t ringAhead;
    uint32_t ringStartExtra;  // blocks in the ring before the first softmax: ringAhead + this
    uint32_t ringChunkElems;
    uint32_t ringInCopies;
    uint32_t ringOutCopies;
    // 0: each vector core reads, converts and writes its half of a block's K rows and the same
    // V rows; 1: vector core 0 the block's K rows, vector core 1 its V rows (one read per core
    // and block where a chunk holds the block: one DMA start less on the cores' MTE2).
    uint32_t ringByTensor;
    // The cube loads a ring block's K and V slots with one copy into one of kvPairCopies L1
    // pairs (forward_cube.h; 0: K and V apart), where L1 holds WS_SLOTS pairs (lazy P.V).
    uint32_t kvPairCopies;
    // Per-channel int8 antiquant: every KV head's value scale and offset rows stay in UB from
    // the start (kv_antiquant.h) when they fit ANTI_TABLE_MAX_BYTES (0: loaded per unit).
    uint32_t antiTableHeads;
    uint64_t antiQueryOffset;
    uint64_t antiQueryCoreBytes;
    uint64_t ringOffset;
    uint64_t ringCoreBytes;

    // Combine pass (kvSplits > 1 or quantOut): per (batch, query head, split) a partial output row
    // (fp32, headDimAlign) and its running max and sum, in the workspace after the core slots.
    uint64_t wsPartialOffset;                     // bytes from the user workspace start
    uint64_t combineRows;                         // batch * numHeads
    uint64_t combineRowStart[MAX_CORES * 2 + 1];  // vector core v combines rows [start[v], start[v+1])

    Int8DigitParams digits;
};

struct DecodeTiling {
    ForwardParams params;
    DecodePseParams score;
    DecodeMaskParams mask;
    DecodeParams decode;
};

}  // namespace AttentionCore
