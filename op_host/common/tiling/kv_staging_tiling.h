// Host planning of the forward core's K/V staging and K/V cache: K and V in the cube's Nz order
// in the workspace (ForwardParams::kvNz, kvNzPairs, kvNzOwnRows; kv_nz.h), the tiles of the
// cube's L1 K/V cache (kvCacheTiles; kv_tile_cache.h) and the scale folded into the staged K.
// Called by the forward planners (forward_tiling.h PlanForward, PlanVarLenForward) after their
// work split.
#pragma once
#include <cstdint>
#include <vector>

#include "../../../op_kernel/attention_core/forward/forward_params.h"

namespace fa_host {

// K/V staged in Nz order (ForwardParams::kvNz, kv_nz.h) where key rows are loaded several
// times: seqRows rows per (KV head, batch) of `batches` (TND: every token, one batch). Call
// after FinishForwardGeometry and the work split; the region follows the per-core slots. With
// lazy P.V and room in L1 (l1Bytes) the cube loads K and V in pairs (ForwardParams::kvNzPairs).
// stageV false: only K is staged (AttentionCore::KV_NZ_K_ONLY), the cube converts V's rows itself.
constexpr uint64_t KV_NZ_MAX_BYTES = 1ull << 30;
// Up to this head dim the forward planners stage only K (AttentionCore::KV_NZ_K_ONLY).
constexpr uint32_t KV_NZ_K_ONLY_MAX_HEAD_DIM = 64;
void PlanKvNz(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t seqRows, uint32_t batches,
              uint64_t l1Bytes, bool stageV = true);
// The cube's K/V cache (ForwardParams::kvCacheTiles): as many K and V tiles as L1 (l1Bytes)
// holds, up to KV_CACHE_MAX_TILES; call after PlanKvNz. oneCopy: where one copy of Q and P
// (l1Bufs 1) leaves room for more tiles, take it.
// unstaged: also where nothing is staged (kvNz 0): the cube loads K and V from the caller's rows
// (Nd2Nz) into the same tiles. oneP: where L1 holds no extra K tile (kvCacheKeyTiles) beside two
// copies of Q and P but does beside one P copy, take that (ForwardParams::kvCacheOneP).
void PlanKvCache(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t l1Bytes, bool oneCopy = false,
                 bool unstaged = false, bool oneP = false);
// Only V staged (ForwardParams::kvNz KV_NZ_V_ONLY, in place of both) where the K/V cache leaves each key row loaded
// at most KV_NZ_VALUE_ONLY_MAX_LOADS times: K then loads from the caller's rows (Nd2Nz on the
// cube's MTE2) and the staging pass, which every core waits for, is half as long. `headRuns`:
// the (batch, query head) pairs with units; `keyBlocks`: key blocks over all units. Not under a
// mask or band (masked), nor where the scale rides on the staged K; call after PlanKvCache.
constexpr double KV_NZ_VALUE_ONLY_MAX_LOADS = 4.0;
void PlanKvNzValueOnly(AttentionCore::ForwardParams &p, uint64_t headRuns, uint64_t keyBlocks, bool masked,
                       bool scaleInKey);
// K/V staged per core (ForwardParams::kvNzOwnRows, kv_nz.h): only every core's first region
// before the barrier, each core's other regions by its own vector cores during the main loop.
// Where every region's units are one run of the unit order and no unit is split (units in
// (batch, head, q-block) order, no split-KV tail), some core has a region of its own, and UB
// (ubBytes, the API's reserve taken off) holds three staging chunks of 16 rows or more beside the
// vector stage's buffers. Call after the work split and PlanKvNz.
void PlanKvNzOwn(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes);
// The same over a TND token axis (kvNzBatches 1, ForwardParams::kvNzOwnPerBatch): a region per
// (batch, KV head), the batch's rows of the head's matrix; the units (batch, head, q-block) with
// seqQ / seqKv per batch. Where every batch has queries and keys and all but the last a multiple
// of 16 keys (a key block's pad rows then stay in its batch's region or the zero rows).
void PlanKvNzOwnTnd(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes,
                    const std::vector<int64_t> &seqQ, const std::vector<int64_t> &seqKv);
// Larger chunks of the K/V staging pass (ForwardParams::kvNzChunk) where it stages every region
// before the barrier and moves at least KV_NZ_LONG_PASS_BYTES per vector core: the Nz copies
// then go into the S buffers where those hold more than tmp (forward_layout.h KvStagingBytes),
// and each chunk's DMA start (~198 cycles on its load and again on its store) is paid for twice
// the rows (D = 128 with two 48-row S buffers: 96-row chunks, not 48). Modelled B2 N16 S2K
// causal 169.2 -> 168.0 us (the pass ~14 -> ~11 us). Shorter passes
// keep the smaller chunks: under the bandwidth ledger their larger HBM bursts shift the phases
// the L2 serves first come, first served (B1 N1 S8K causal 88.5 -> 89.3 us with them). Call
// last (after PlanKvNzOwn and PlanKvNzValueOnly).
constexpr uint64_t KV_NZ_LONG_PASS_BYTES = 256 * 1024;
void PlanKvNzChunk(AttentionCore::ForwardParams &p, uint32_t dtypeBytes);
// K/V staged during each core's first unit (ForwardParams::kvNzLate, kv_nz.h LateStart): the
// cubes run their first units from the caller's rows while the vector cores stage every region
// a few chunks per softmax block, in place of the pass before the main loop, where that pass is
// long against a first unit. Where K and V load
// in pairs (kvNzPairs), not per core (kvNzOwnRows), every unit sees all keys (`dense`: no mask,
// band or query lengths) and a first unit streams at least KV_NZ_LATE_MIN_BLOCKS key blocks, and
// UB holds three chunks of 16 rows or more; the scale then stays off K (ScaleInKeyExact). Call
// after PlanKvNzOwn.
constexpr uint64_t KV_NZ_LATE_MIN_BLOCKS = 16;
// ... and where a vector core's share of the pass is at least one row per this many keys of a
// first unit (kv_staging_tiling.cpp PlanKvNzLate).
constexpr uint64_t KV_NZ_LATE_KEYS_PER_ROW = 2;
void PlanKvNzLate(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes, bool dense);

// Rows per chunk of the vector cores' staging in the UB their softmax leaves free (0: none fits).
uint32_t KvNzChunkRows(const AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes);
// Up to this head dim a forward plane takes one Q and P copy for another K/V cache tile pair
// (PlanKvCache's oneCopy): PFA under a mask, varlen always. There the forward is bound by L2 well
// above its critical path, and the tile pair's L2 saving is worth the unit starts it slows.
constexpr uint32_t KV_CACHE_ONE_COPY_MAX_HEAD_DIM = 64;
// Up to this head dim a band's diagonal staircase stays off the S/P hand-off in pieces
// (ForwardParams::pPieceFractals, sPieceRows, pStoreFractals): the S/P hand-off per FLOP is
// twice D = 128's, and the plane is bound by L2 above its critical path.
constexpr uint32_t STAIR_PIECES_MAX_HEAD_DIM = 64;
// The pieces there (measured in PlanKvGeometry and PlanVarLenForward): PFA loads P in pieces
// of two fractal rows, S in 16-row pieces and stores P per fractal row; varlen, whose cube
// MTE2 is close to binding, loads P in pieces of four fractal rows only.
constexpr uint32_t STAIR_P_PIECE_FRACTALS = 2;
constexpr uint32_t STAIR_S_PIECE_ROWS = 16;
constexpr uint32_t STAIR_P_STORE_FRACTALS = 1;
constexpr uint32_t VARLEN_STAIR_P_PIECE_FRACTALS = 4;
// Above it, up to D = 128, a band's S alone goes in pieces of 32 rows (the vector cores load
// each with its own columns, the cube writes a staircase chunk's first 16 rows apart): the
// S of a diagonal tile's staircase stays off L2 where the plane is bound by L2.
constexpr uint32_t BAND_S_PIECES_MAX_HEAD_DIM = 128;
constexpr uint32_t BAND_S_PIECE_ROWS = 32;
// fp16 final sums where nothing is staged (ForwardParams::vAbsMaxElems, vAbsMaxChunk;
// v_abs_max.h): every element of the caller's V, `batches` x `tokens` rows of each KV head, read
// once by the vector cores during the main loop (a chunk of up to V_ABS_MAX_CHUNK elements, in
// the UB the vector stage leaves free, after each softmax block) for the largest |V|, which
// bounds each final sum (forward_vector_softmax.h Fp16SumSafe); the vector cores meet a few
// blocks after their last chunk, and the units that end before keep fp32 sums. Up to
// V_ABS_MAX_MAX_HEAD_DIM, fp16, lazy P.V: there such a plane is bound by L2 above its critical
// path, and V read once more (2 B per element) costs less than the fp32 final sums it halves
// (4 B per output element each way). Modelled causal B1 N16 S4K D64 253.0 -> 252.1 us, B1 N8
// S4K D64 246.2 -> 245.6, B4 N8 S2K D64 245.9 -> 245.0 (bandwidth ledger 278.2 -> 276.8,
// 258.4 -> 258.2, 255.7 -> 254.2). Before the barrier ahead of the main loop (the mask
// summary's) the pass delays every cube: causal B1 N16 S4K 251.8 us but 281.7 under the
// ledger. Where K alone is staged only with `kOnlyPass` (varlen TND, the scale on K, staged
// before a SyncAll: forward_vector.h KOnlyPassFree): there the pass's meeting takes the staging's
// flag id. Modelled TND [100 ... 2200] D64 causal 132.35 -> 131.57 us (L2 912.5 -> 907.0 MB, its
// critical path 127.2 -> 129.5 onto the L2 floor; bandwidth ledger 148.0 -> 148.2). Not on PFA's
// K-only planes (B1 N32 S1K D64 66.1 -> 66.7, its vector cores bind; before the staging's
// barrier 66.5; the TND row while its critical path sat on its L2 floor, before the short
// q-blocks came first: 134.1 -> 135.3). Call last.
constexpr uint32_t V_ABS_MAX_MAX_HEAD_DIM = 64;
constexpr uint64_t V_ABS_MAX_CHUNK = 8192;
void PlanVAbsMax(AttentionCore::ForwardParams &p, bool fp16, uint32_t batches, uint64_t tokens, uint64_t ubBytes,
                 bool kOnlyPass = false);
// Drops a planned staging (ForwardParams::kvNz and its region): nothing staged.
void DropKvNz(AttentionCore::ForwardParams &p);
// Whether the K/V staging may multiply K by the scale (ScaleParams / PseParams::scaleInKey)
// because that is exact: fp16, K staged (call after PlanKvNz), |scale| a power of two in
// [2^-14, 1]; not with late staging (the first units read the caller's K).
bool ScaleInKeyExact(float scale, bool fp16, const AttentionCore::ForwardParams &p);
// The key rows staged before the main loop (ForwardParams::kvNzStageKeys), after PlanKvCache and
// the unit ranges. Without a mask a core's units of one head run its key blocks in order and the
// next unit takes the last kvCacheTiles of them from the cube's L1 cache (policies.h
// PlanKvReuse), so the cores load those blocks from L2 only a few times while staging them moves
// their bytes through L2 twice more (read, written): they are not staged and the cube loads them
// from the caller's rows (Nd2Nz). Taken where K and V are staged apart before the loop (no
// per-core, late or paired staging), every core's units are of one (batch, KV head) and such a
// block is loaded at most KV_NZ_UNSTAGED_MAX_LOADS times (every other unit of a core's run: the
// cache moves on in between). Modelled B1 N8 S1K x 4K (3 loads) 79.0 -> 78.1 us (L2 539.3 ->
// 532.9 MB; bandwidth ledger 91.6 -> 90.7). With more loads the Nd2Nz copies cost more than the
// bytes: B1 N8 S4K (12) 288.3 -> 287.4 but ledger 319.4 -> 321.1, B1 N1 S8K (24) 146.8 -> 146.7
// but ledger 155.5 -> 156.5, B1 N16/4 S2K (24) 144.0 -> 147.8; cores with units of two heads:
// B2 N8 S2K 148.1 -> 150.6.
// wideRows: the cube loads the unstaged blocks as wide-row tiles (ForwardParams::kvWideRows: 16
// Nd2Nz rows per block instead of blockKv, two blocks per DMA start where both miss its K/V
// cache), so only the first 1 / KV_NZ_WIDE_STAGED_DIV of a head's blocks are staged (at most the
// ones above): modelled B1 N8 S1K x 4K 78.1 -> 76.0 us (L2 532.9 -> 516.4 MB, critical path
// 75.6 -> 74.0; bandwidth ledger 90.7 -> 84.5). Staged blocks of 32: 16 / 12 / 10 / 8 / 6 / 4 /
// 2: 76.62 / 76.37 / 76.07 / 75.96 / 76.39 / 76.66 / 76.66 us; below 8 the cube's MTE2 binds (it
// reads each unstaged block's lines from HBM first, at its own HBM rate), above it L2.
constexpr uint64_t KV_NZ_UNSTAGED_MAX_LOADS = 4;
constexpr uint64_t KV_NZ_WIDE_STAGED_DIV = 4;
void PlanKvNzStageKeys(AttentionCore::ForwardParams &p, bool dense, bool wideRows);
// With wide-row tiles (after PlanKvNzStageKeys and kvWideRows): all cores of a head start their
// first unit together, and whichever first reads an unstaged block's lines pays their HBM read
// (the cube's MTE2 at its own HBM rate), a third of them each; the head's core with the fewest
// rows ends ~4 us early. That core's first unit starts at the middle of the unstaged blocks
// instead (ForwardParams::kvRotateBlock / kvRotateCores), so it reads the later half from HBM
// while the others run the staged blocks and then the earlier half. Modelled B1 N8 S1K x 4K
// 75.96 -> 75.55 us (bandwidth ledger 84.49 -> 84.16); start blocks 19 / 20 / 21 / 22 of 32:
// 75.92 / 75.55 / 75.55 / 75.77 us (ledger 85.49 / 84.16 / 84.76 / -), and with one block less
// staged 75.66 / 75.40 / 75.36 (ledger 84.81 / 84.59 / 84.56).
void PlanKvRotation(AttentionCore::ForwardParams &p);

}  // namespace fa_host
