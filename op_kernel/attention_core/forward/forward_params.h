// Parameters of the shared forward attention core (prefill, varlen and decode operators).
// A plain POD struct: the host tiling fills it, the kernel reads it from the tiling buffer, so
// it holds only fixed-width fields and no pointers. A forward tiling is ForwardParams
// (`params`: shapes, layout strides, blocks, work split, workspace) next to the Params of its
// variant's element-wise policies (`score`, `mask`, `softmax`; policy_params.h).
#pragma once
#include <cstdint>
#include "policy_params.h"

#ifndef __aicore__  // host builds (tiling) include this header without the kernel headers
#define __aicore__
#endif

namespace AttentionCore {

// Most AI cores a tiling can address (Atlas A2/A3 have at most 25 per die).
constexpr uint32_t MAX_CORES = 64;

// Rows of the score block that the softmax masks out get this finite value instead of -inf
// so that "max - max" never produces NaN; a row whose running max is still <= MASKED_ROW_MAX
// at the end had no visible key and outputs zeros.
constexpr float MASKED_SCORE = -1.0e30f;
constexpr float MASKED_ROW_MAX = -1.0e29f;
// softmax_max / softmax_sum of a row without any visible key (the official operators' values).
constexpr float INVALID_ROW_STAT_MAX = -3.4028234663852886e38f;
constexpr float INVALID_ROW_STAT_SUM = 3.4028234663852886e38f;

// Workspace slots of the cube <-> vector hand-off (S, P and O of one key block each): the cube
// computes S up to WS_SLOTS - 1 blocks ahead of the P.V it waits for, so the vector cores'
// round trip of a block overlaps the cube's work on the next ones. Three blocks ahead, because
// the cube's S chain after a P arrives (P and V loads, then the K load, Q.K^T, Fixpipe: ~1.6 µs
// modelled at D = 128) is longer than two vector blocks (docs/performance.md).
constexpr uint32_t WS_SLOTS = 4;
constexpr uint32_t PV_PIECE_COLS = 32;  // ForwardParams::pvFirstCols
constexpr uint32_t PV_PIECE_FROM_CHUNK = 2;
constexpr uint32_t KV_NZ_BOTH = 1, KV_NZ_K_ONLY = 2, KV_NZ_V_ONLY = 3;  // ForwardParams::kvNz modes
constexpr uint32_t UNITS_FOLDED = 1;                                    // ForwardParams::foldQBlocks bits
constexpr uint32_t UNITS_HEADS_INNER = 2;
constexpr uint32_t UNITS_TABLE = 4;        // units in the order of a table (TND; PFA causal GQA)
constexpr uint32_t UNITS_PAIRED = 8;       // with bits 0 and 1: (batch, folded pair, head, member)
constexpr uint32_t UNITS_TAIL_FIRST = 16;  // the short q-block (seqQ % blockQ rows) is a head's first
constexpr uint32_t UNITS_SHORT_LAST = 32;  // (batch, head, q-block) but every head's last q-block after all others
// O slots: per block slot one for a lazy P.V write-out before the block and one for the final
// sum of a unit ending in that block (units stream through the cores, so up to WS_SLOTS units'
// final sums are in flight).
constexpr uint32_t O_SLOTS = 2 * WS_SLOTS;
// Lazy P.V (ForwardParams::lazyO): the cube accumulates P.V over key blocks in L0C and writes it
// out only when a vector core moved its rows' softmax reference max by more than
// LAZY_RESCALE_TAU (so P = exp(s - ref) <= 256 stays well inside fp16/bf16), and at the end of
// the unit. The decisions travel through control words in the workspace, one 64-byte line each
// (scalar GM accesses with DataCacheCleanAndInvalid): per slot one "rescaled" word per vector
// core and the cube's "flushed" word.
constexpr float LAZY_RESCALE_TAU = 5.545177444479562f;  // ln(256)
constexpr uint32_t CTRL_LINE_WORDS = 16;                // int32 words per 64-byte line
constexpr uint32_t CTRL_LINES = WS_SLOTS * 3;
// fp16 final sums (forward_cube_pv.h): a unit's final P.V sum goes out in fp16 only where
// l * max|V| stays below this (l the row's softmax sum against its reference, P <= 256 in fp16;
// |sum_j p_j v_j| <= l max|V|): half of fp16's largest finite value, so that the fp16 rounding
// of P and the fp32 accumulation stay far inside the range.
constexpr float FP16_SUM_LIMIT = 32768.0f;
// After the control lines, a fractal of zeros (each vector core writes its half before its
// first P), which the cube copies into L1 once and from there into the P rows of L0A that a
// diagonal tile's P leaves out (forward_cube_pv.h AccumulatePV).
constexpr uint32_t ZERO_FRACTAL_BYTES = 512;

// The core's compile-time modes travel in the tiling key next to the operator's dtype key
// (0-2): lazy P.V (ForwardParams::lazyO), the PFA mask summary (MaskBandParams::maskSummary)
// and K/V staged in Nz order (ForwardParams::kvNz, 16-bit types only). The kernel entry
// instantiates the core once per key, so every stage reads as one straight path for its mode
// instead of branching on it at run time.
// The host computes the key with ForwardTilingKey; each entry tests literal keys that its
// *_tiling_data.h defines as macros, because CANN's kernel compiler collects an entry's keys by
// matching `g_tilingKey == (<integer>` in the preprocessed source (TILING_KEY_IS(k) is
// `(g_tilingKey == (k))`) and rejects a constexpr name or a call there.
constexpr uint64_t TILING_KEY_LAZY_PV = 10;
constexpr uint64_t TILING_KEY_MASK_SUMMARY = 100;
constexpr uint64_t TILING_KEY_KV_NZ = 1000;
__aicore__ constexpr uint64_t ForwardTilingKey(uint64_t dtypeKey, bool lazyPv, bool maskSummary = false,
                                               bool kvNz = false)
{
    return dtypeKey + (lazyPv ? TILING_KEY_LAZY_PV : 0) + (maskSummary ? TILING_KEY_MASK_SUMMARY : 0) +
           (kvNz ? TILING_KEY_KV_NZ : 0);
}

// The zero rows after a staged tensor's rows (kv_nz.h): kvNzRows - kvNzSeq, 16 to 31 (the host
// plans AlignUp(kvNzSeq, 16) + 16 rows); per-core staging stores them from a UB source of this
// many rows.
constexpr uint32_t KV_NZ_ZERO_ROWS = 31;

struct ForwardParams {
    // Problem shape. groupSize = numHeads / numKvHeads (GQA).
    uint32_t batch;
    uint32_t numHeads;
    uint32_t numKvHeads;
    uint32_t groupSize;
    uint32_t seqQ;
    uint32_t seqKv;
    uint32_t headDim;       // D of Q, K and V
    uint32_t headDimAlign;  // D rounded up to 16: row pitch of O slots and of UB rows

    // Element strides (batch, head, token) of Q, K/V and the output: they encode the layout
    // (BSH/BSND: token pitch N*D; BNSD: token pitch D) so the kernel has one addressing rule.
    uint64_t qStrideB, qStrideN, qStrideS;
    uint64_t kvStrideB, kvStrideN, kvStrideS;
    uint64_t oStrideB, oStrideN, oStrideS;

    // Query lengths per batch from an int64 GM tensor (count 1 = one value for all batches).
    uint32_t hasActualSeqLengths;
    uint32_t actualSeqLengthsCount;

    // Block geometry chosen by the tiling (docs/attention_core.md, "block sizes").
    uint32_t blockQ;          // query rows per block (two vector cores take half each)
    uint32_t blockKv;         // keys per block: 128, or 64 where 128 does not fit L1 (fp32, D > 464)
    uint32_t rowsPerVec;      // blockQ / 2
    uint32_t dChunk;          // head-dim columns per cube pass (L0 budget), multiple of 16
    uint32_t qBlocksPerHead;  // ceil(seqQ / blockQ)
    uint32_t usedCores;       // blockDim
    // Cube double buffering (ChooseCubeBuffers): 2 = the K, V and P tiles in L1 (l1Bufs) and the
    // L0A/L0B/L0C tiles (l0Bufs) ping-pong so that loads, Mmad and Fixpipe of consecutive
    // operations overlap; 1 where two copies do not fit. With the K/V cache (kvCacheTiles) l1Bufs
    // counts the Q and P tiles only (1: one copy each, for a further cache tile pair).
    uint32_t l1Bufs;
    uint32_t l0Bufs;
    uint32_t lazyO;     // 1: lazy P.V (above; the tiling key's mode); needs headDim <= dChunk and L0C for S + acc
    uint32_t vecSBufs;  // S buffers per vector core: 2 loads the next sub-block's S during this one's softmax
    // Lazy P.V: Q.K^T runs in row chunks of sChunk rows (a multiple of 16; L0C holds the
    // blockQ x D accumulator next to two S chunks), so q-blocks of up to 192 rows (384 at
    // D = 64, P.V in two row parts above 240 rows: forward_layout.h PvPartRows) share each K/V
    // load. A vector core takes its rowsPerVec rows of a key block in sub-blocks of vecRows rows
    // (a multiple of 8; UB holds the O accumulator for all of them, the S/P buffers for one).
    uint32_t sChunk;
    uint32_t vecRows;

    // Work split: the units (batch, head, q-block) in that order, cut into contiguous ranges
    // of about equal cost; core c takes units [coreUnitStart[c], coreUnitStart[c + 1]). With
    // foldQBlocks bit 0 a head's q-blocks come as 0, last, 1, last - 1, ... (policies.h
    // FoldedQBlock), where the host's plan balances better so (a causal mask's light and heavy
    // q-blocks); bit 1 (UNITS_HEADS_INNER) orders the units (batch, q-block, head), so a core
    // takes the heads of a q-block in a row (a mask plane the heads share: mask_band.h
    // CLEAR_TILES); bit 2 (UNITS_TABLE: TND, and PFA's causal GQA) makes position i of the
    // ranges unit table[i] of a uint32 table the operator passes next to the tiling
    // (varlen_policies.h, policies.h WorkSplit<SplitQBlocks>);
    // bit 3 (UNITS_PAIRED, with bits 0 and 1) orders them (batch, folded pair of q-blocks, head,
    // member); bit 4 (UNITS_TAIL_FIRST) makes the short q-block a head's first; bit 5
    // (UNITS_SHORT_LAST, alone) takes every head's last q-block out of the (batch, head,
    // q-block) order and lists them after all others, (batch, head), so that a split-KV tail
    // (tailSplits) cuts the short q-blocks, which cost nearly a whole unit each (a unit's cost is
    // mostly its K/V loads), and not whole ones.
    uint32_t foldQBlocks;
    // With K/V pairs (kvNzPairs): 1 where a core's first P.V loads the next S's pair ahead of
    // P (forward_cube_pv.h AccumulatePV; the host sets it under a band). Every later pair
    // load goes behind a P load, two pairs ahead of the S stream.
    uint32_t kvPairFirst;
    uint64_t unitCount;
    uint64_t coreUnitStart[MAX_CORES + 1];

    // Workspace per core (bytes), laid out as WS_SLOTS S slots (fp32 blockQ x blockKv),
    // WS_SLOTS P slots (input dtype, same shape), O_SLOTS O slots (fp32 blockQ x
    // headDimAlign; slot WS_SLOTS + k takes the final lazy P.V sum of a unit whose last block
    // used slot k) and CTRL_LINES control lines.
    uint64_t wsBytesPerCore;
    uint64_t wsSlotS;  // bytes of one S slot
    uint64_t wsSlotP;
    uint64_t wsSlotO;

    // Softmax max/sum (varlen) are written as 8 replicated fp32 per (row, head) at
    // (token base + row) * statsStrideS + head * statsStrideN when hasSoftmaxStats.
    uint32_t hasSoftmaxStats;
    // K/V staged per core (kv_nz.h, with kvNz): rows per chunk of a core's own staging, 0: off
    // (every region staged before the main loop). kvNzOwnPerBatch 1: over one token axis (TND,
    // kvNzBatches 1) a region is a batch's rows [kvBase, kvBase + seqKv) of its KV head's matrix.
    uint32_t kvNzOwnRows;
    uint32_t kvNzOwnPerBatch;
    uint64_t statsStrideS, statsStrideN;

    // K and V staged once in Nz order (kv_nz.h; the tiling key's mode; 16-bit types, D a
    // multiple of 16, set by the host where key blocks are loaded several times): per (KV head,
    // batch, tensor) kvNzRows rows (kvNzSeq of them from the tensor: seqKv, or every token of
    // a TND tensor with kvNzBatches 1), converted in chunks of kvNzChunk rows, at byte
    // kvNzOffset of the workspace. With lazy P.V in 64-key blocks and room in L1 the cube loads
    // a key block's K and V rows with one copy into one of kvNzPairs (WS_SLOTS) pair copies, 0:
    // K and V apart. kvNz is KV_NZ_BOTH, or KV_NZ_K_ONLY / KV_NZ_V_ONLY where one tensor is
    // staged (the other's region stays unused and the cube loads its rows with Nd2Nz; never with
    // pairs; with only V staged every S reads the caller's K, so all S blocks ahead of the main
    // loop go out before the staging's barrier: forward_cube.h Run).
    uint32_t kvNz;
    uint32_t kvNzChunk;
    uint32_t kvNzRows;
    uint32_t kvNzSeq;
    uint32_t kvNzBatches;
    uint32_t kvNzPairs;
    uint64_t kvNzOffset;

    // Split-KV tail (PFA's WorkSplit<SplitQBlocks>, tailSplits > 1; TailItem): where whole units
    // would leave cores idle at the end, every core takes tailPerCore whole units and the last
    // units (from tailFirst = tailPerCore * usedCores on) are cut into tailSplits key ranges of
    // tailPieceBlocks key blocks each, tailPieces pieces in all; core c < tailPieces /
    // tailCorePieces takes pieces c * tailCorePieces, ... after its whole units. A piece stores
    // its unnormalised rows and statistics as partials (split_kv_combine.h) at byte
    // wsPartialOffset of the workspace, and a combine pass merges them into the output.
    uint32_t tailSplits;
    uint32_t tailPieceBlocks;
    uint32_t tailPerCore;
    uint32_t tailPieces;
    uint32_t tailCorePieces;
    // K/V tiles the cube keeps in L1 as a cache (forward_cube.h; lazy P.V with K and V apart),
    // each of K and V, 0: l1Bufs copies. A unit that follows one of the same (batch, KV head)
    // whose keys its own start with takes the full blocks that unit ran last first, from the
    // cache (policies.h PlanKvReuse).
    uint32_t kvCacheTiles;
    // K tiles of that cache: kvCacheTiles, or one more where L1 has room for a K tile but not
    // for another pair. A unit after one of its head then finds that many of its first K blocks
    // cached (PlanKvReuse runs them first) and its V blocks but the last of those.
    uint32_t kvCacheKeyTiles;
    // 1: one P copy beside two Q copies (l1Bufs 2), which left L1 for that extra K tile; the next
    // unit's Q still loads ahead, while P's load waits for the MTE1 read of the one before.
    uint32_t kvCacheOneP;
    // K/V staged during each core's first unit (kv_nz.h LateStart; with kvNz and K/V pairs): rows
    // per chunk, 0: off (staged before the main loop).
    uint32_t kvNzLate;
    uint64_t tailFirst;
    uint64_t wsPartialOffset;
    // Q staged per core (kv_nz.h QStart; K/V staged in pairs): the vector cores of core c write the
    // Q block of each of its units from position qNzFirst on (of its qNzUnits positions at most)
    // in Nz order to slot c * qNzUnits + position (blockQ rows per column block) at byte
    // qNzOffset of the workspace, and the cube loads those with one plain copy from L2 instead
    // of an Nd2Nz copy from HBM. 0: off. Without late staging (K/V staged before the loop) the
    // vector cores write the copies in chunks of qNzChunk rows from their first unit on.
    uint64_t qNzOffset;
    uint32_t qNzUnits;
    uint32_t qNzFirst;
    uint32_t qNzChunk;
    // With K/V staged before the main loop (no per-core or late staging, no key scale folded in):
    // the key rows staged, a multiple of blockKv; the cube loads key blocks from there on from
    // the caller's rows (Nd2Nz). 0: all of them (kvNzSeq).
    uint32_t kvNzStageKeys;
    // Lazy P.V under a band, a diagonal tile's staircase. pPieceFractals != 0: the vector cores
    // hand over each sub-block's P only up to the columns its 16-row fractals see (policies.h
    // SubBlockPCols), the cube zeroes the rest of each fractal row in L0A and loads P in pieces
    // of pPieceFractals fractal rows, each with the columns its last row sees (a piece of all
    // rows: one load); 0: P of the columns the unit's last row sees, for every row. sPieceRows
    // != 0: the vector cores load S in pieces of that many rows, each with its own columns; 0:
    // one load, the columns of the last row, and the cube writes a staircase S chunk's first 16
    // rows apart with their own columns. pStoreFractals != 0 (with pPieceFractals): the vector
    // cores store a sub-block's P per 16-row fractal row of the unit, each with the columns it
    // sees. Each piece is a DMA start on the loading (storing) core's MTE2 (MTE3).
    uint32_t pPieceFractals;
    uint32_t sPieceRows;
    uint32_t pStoreFractals;
    // fp16 final sums where nothing is staged: the elements of the caller's V tensor (one past
    // the last), which the vector cores read once during the main loop for the largest |V|
    // (v_abs_max.h, forward_vector.h VLoop), vAbsMaxChunk of them after each softmax block;
    // vAbsMaxElems 0: no such pass.
    uint64_t vAbsMaxElems;
    uint32_t vAbsMaxChunk;
    // With K/V staged before the loop but for the blocks from kvNzStageKeys on, every key block
    // full, no mask and a head's key rows contiguous (16-bit K/V): the cube loads each unstaged
    // block's K and V as wide-row tiles (common/cube_tiles.h CopyWide: 16 Nd2Nz rows of
    // blockKv / 16 keys each; two blocks per DMA start into a K/V cache tile pair where both
    // miss it) and reads them with LoadBtWide / LoadBWide. 0: off; else blockKv / 16.
    uint32_t kvWideRows;
    // Lazy P.V without K/V pairs, a block that is not its unit's last: the head-dim columns of
    // its first Mmad; the rest follow in PV_PIECE_COLS pieces, one before each chunk of the
    // next S from its PV_PIECE_FROM_CHUNK-th on (forward_cube_s.h), which fills the M pipe
    // while Fixpipe drains the S chunks. 0: one Mmad.
    uint32_t pvFirstCols;
    // With wide-row tiles (kvWideRows): the first unit of each core of kvRotateCores (bit c:
    // core c) runs its key blocks from block kvRotateBlock on to the last, then from the first
    // (policies.h PlanFirstRotation), so that core reads those blocks from HBM first while the
    // other cores of its head run the staged ones. 0: off.
    uint32_t kvRotateBlock;
    uint64_t kvRotateCores;
};

// Item `item` of the split-KV tail's unit list (ForwardParams::tailSplits > 1): its unit, and
// its piece + 1 (0: the whole unit). Core c's items are its tailPerCore whole units
// c * tailPerCore, ... and then, for c < tailPieces / tailCorePieces, its tailCorePieces
// pieces; piece k is piece k % tailSplits of unit tailFirst + k / tailSplits.
__aicore__ inline uint32_t TailItem(const ForwardParams &p, uint64_t item, uint64_t &unit)
{
    const uint64_t q = p.tailPerCore;
    const uint64_t per = q + p.tailCorePieces;
    const uint64_t cores = p.tailPieces / p.tailCorePieces;  // the cores with pieces
    // a core without a piece: whole units only
    if (item >= cores * per) {
        unit = item - cores * per + cores * q;
        return 0;
    }
    const uint64_t c = item / per;
    const uint64_t j = item % per;
    if (j < q) {
        unit = c * q + j;
        return 0;
    }
    const uint64_t k = c * p.tailCorePieces + (j - q);
    unit = p.tailFirst + k / p.tailSplits;
    return static_cast<uint32_t>(k) + 1;
}

// The partial rows of each split unit of the split-KV tail: blockQ, or with UNITS_SHORT_LAST the
// short q-block's rows (every split unit is one then), so the combine pass cuts only real rows
// over the vector cores (B2 N8 S2K D256: 512 rows, not 1792 of which 1280 pad).
__aicore__ inline uint32_t TailUnitRows(const ForwardParams &p)
{
    return (p.foldQBlocks & UNITS_SHORT_LAST) != 0 ? p.seqQ - (p.qBlocksPerHead - 1) * p.blockQ : p.blockQ;
}

// The item of piece `k` (TailItem's inverse for pieces).
__aicore__ inline uint64_t TailPieceItem(const ForwardParams &p, uint64_t k)
{
    return k / p.tailCorePieces * (p.tailPerCore + p.tailCorePieces) + p.tailPerCore + k % p.tailCorePieces;
}

// The forward tilings of the variants (the members named after the seams they feed).
struct PrefillTiling {  // PromptFlashAttention
    ForwardParams params;
    ScaleParams score;
    MaskBandParams mask;
};

struct VarLenTiling {  // FlashAttentionVarLenScore, FAG V5's recompute
    ForwardParams params;
    PseParams score;
    SparseMaskParams mask;
    DropoutParams softmax;
};

constexpr uint32_t SUMMARY_ROWS = 16;   // query rows per mask summary mark
constexpr uint32_t SUMMARY_KEYS = 128;  // keys per mask summary mark
constexpr uint32_t SUMMARY_BATCH = 32;  // row groups whose marks go out together

// Mask summary (PFA, one mask plane shared by every (batch, head); mask_band.h,
// MaskBandParams): before the main loop the vector cores mark, per SUMMARY_ROWS query rows x
// SUMMARY_KEYS keys of the plane, whether any byte excludes; a block whose marks are all clear
// then skips its mask load and passes.
// Key columns per pass of the mask summary in `scratch` bytes of UB (marks of a batch of row
// groups, then 16 mask rows per column); 0 when not even one column fits. The host plans with
// the scratch the vector stage passes (its accumulator, rowsPerVec x headDimAlign fp32).
__aicore__ inline uint32_t MaskSummaryChunk(uint32_t scratch, uint32_t cols)
{
    const uint32_t marks = cols * SUMMARY_BATCH;
    const uint32_t chunk = scratch > marks ? (scratch - marks) / (SUMMARY_ROWS * SUMMARY_KEYS) : 0;
    return chunk > cols ? cols : (chunk > 255 ? 255 : chunk);
}

}  // namespace AttentionCore
