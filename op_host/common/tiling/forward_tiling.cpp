#include "forward_tiling.h"
#include "forward_work_split.h"

#include "cost_rates.h"
#include "../../../op_kernel/attention_core/forward/forward_layout.h"
#include "../../../op_kernel/attention_core/variants/split_kv_combine_layout.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>

namespace fa_host {

namespace {

constexpr uint32_t D_CHUNK = 128;  // head-dim columns per cube pass (at most)
// Query rows per vector core (q-block = twice that), largest first. Above 64 only with lazy
// P.V: its q-block shares each K/V load (L0C holds the q-block x D accumulator next to two S
// chunks) and cuts the K/V re-stream per score (docs/performance.md). At D = 128 L0C stops it
// at 192 rows; below, L0A (P of the whole q-block next to two Q chunks of D columns) at 224
// (D = 64) or 240 (D = 16) rows. The steps between them let a head's q-blocks come out even
// over the cores (S8K on 24 cores: 47 q-blocks of 176 rows, two per core, where 43 of 192
// rows leave the busiest cores two 192-row units and five cores one). Above 240 rows P.V runs in
// two row parts (PvPartRows, forward_layout.h) and L0C alone holds the q-block: 384 rows at
// D = 64.
constexpr uint32_t ROWS_PER_VEC[] = {192, 176, 160, 144, 128, 120, 112, 104, 96, 88, 80, 72, 64, 56, 48, 32, 16, 8};
// Above 192 rows only with S chunks of 32 rows or more: 16-row chunks double the cube's
// issue and flags per block (D = 64, 224-row q-blocks in 16-row chunks: the cube's scalar unit
// bound the launch, slower than 192 rows).
constexpr uint32_t LARGE_Q_ROWS = 96;
// PFA's q-blocks above PV_WHOLE_MAX_ROWS rows from this many key blocks per head on (PlanForward).
constexpr uint32_t TWO_PART_MIN_KV_BLOCKS = 16;
constexpr uint32_t LARGE_Q_MIN_S_CHUNK = 32;
// 128 < D <= 256 without a mask or under a band: lazy P.V in 64-key blocks (ChooseWideLazyBlocks).
constexpr uint32_t WIDE_LAZY_MAX_D = 256;
constexpr uint32_t WIDE_LAZY_BLOCK_KV = 64;
// Under a band: vector sub-blocks of at most this many rows (ForwardParams::vecRows). Each
// sub-block's S load, softmax and P store overlap the next one's, which shortens the cube <->
// vector round trip of a block that bounds the causal units (docs/performance.md "Sweep").
// Modelled causal B1 N4 S4K D256 (112-row q-blocks, 56 rows per vector core, the band's pair
// order): one sub-block 196.5 us, 48 rows 181.2, 40 182.7, 32 185.6, 24 191.9, 16 234.1;
// without a band 48 rows modelled slower (B2 N8 S2K D256 322.2 -> 330.3 us).
constexpr uint32_t WIDE_LAZY_BAND_VEC_ROWS = 48;
constexpr uint64_t UB_API_RESERVE = 8 * 1024;  // UB the Ascend C API keeps as scratch
constexpr int64_t TOKEN_CLAMP = int64_t(1) << 40;
constexpr uint64_t MAX_SEARCHED_UNITS = uint64_t(1) << 22;  // beyond: streaming split, no cost array

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

bool L0Fits(const AttentionCore::ForwardCubeL0 &l0, const CoreBudget &budget)
{
    return l0.a <= budget.l0a && l0.b <= budget.l0b && l0.c <= budget.l0c;
}

}  // namespace

uint64_t UsableUb(const CoreBudget &budget) { return budget.ub > UB_API_RESERVE ? budget.ub - UB_API_RESERVE : 0; }

uint64_t VectorUbBytes(uint32_t r, uint32_t v, uint32_t c, uint32_t dp, uint32_t dtypeBytes, uint32_t sBufs, bool stats)
{
    return AttentionCore::ForwardVectorUbLayout(r, v, c, dp, dtypeBytes, sBufs, stats).Total();
}

bool ChooseVecRows(uint32_t r, uint32_t c, uint32_t dp, uint32_t dtypeBytes, uint64_t ub, uint32_t &vecRows,
                   uint32_t &sBufs, bool stats)
{
    // The fewest sub-blocks (at most 64 rows each: the lazy rescale test reduces a sub-block's
    // rows in one 64-lane repeat), two S buffers where they fit. Above PV_WHOLE_MAX_ROWS q-block
    // rows two S buffers before the fewest sub-blocks: with one, the vector cores' S loads no
    // longer overlap their softmax and bound the launch (modelled D = 64 B1 N8 S4K, 352-row
    // q-blocks: three 64-row sub-blocks, one buffer 284.9 us; four 48-row ones, two 247.6).
    if (2 * r > AttentionCore::PV_WHOLE_MAX_ROWS) {
        for (uint32_t n = 1; n <= r; ++n) {
            const uint32_t v = static_cast<uint32_t>(AlignUp((r + n - 1) / n, 8));
            if (v > 64 && n < r) continue;
            if (VectorUbBytes(r, v, c, dp, dtypeBytes, 2, stats) <= ub) {
                vecRows = std::min(v, r);
                sBufs = 2;
                return true;
            }
        }
    }
    for (uint32_t n = 1; n <= r; ++n) {
        const uint32_t v = static_cast<uint32_t>(AlignUp((r + n - 1) / n, 8));
        if (v > 64 && n < r) continue;
        for (uint32_t b : {2u, 1u}) {
            if (VectorUbBytes(r, v, c, dp, dtypeBytes, b, stats) <= ub) {
                vecRows = std::min(v, r);
                sBufs = b;
                return true;
            }
        }
        if (v <= 8) break;
    }
    return false;
}

bool ChooseSChunk(uint32_t bq, uint32_t c, uint32_t dp, uint32_t dChunk, uint32_t dtypeBytes, const CoreBudget &budget,
                  uint32_t &sChunk)
{
    // Lazy P.V's L0 regions (forward_layout.h); the largest chunk that fits.
    const uint32_t rows = static_cast<uint32_t>(AlignUp(bq, 16));
    for (uint32_t sc : {64u, 32u, 16u}) {
        if (sc > rows && sc > 16) continue;
        if (L0Fits(AttentionCore::ForwardCubeL0Layout(rows, c, dp, dChunk, dtypeBytes, 1, sc), budget)) {
            sChunk = sc;
            return true;
        }
    }
    return false;
}

uint32_t NextRowsPerVec(uint32_t r)
{
    for (uint32_t c : ROWS_PER_VEC) {
        if (c < r) return c;
    }
    return 0;
}

uint64_t CubeL1Bytes(uint32_t bq, uint32_t c, uint32_t dp, uint32_t dtypeBytes)
{
    return AttentionCore::ForwardCubeL1Bytes(bq, c, dp, dtypeBytes, 1);
}

bool ChooseWideLazyBlocks(int64_t headDim, uint32_t dtypeBytes, const CoreBudget &budget, uint32_t &rowsPerVec,
                          uint32_t &blockKv, uint32_t &dChunk, bool stats)
{
    // Above D = 128 K^T of a 128-key block alone fills L0B, so lazy P.V's [K^T | V] regions take
    // 64-key blocks, one head-dim pass (dChunk = D), and the largest q-block whose D-wide fp32
    // accumulator fits L0C next to two S chunks (112 rows at D = 256). Per-block P.V in 128-row
    // q-blocks wrote and read every block's fp32 P.V partial, 16 B of L2 per score at D = 256
    // (docs/performance.md, "Sweep"). Under a band these blocks take the next S's K/V pair
    // ahead of P (ForwardParams::kvPairFirst) and vector sub-blocks of WIDE_LAZY_BAND_VEC_ROWS:
    // modelled causal B1 N4 S4K D256 192.1 -> 181.2 us (lazy P.V without either 216.6: the cube
    // <-> vector round trip of a block, not a pipe, bound it). With a mask tensor and no band the
    // planner keeps per-block P.V (not measured on these blocks).
    // Not 128-key blocks with K^T and V in head-dim halves (the two L0B regions holding a half
    // of K^T, then of V; K and V loaded apart, as pairs of 128-key blocks do not fit L1): each
    // block's S and P.V then need both regions, so the L1 -> L0B loads no longer hide behind
    // the other operation's Mmads (modelled B1 N4 S4K D256 333.3 -> 433.8 us), and even with
    // every L0B load hidden the K/V-apart stream was no faster (B1 N1 S8K 351.1 -> 373.6 us,
    // B1 N4 S4K 333.3 -> 335.6, B2 N8 S2K 339.7 -> 337.8).
    const uint32_t dp = static_cast<uint32_t>(AlignUp(static_cast<uint64_t>(headDim), 16));
    if (dp <= D_CHUNK || dp > WIDE_LAZY_MAX_D) return false;
    const uint64_t ub = UsableUb(budget);
    const uint32_t c = WIDE_LAZY_BLOCK_KV;
    for (uint32_t r : ROWS_PER_VEC) {
        if (r > 64) continue;
        uint32_t v = 0, sBufs = 0, sChunk = 0;
        if (ChooseSChunk(2 * r, c, dp, dp, dtypeBytes, budget, sChunk) &&
            ChooseVecRows(r, c, dp, dtypeBytes, ub, v, sBufs, stats) &&
            CubeL1Bytes(2 * r, c, dp, dtypeBytes) <= budget.l1) {
            rowsPerVec = r;
            blockKv = c;
            dChunk = dp;
            return true;
        }
    }
    return false;
}

bool ChooseBlocks(int64_t headDim, uint32_t dtypeBytes, const CoreBudget &budget, uint32_t &rowsPerVec,
                  uint32_t &blockKv, uint32_t &dChunk, std::string &why, bool stats, bool twoParts)
{
    const uint32_t dp = static_cast<uint32_t>(AlignUp(static_cast<uint64_t>(headDim), 16));
    dChunk = std::min(D_CHUNK, dp);  // lazy P.V's Q chunks in L0A: no wider than the head
    const uint64_t ub = UsableUb(budget);
    // Half-size key blocks only where K and V of 128 keys do not fit L1 next to Q and P
    // (FLOAT32 with D > 464).
    for (uint32_t c : {FORWARD_BLOCK_KV, FORWARD_BLOCK_KV / 2}) {
        for (uint32_t r : ROWS_PER_VEC) {
            if (2 * r > AttentionCore::PV_WHOLE_MAX_ROWS && !twoParts) continue;
            const uint32_t bq = 2 * r;
            uint32_t v = 0, sBufs = 0, sChunk = 0;
            if (r > 64) {  // lazy P.V only, sub-blocks on the vector cores
                if (headDim <= dChunk && ChooseSChunk(bq, c, dp, dChunk, dtypeBytes, budget, sChunk) &&
                    (r <= LARGE_Q_ROWS || sChunk >= LARGE_Q_MIN_S_CHUNK) &&
                    ChooseVecRows(r, c, dp, dtypeBytes, ub, v, sBufs, stats) &&
                    CubeL1Bytes(bq, c, dp, dtypeBytes) <= budget.l1) {
                    rowsPerVec = r;
                    blockKv = c;
                    return true;
                }
                continue;
            }
            // Vector sub-blocks where all r rows at once do not fit UB (D = 256: 64 rows per
            // vector core in two sub-blocks halve the K/V loads per score against 32 rows).
            if (ChooseVecRows(r, c, dp, dtypeBytes, ub, v, sBufs, stats) &&
                CubeL1Bytes(bq, c, dp, dtypeBytes) <= budget.l1 &&
                L0Fits(AttentionCore::ForwardCubeL0Layout(bq, c, dp, dChunk, dtypeBytes, 1, 0), budget)) {
                rowsPerVec = r;
                blockKv = c;
                return true;
            }
        }
    }
    why = "no block size fits UB " + std::to_string(budget.ub) + " B / L1 " + std::to_string(budget.l1) +
          " B for head dim " + std::to_string(headDim);
    return false;
}

void FinishForwardGeometry(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, const CoreBudget &budget)
{
    const uint64_t bq = p.blockQ, c = p.blockKv, dp = p.headDimAlign;
    // Two copies of the cube's L1 tiles (P, K, V) and L0 operands / results where they fit
    // (forward_layout.h).
    p.l1Bufs =
        AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, dtypeBytes, 2) <= budget.l1 ? 2 : 1;
    p.l0Bufs =
        L0Fits(AttentionCore::ForwardCubeL0Layout(p.blockQ, p.blockKv, p.headDimAlign, p.dChunk, dtypeBytes, 2, 0),
               budget)
            ? 2
            : 1;
    // Lazy P.V keeps the accumulator in L0C next to the S chunks: one head-dim chunk, the
    // region layout of forward_cube.h.
    uint32_t sChunk = 0;
    p.lazyO =
        p.headDim <= p.dChunk && ChooseSChunk(p.blockQ, p.blockKv, p.headDimAlign, p.dChunk, dtypeBytes, budget, sChunk)
            ? 1
            : 0;
    p.sChunk = p.lazyO != 0 ? sChunk : p.blockQ;
    // Sub-blocks and a second S buffer per vector core where UB has room for them.
    const uint64_t ub = UsableUb(budget);
    if (!ChooseVecRows(p.rowsPerVec, p.blockKv, p.headDimAlign, dtypeBytes, ub, p.vecRows, p.vecSBufs,
                       p.hasSoftmaxStats != 0)) {
        p.vecRows = p.rowsPerVec;  // ChooseBlocks checked one buffer of all rows
        p.vecSBufs = 1;
    }
    p.wsSlotS = bq * c * 4;
    p.wsSlotP = bq * c * dtypeBytes;
    p.wsSlotO = bq * dp * 4;
    p.wsBytesPerCore = AttentionCore::ForwardWorkspaceLayout(p.wsSlotS, p.wsSlotP, p.wsSlotO).total;
}

namespace {

constexpr uint64_t SUMMARY_MIN_USES = 16;  // (batch, head) pairs per mask plane at D <= 64
// Above D = 64: (batch, head) pairs x keys per plane, and keys
constexpr uint64_t SUMMARY_MIN_PAIR_KEYS = 65536;
constexpr uint32_t SUMMARY_MIN_KEYS = 2048;
constexpr uint32_t SUMMARY_MAX_HEAD_DIM = 128;

// Whether PlanMaskSummary builds the mask summary for this geometry (rowsPerVec set). The pass
// reads the plane's band (from HBM) before the main loop; without it each computed tile's mask
// rows load during the previous rows' softmax and cost one or-fold and 1 B of L2 per score.
// Modelled on causal planes: at D <= 64 from SUMMARY_MIN_USES (batch, head) pairs (S4K D64 N16
// 3 %, N32 5 % faster); at D = 128, where the mask's byte weighs half as much against a score's
// L2 traffic, where pairs x keys reach SUMMARY_MIN_PAIR_KEYS from SUMMARY_MIN_KEYS keys on: B2
// N16 S2K 176.5 -> 172.2 us, B4 N16 S2K 347.8 -> 334.1, B1 N16 S4K 327.3 -> 310.1, B1 N8 S8K
// 628.1 -> 595.4, B1 N32 S4K 626.7 -> 617.6. Below it slower: B1 N16 S2K 89.6 -> 91.2, B1 N2
// S8K 157.2 -> 166.6, and at S1K even with 64 pairs (B1 N64 S1K 109.2 -> 111.0): the pass
// before the barrier is not hidden by a short staging there.
bool MaskSummaryPays(const AttentionCore::ForwardParams &p, const AttentionCore::MaskBandParams &m)
{
    const bool shared = (p.batch == 1 || m.strides.b == 0) && (p.numHeads == 1 || m.strides.n == 0);
    const uint32_t cols = (p.seqKv + AttentionCore::SUMMARY_KEYS - 1) / AttentionCore::SUMMARY_KEYS;
    const uint32_t scratch = p.rowsPerVec * p.headDimAlign * 4;  // what the vector stage passes
    const uint64_t uses = uint64_t(p.batch) * p.numHeads;
    const bool enough = p.headDim <= 64 ? uses >= SUMMARY_MIN_USES
                                        : p.seqKv >= SUMMARY_MIN_KEYS && uses * p.seqKv >= SUMMARY_MIN_PAIR_KEYS;
    return m.hasMask != 0 && shared && enough && p.headDim <= SUMMARY_MAX_HEAD_DIM &&
           AttentionCore::MaskSummaryChunk(scratch, cols) != 0;
}

// Whether the units may run (batch, q-block, head): the heads of a batch read one mask plane (a
// tile's mask rows are the same for all). Modelled on causal planes (docs/performance.md
// "Sweep"): B1 N2 S8K 162.5 -> 157.9 us, B2 N16 S2K 197.3 -> 195.9. Where a q-block's heads come
// as one run of equal costs the contiguous ranges can cut unevenly (B1 N8 S4K 168.8 -> 188.6 us
// in that order: the core with the light first q-blocks and the 48-row tail q-block ends last),
// so with more than two heads PlanForward keeps the order only where it plans no longer. Not
// where the summary is planned: it skips the clear tiles' loads anyway, and a head's q-blocks
// in a row find its cached K/V (B4 N16 S2K causal with the summary 350.5 -> 334.1 us).
bool HeadsShareMask(const AttentionCore::ForwardParams &p, const AttentionCore::MaskBandParams &mask)
{
    return mask.hasMask != 0 && p.numHeads > 1 && mask.strides.n == 0 && p.groupSize == 1 && !MaskSummaryPays(p, mask);
}

// Where PlanForward takes one Q and P copy for another K/V cache tile pair: under a mask up to
// this many units per core (or up to KV_CACHE_ONE_COPY_MAX_HEAD_DIM), without one from this many
// key blocks per unit (measured, below).
constexpr uint64_t ONE_COPY_MAX_MASKED_UNITS_PER_CORE = 2;
constexpr uint32_t ONE_COPY_MIN_KV_BLOCKS = 16;
// Where PlanKvGeometry stages nothing at D <= 64 (measured, below): without a mask, from
// ONE_COPY_MIN_KV_BLOCKS key blocks per head and this many per core.
constexpr uint64_t UNSTAGED_MIN_CORE_KEY_BLOCKS = 64;
// Under a mask (MHA only) from this many units per core on average: the mask leaves the plane
// bound by L2 well above its critical path only where the cores run many units (below).
constexpr uint64_t UNSTAGED_MIN_MASKED_UNITS_PER_CORE = 8;

// DealGroups: at most this many units (its greedy looks every unit up on every core), taken
// where it plans at least 1 % shorter than the contiguous ranges (as the TND deal).
constexpr uint64_t DEAL_MAX_UNITS = 4096;
constexpr uint64_t DEAL_MARGIN_PCT = 99;
// Above D = 64 only (K and V staged): at D = 64 it modelled no faster or slower (B1 N16/4 S4K
// causal 263.6 -> 263.7 us, B1 N12/4 S1K 21.7 -> 22.4).
constexpr uint32_t DEAL_MIN_HEAD_DIM_EXCL = 64;

constexpr uint32_t HEADS_INNER_ALWAYS = 2;
// The mask bytes the heads-in-a-row orders save (~1 B of the ~16 B of L2 per score for every
// head after a core's first) are not in the unit costs: such an order is kept where it plans at
// most this much (per mille) longer. B1 N8 S4K causal: the paired order (short q-block first)
// planned 0.3 % longer, 168.8 -> 163.9 us; B2 N16 S2K: heads in a row planned 1.5 % longer ran
// slower (191.8 -> 194.5 us).
constexpr uint64_t HEADS_INNER_MARGIN_PERMILLE = 5;

// The split-KV tail's cost beyond its pieces (each priced as a unit of its keys), in units of
// ForwardUnitCost (the pipeline's fill per unit): the partial rows' stores, the SyncAll and
// the combine pass.
constexpr uint64_t TAIL_PIECE_FIXED_UNITS = 3;
constexpr uint32_t TAIL_MAX_SPLITS = 64;
constexpr uint64_t TAIL_MAX_CORE_PIECES = 4;
// The tail is taken where it plans 2 % shorter: the piece cost is an estimate, and where it
// plans about even with the whole units it modelled no faster (D = 128 B1 N8 S4K, 192-row
// q-blocks: planned 0.5 % shorter, modelled 297.1 -> 298.0 us).
constexpr uint64_t TAIL_MARGIN_PCT = 98;
// Above this head dim and up to FOLD_TIE_MAX_HEAD_DIM (where it was measured) an unmasked plane
// whose cores take more units than a head has q-blocks takes the folded q-block order on a
// planned tie.
constexpr uint32_t FOLD_TIE_MIN_HEAD_DIM_EXCL = 64;
constexpr uint32_t FOLD_TIE_MAX_HEAD_DIM = 128;

// Pieces of short q-blocks (UNITS_SHORT_LAST) wherever they plan shorter at all: the pieces
// trade a short unit's K/V stream for part of it, which the piece cost prices high (each
// piece's fill and block shares; the cube's stream runs on from piece to piece). B2 N8 S2K D256
// planned 0.5 % shorter, modelled 310.9 -> 306.3 us; B1 N4 S4K D256 288.7 -> 286.6.
constexpr uint64_t TAIL_SHORT_MARGIN_PCT = 100;

// Whether a unit's time is the cube's K/V stream rather than its share of the device's L2
// (cost_rates.h rates, per key): the cube's MTE2 moves K, V and the q-block's column of P
// (2 D + rows fp16 elements) and starts a copy per operand per key block (a K/V pair and P in
// lazy P.V's 64-key blocks above D = 128, else K, V and P), against the key's L2 bytes (K and V
// re-read per q-block, 4 D, and the S/P hand-off, 12 B per row) at a core's share. D = 256,
// 112-row q-blocks: 17.5 against 14.6 cycles per key (modelled: bound by the cube's MTE2, 310.9
// us on a 230.1 us L2 floor, B2 N8 S2K); D = 128, 192 rows: 12.8 against 17.4 (bound by L2).
bool CubeStreamBinds(const AttentionCore::ForwardParams &t)
{
    const double copies = t.blockKv == WIDE_LAZY_BLOCK_KV ? 2 : 3;
    const double mte2 =
        (2.0 * t.headDimAlign + t.blockQ) * 2 / L2_READ_BYTES_PER_CYCLE + copies * DMA_HEAD_CYCLES / t.blockKv;
    const double l2 = (4.0 * t.headDimAlign + 12.0 * t.blockQ) / L2_DEVICE_SHARE_BYTES_PER_CYCLE;
    return mte2 > l2;
}

// The split-KV tail (ForwardParams::tailSplits, TailItem in forward_params.h) for t's q-block
// geometry: every core takes units / cores whole units, the rest are cut into key ranges of
// whole key blocks, the same number of pieces per core that has any. Dense only (no mask, band
// or query lengths: every row of a unit is valid and sees every key). Returns the planned
// makespan of the best cut and fills the tail fields and unit ranges of `tail`; 0 where none
// applies.
uint64_t PlanTailSplit(const ForwardProblem &prob, const AttentionCore::ForwardParams &t,
                       const AttentionCore::MaskBandParams &mask, const CoreBudget &budget, uint32_t dtypeBytes,
                       AttentionCore::ForwardParams &tail)
{
    if (prob.hasMask || prob.bandActive || !prob.actualSeqLengths.empty() || t.seqKv == 0) return 0;
    const uint32_t cores = static_cast<uint32_t>(std::min<uint64_t>(budget.aicNum, AttentionCore::MAX_CORES));
    const uint64_t q = t.unitCount / cores;
    const uint64_t rest = t.unitCount % cores;
    if (rest == 0) return 0;
    const uint64_t blocks = (uint64_t(t.seqKv) + t.blockKv - 1) / t.blockKv;
    const uint64_t ub = UsableUb(budget);
    // The busiest core: its whole units (the first q of every head's order cost alike but for
    // a short last q-block, so a full one is taken) and its pieces of full units.
    const uint64_t full = UnitCost(prob, t, mask, 0, 0, std::min<uint32_t>(t.blockQ, t.seqQ));
    const uint64_t fixed = ForwardUnitCost(t);
    // Where a head ends in a short q-block, there are no more tail units than heads and the
    // cube's K/V stream binds (CubeStreamBinds), the units run with every head's short q-block
    // last (UNITS_SHORT_LAST) and the pieces are cut from those: a short unit costs nearly a
    // whole one there (its K/V loads), and taken whole it holds up the cores that take it (B2 N8
    // S2K D256: 16 cores ended at 307.7 us with twelve whole units and a 32-row one, eight at
    // 288.8 with twelve). Not where L2 binds: the pieces' partials and the combine pass add L2
    // bytes to a launch their balance does not shorten (D = 128 B1 N8 S4K, 64-row short
    // q-blocks: 288.3 -> 289.1 us).
    const uint64_t heads = uint64_t(t.batch) * t.numHeads;
    const uint32_t shortRows = t.seqQ % t.blockQ;
    const bool shortLast = shortRows != 0 && t.qBlocksPerHead > 1 && rest <= heads && CubeStreamBinds(t);
    const uint64_t keyCost = ForwardKeyCost(shortLast ? shortRows : t.blockQ, t.headDim);
    uint64_t best = 0, bestSplits = 0, bestPer = 0, bestBlocks = 0;
    for (uint64_t splits = 2; splits <= std::min<uint64_t>(TAIL_MAX_SPLITS, blocks); ++splits) {
        const uint64_t pieces = rest * splits;
        const uint64_t per = (pieces + cores - 1) / cores;
        const uint64_t pieceBlocks = (blocks + splits - 1) / splits;
        if (per > TAIL_MAX_CORE_PIECES || pieces % per != 0 || (splits - 1) * pieceBlocks >= blocks) continue;
        if (AttentionCore::CombineUbLayout(static_cast<uint32_t>(splits), t.headDimAlign, dtypeBytes, false).Total() >
            ub)
            break;
        const uint64_t piece = std::min<uint64_t>(pieceBlocks * t.blockKv, t.seqKv) * keyCost +
                               pieceBlocks * t.blockQ * BLOCK_COST_PER_ROW + fixed;
        const uint64_t span = q * full + per * piece + fixed * TAIL_PIECE_FIXED_UNITS;
        if (best == 0 || span < best) {
            best = span;
            bestSplits = splits;
            bestPer = per;
            bestBlocks = pieceBlocks;
        }
    }
    if (best == 0) return 0;
    tail = t;
    tail.foldQBlocks = shortLast ? AttentionCore::UNITS_SHORT_LAST : 0;
    tail.tailSplits = static_cast<uint32_t>(bestSplits);
    tail.tailPieceBlocks = static_cast<uint32_t>(bestBlocks);
    tail.tailPerCore = static_cast<uint32_t>(q);
    tail.tailPieces = static_cast<uint32_t>(rest * bestSplits);
    tail.tailCorePieces = static_cast<uint32_t>(bestPer);
    tail.tailFirst = q * cores;
    tail.unitCount = q * cores + tail.tailPieces;
    const uint64_t pieceCores = tail.tailPieces / bestPer;
    for (uint32_t c = 0; c <= cores; ++c) tail.coreUnitStart[c] = c * q + std::min<uint64_t>(c, pieceCores) * bestPer;
    return best;
}

// Q staged per core (ForwardParams::qNzUnits, kv_nz.h QStart) with K/V staged in pairs, from each
// core's QNZ_FIRST-th unit (0-based) on: the cube loads a unit's Q during the first S of the
// unit before, and the core's vector cores write the copies once their late K/V share is done,
// during the core's second unit (its first: the late share; the second's Q is loaded during
// the first), or from the first unit on where K/V are staged before the loop (qNzChunk rows per
// chunk). The copies after the rest of the workspace. Where it copies at least
// QNZ_MIN_UNITS units' Q blocks on a core: modelled B2 N8 S2K D256 (12-14 items per core, late
// K/V staging) 305.2 -> 297.9 us, B1 N4 S4K D256 (7, K/V staged before the loop) 286.4 ->
// 284.2, causal B1 N4 S4K D256 176.7 -> 176.0; B1 N1 S8K D256 (4 items, one copied) 277.5 ->
// 277.7 without the minimum. From the second unit on 304.9 us (the copies then wait for the late
// share), from the fifth 298.8. Under a band (K/V staged before the loop, the pairs two blocks
// ahead) from the second unit on: causal B1 N4 S4K D256 163.1 -> 161.9 us (unmasked B1 N4 S4K
// D256 272.2 -> 273.4 that way, so not there).
constexpr uint32_t QNZ_FIRST = 3;
constexpr uint32_t QNZ_FIRST_BAND = 1;
constexpr uint32_t QNZ_MIN_UNITS = 2;

void PlanQNz(AttentionCore::PrefillTiling &tiling, uint32_t dtypeBytes, uint64_t ubBytes)
{
    AttentionCore::ForwardParams &p = tiling.params;
    p.qNzUnits = 0;
    p.qNzFirst = 0;
    p.qNzOffset = 0;
    p.qNzChunk = 0;
    uint64_t most = 0;
    for (uint32_t c = 0; c < p.usedCores; ++c) most = std::max(most, p.coreUnitStart[c + 1] - p.coreUnitStart[c]);
    const uint32_t first = p.kvPairFirst != 0 && p.kvNzLate == 0 ? QNZ_FIRST_BAND : QNZ_FIRST;
    // K and V staged in pairs (lazy P.V above D = 128), late or before the loop; not beside the
    // per-core staging, whose chunk buffers its own regions hold during the loop
    if (p.kvNz != AttentionCore::KV_NZ_BOTH || p.kvNzPairs == 0 || p.kvNzOwnRows != 0 || most < first + QNZ_MIN_UNITS) {
        return;
    }
    if (p.kvNzLate == 0) {
        p.qNzChunk = KvNzChunkRows(p, dtypeBytes, ubBytes);
        if (p.qNzChunk == 0) return;
    }
    p.qNzOffset = AlignUp(PrefillWorkspaceBytes(tiling), 512);
    p.qNzUnits = static_cast<uint32_t>(most);
    p.qNzFirst = first;
}

// Whether the cube can load every key block as a wide-row tile (ForwardParams::kvWideRows):
// 16-bit K/V, no mask or band (a key's column in S is then its place in the block's wide-row
// order), every block full, a head's key rows contiguous and a block's elements within Nd2Nz's
// 16-bit strides (two blocks per copy: CubeTiles::CopyWide).
bool WideRowsFit(const ForwardProblem &prob, const AttentionCore::ForwardParams &p)
{
    return prob.dtypeBytes == 2 && !prob.hasMask && !prob.bandActive && p.blockKv % 16 == 0 && p.blockKv != 0 &&
           p.seqKv % p.blockKv == 0 && p.headDim == p.headDimAlign && prob.kv.s == int64_t(p.headDim) &&
           uint64_t(p.blockKv) * p.headDim <= 65535;
}

// The geometry after the q-block (p's units and usedCores set): the cube's buffers, the vector
// sub-blocks, the K/V staging and the cube's K/V cache.
void PlanKvGeometry(const ForwardProblem &prob, const CoreBudget &budget, bool wideLazy,
                    AttentionCore::ForwardParams &p)
{
    const bool masked = prob.hasMask || prob.bandActive;
    FinishForwardGeometry(p, prob.dtypeBytes, budget);
    if (wideLazy && prob.bandActive && p.vecRows > WIDE_LAZY_BAND_VEC_ROWS) {
        const uint64_t ub = UsableUb(budget);
        if (VectorUbBytes(p.rowsPerVec, WIDE_LAZY_BAND_VEC_ROWS, p.blockKv, p.headDimAlign, prob.dtypeBytes, p.vecSBufs,
                          p.hasSoftmaxStats != 0) <= ub) {
            p.vecRows = WIDE_LAZY_BAND_VEC_ROWS;
        }
    }
    // Up to D = 64 only K is staged: there the forward is bound by L2 well above its critical
    // path, and staging V (read once, written once, 2 B per element each) costs more L2 than the
    // cube's Nd2Nz of V's rows costs time (modelled B1 N8 S4K D64 253.1 -> 251.9 us, B4 N8 S2K
    // 251.5 -> 249.1, B1 N16 S4K causal 267.6 -> 265.2, B1 N32 S1K 67.3 -> 66.1: the shorter
    // staging also starts the main loop earlier). K stays staged where its scale folded in there
    // keeps the vector cores' scale pass off their critical path. Without a mask, from
    // ONE_COPY_MIN_KV_BLOCKS key blocks per head and UNSTAGED_MIN_CORE_KEY_BLOCKS per core, the
    // plane is bound by L2 well above its critical path, and K's staging (read and written once
    // more) costs more than the scale pass and the cube's Nd2Nz of K's rows: nothing is staged
    // and the K/V cache takes the caller's rows (B1 N8 S4K D64 247.4 -> 246.2 us, B4 N8 S2K
    // 248.3 -> 245.9, B2 N8 S2K 125.6 -> 124.4, B1 N32 S4K 978.9 -> 974.1, B1 N16/4 S4K 489.7 ->
    // 489.1). Not with fewer blocks (B1 N32 S1K 66.1 -> 70.3 us, B1 N8 S2K 64.2 -> 65.8: the
    // vector cores bind). Under a mask it pays where the heads do not share K (MHA) and the cores
    // run UNSTAGED_MIN_MASKED_UNITS_PER_CORE units or more on average (causal B1 N16 S4K 257.9 -> 255.5 us,
    // B1 N32 S2K 143.2 -> 139.2, B1 N24 S4K 383.6 -> 380.0, B1 N32 S4K 510.1 -> 505.3, B1 N8 S8K
    // 538.8 -> 536.4; with 4 units per core slower: B1 N8 S4K 139.1 -> 141.1, B1 N16 S2K 72.5 ->
    // 74.9; GQA slower: B1 N16/4 S4K 256.6 -> 260.9, its K staged once for four heads).
    PlanKvNz(p, prob.dtypeBytes, p.seqKv, p.batch, budget.l1, p.headDim > KV_NZ_K_ONLY_MAX_HEAD_DIM);
    const uint64_t headBlocks = (uint64_t(p.seqKv) + p.blockKv - 1) / p.blockKv;
    const bool manyUnits = masked ? p.groupSize == 1 && p.unitCount >= UNSTAGED_MIN_MASKED_UNITS_PER_CORE * p.usedCores
                                  : p.unitCount * headBlocks >= UNSTAGED_MIN_CORE_KEY_BLOCKS * p.usedCores;
    const bool unstaged = p.kvNz == AttentionCore::KV_NZ_K_ONLY && headBlocks >= ONE_COPY_MIN_KV_BLOCKS && manyUnits;
    if (unstaged) {
        DropKvNz(p);
    }
    // Under a band a core's first P.V loads the next S's pair ahead of P (forward_cube_pv.h
    // AccumulatePV; every later pair goes behind a P load, two pairs ahead of the S stream).
    p.kvPairFirst = p.kvNzPairs != 0 && prob.bandActive ? 1 : 0;
    // One copy of Q and P for another K/V tile pair in the cache where the L2 it saves is worth
    // the unit starts it slows (modelled, docs/performance.md "Sweep"): without a mask where a
    // unit runs at least ONE_COPY_MIN_KV_BLOCKS key blocks (every unit boundary of a head reuses;
    // B2 N8 S2K 150.3 -> 148.8 us, B1 N8 S4K 291.1 -> 288.3; with 8 blocks per unit the unit
    // starts cost more, B4 N16 S1K 157.8 -> 159.2), and for a causal plane with at most two units
    // per core (B1 N1 S8K causal, one folded pair per core: bound by L2 with the cores ~4 us short
    // of it). Not with more causal units per core at D = 128, whose unit starts bind (B1 N8 S4K
    // 159.5 -> 160.6 us, B2 N16 S2K 183.7 -> 185.4); at D <= 64 the S/P hand-off per FLOP is
    // twice as large, the plane is bound by L2 well above its critical path and the tile pair
    // is worth it (B1 N16 S4K D64 causal 269.1 -> 267.6 us, critical path 241.7 -> 242.0).
    const bool oneCopy = masked ? p.unitCount <= ONE_COPY_MAX_MASKED_UNITS_PER_CORE * p.usedCores ||
                                      p.headDim <= KV_CACHE_ONE_COPY_MAX_HEAD_DIM
                                : p.seqKv >= uint64_t(ONE_COPY_MIN_KV_BLOCKS) * p.blockKv;
    // Else, without a mask, one P copy for one more K tile (modelled B4 N16 S1K 150.8 -> 150.4 us;
    // under a mask mixed: causal B1 N8/2 S2K 45.0 -> 45.1, B1 N8 S4K 159.1 -> 158.8).
    PlanKvCache(p, prob.dtypeBytes, budget.l1, oneCopy, unstaged, !masked);
    // Up to D = 64 under a band a diagonal tile's staircase stays off the S/P hand-off where it
    // can (ForwardParams::pPieceFractals, sPieceRows, pStoreFractals): the plane is bound by L2
    // above its critical path, and each piece is one more DMA start (modelled causal B1 N16 S4K
    // D64 255.5 -> 253.1 us, L2 1774.3 -> 1757.3 MB, critical path 243.3 -> 245.8; P in single
    // fractal rows 252.9 but 279.3 -> 282.1 under the bandwidth ledger). Not all three at D = 128,
    // where the unit starts bind some causal rows (B1 N8/2 S2K 44.3 -> 45.9 us, B2 N16 S2K 166.9
    // -> 168.6); there S alone in 32-row pieces (modelled B2 N16 S2K causal 162.1 -> 161.5 us,
    // B1 N8 S4K causal 156.7 -> 156.5; 16-row pieces slowed B1 N8/2 S2K, D = 256 causal
    // 157.2 -> 157.3).
    if (prob.bandActive && p.headDim <= STAIR_PIECES_MAX_HEAD_DIM) {
        p.pPieceFractals = STAIR_P_PIECE_FRACTALS;
        p.sPieceRows = STAIR_S_PIECE_ROWS;
        p.pStoreFractals = STAIR_P_STORE_FRACTALS;
    } else if (prob.bandActive && p.headDim <= BAND_S_PIECES_MAX_HEAD_DIM) {
        p.sPieceRows = BAND_S_PIECE_ROWS;
    }
}

}  // namespace

bool PlanForward(const ForwardProblem &prob, const CoreBudget &budget, AttentionCore::PrefillTiling &tiling,
                 std::string &why, std::vector<uint32_t> *unitOrder, uint64_t maxOrder)
{
    if (unitOrder != nullptr) unitOrder->clear();
    std::memset(&tiling, 0, sizeof(tiling));
    AttentionCore::ForwardParams &p = tiling.params;
    p.batch = static_cast<uint32_t>(prob.batch);
    p.numHeads = static_cast<uint32_t>(prob.numHeads);
    p.numKvHeads = static_cast<uint32_t>(prob.numKvHeads);
    p.groupSize = p.numKvHeads == 0 ? 1 : p.numHeads / p.numKvHeads;
    p.seqQ = static_cast<uint32_t>(prob.seqQ);
    p.seqKv = static_cast<uint32_t>(prob.seqKv);
    p.headDim = static_cast<uint32_t>(prob.headDim);
    p.headDimAlign = static_cast<uint32_t>(AlignUp(static_cast<uint64_t>(prob.headDim), 16));
    p.qStrideB = prob.q.b;
    p.qStrideN = prob.q.n;
    p.qStrideS = prob.q.s;
    p.kvStrideB = prob.kv.b;
    p.kvStrideN = prob.kv.n;
    p.kvStrideS = prob.kv.s;
    p.oStrideB = prob.out.b;
    p.oStrideN = prob.out.n;
    p.oStrideS = prob.out.s;
    tiling.score.scaleValue = prob.scale;
    AttentionCore::MaskBandParams &mask = tiling.mask;
    mask.hasMask = prob.hasMask ? 1 : 0;
    mask.bandActive = prob.bandActive ? 1 : 0;
    mask.strides = {prob.mask.b, prob.mask.n, prob.mask.s};
    mask.preTokens = std::max(-TOKEN_CLAMP, std::min(TOKEN_CLAMP, prob.preTokens));
    mask.nextTokens = std::max(-TOKEN_CLAMP, std::min(TOKEN_CLAMP, prob.nextTokens));
    mask.seqQ = p.seqQ;
    mask.seqKv = p.seqKv;
    p.hasActualSeqLengths = prob.actualSeqLengths.empty() ? 0 : 1;
    p.actualSeqLengthsCount = static_cast<uint32_t>(prob.actualSeqLengths.size());

    uint32_t maxRows = 0;
    const bool masked = prob.hasMask || prob.bandActive;
    const bool wideLazy = (!masked || prob.bandActive) &&
                          ChooseWideLazyBlocks(prob.headDim, prob.dtypeBytes, budget, maxRows, p.blockKv, p.dChunk);
    // q-blocks above PV_WHOLE_MAX_ROWS (P.V in two row parts) where a head's key blocks outrun
    // the K/V cache (TWO_PART_MIN_KV_BLOCKS): there each K/V load serves more rows; where the
    // cache holds a head's keys whole its units load them once anyway, and the larger q-block
    // only lengthens the cube <-> vector round trip (modelled D = 64 B1 N32 S1K 66.1 -> 66.7 us).
    const bool twoParts = prob.seqKv >= int64_t(TWO_PART_MIN_KV_BLOCKS) * FORWARD_BLOCK_KV;
    if (!wideLazy &&
        !ChooseBlocks(prob.headDim, prob.dtypeBytes, budget, maxRows, p.blockKv, p.dChunk, why, false, twoParts))
        return false;

    // The largest q-block keeps K/V re-reads lowest; smaller ones give more units to spread
    // over the cores.
    // Per q-block size the plain and the folded order of a head's q-blocks; the folded one
    // where its planned makespan is smaller (a causal mask's q-blocks differ in cost).
    std::map<uint32_t, std::vector<uint32_t>> deals;  // per q-block size tried, its causal GQA deal
    ChooseQBlock(maxRows, p, [&](AttentionCore::ForwardParams &t, uint32_t &cores) {
        t.unitCount = uint64_t(t.batch) * t.numHeads * t.qBlocksPerHead;
        cores = SplitCores(budget.aicNum, t.unitCount);
        // Causal GQA: the K/V cache of this geometry, for the deal below (KvCacheModel).
        uint32_t cacheTiles = 0, cacheBufs = 0;
        if (t.groupSize > 1 && mask.bandActive != 0 && t.headDim > DEAL_MIN_HEAD_DIM_EXCL &&
            t.unitCount <= MAX_SEARCHED_UNITS) {
            AttentionCore::ForwardParams c = t;
            c.usedCores = cores;
            PlanKvGeometry(prob, budget, wideLazy, c);
            cacheTiles = c.kvCacheTiles;
            cacheBufs = c.l1Bufs;
        }
        auto split = [&](uint32_t fold) {
            t.foldQBlocks = fold;
            return t.unitCount <= MAX_SEARCHED_UNITS ? SplitContiguous(UnitCosts(prob, t, mask), cores, t.coreUnitStart)
                                                     : SplitProportional(prob, t, mask, cores);
        };
        // Per unit order the variant that plans shortest: a head's q-blocks plain or folded, and
        // under a band with a short q-block, that one last or first (UNITS_TAIL_FIRST: causal, it
        // then sees a few keys instead of streaming all of K and V for a few rows). Not with
        // GQA, where it planned shorter but ran longer (B1 N8/2 S2K causal 51.0 -> 51.1 us: four
        // units per core, the core with the short q-block ends first).
        const bool tailFirst = mask.bandActive != 0 && t.seqQ % t.blockQ != 0 && t.groupSize == 1;
        auto best = [&](uint32_t order) {
            std::pair<uint64_t, uint32_t> b{UINT64_MAX, order};
            for (const uint32_t tail : {0u, AttentionCore::UNITS_TAIL_FIRST}) {
                if (tail != 0 && !tailFirst) continue;
                // Without a band the units cost alike but for a head's short last q-block. At
                // D = 128 where a core takes more units than a head has q-blocks (its range cuts
                // heads), a tie goes to the folded order: it moves the short q-block from a head's
                // end to its second place, so other cores' ranges end on it (modelled B4 N16 S1K,
                // 16 units per core, 6 per head: the latest core, the one with four heads' first
                // units, ends 148.4 -> 147.1 us, onto the launch's L2 floor; under the bandwidth
                // ledger 163.3 -> 163.8 us, a phase shift of the shared L2). Not elsewhere:
                // D = 256 B2 N8 S2K 310.9 -> 311.3 us; under the bandwidth ledger D = 64 B4 N8 S2K
                // 256.9 -> 257.8, B1 N16/4 S2K D128 (8 units per core, 12 per head) 155.5 -> 155.9.
                const bool foldFirst = mask.bandActive == 0 && !wideLazy && t.headDim > FOLD_TIE_MIN_HEAD_DIM_EXCL &&
                                       t.headDim <= FOLD_TIE_MAX_HEAD_DIM &&
                                       t.unitCount > uint64_t(t.qBlocksPerHead) * cores;
                for (const uint32_t f : {0u, 1u}) {
                    const uint32_t fold = (f == 0) == foldFirst ? AttentionCore::UNITS_FOLDED : 0u;
                    // folding changes nothing with two q-blocks; UNITS_PAIRED needs it
                    if (fold != 0 ? t.qBlocksPerHead <= 2 : (order & AttentionCore::UNITS_PAIRED) != 0) continue;
                    const uint64_t span = split(order | tail | fold);
                    if (span < b.first) b = {span, order | tail | fold};
                }
            }
            return b;
        };
        // A mask plane the heads share: a core takes the heads of a q-block in a row (or of a
        // folded pair of q-blocks: UNITS_PAIRED), and the vector cores skip the mask rows of the
        // tiles an earlier head found clear (mask_band.h CLEAR_TILES). The mask bytes it saves
        // are not in the unit costs: with more than two heads the order is kept where its
        // ranges plan at most HEADS_INNER_MARGIN_PERMILLE longer than the (batch, head) order (a
        // q-block's heads come as one run of equal costs, which can cut unevenly).
        auto chosen = best(0);
        if (HeadsShareMask(t, mask)) {
            auto inner = best(AttentionCore::UNITS_HEADS_INNER);
            if (t.qBlocksPerHead > 2) {
                const auto paired = best(AttentionCore::UNITS_HEADS_INNER | AttentionCore::UNITS_PAIRED);
                if (paired.first < inner.first) inner = paired;
            }
            if (t.numHeads <= HEADS_INNER_ALWAYS ||
                inner.first * 1000 <= chosen.first * (1000 + HEADS_INNER_MARGIN_PERMILLE)) {
                chosen = inner;
            }
        }
        split(chosen.second);  // its ranges into t
        // The last units cut into key ranges over the cores they would leave idle, where that
        // plans shorter (the plain order: every unit but a head's last costs alike).
        AttentionCore::ForwardParams tail;
        t.foldQBlocks = 0;
        const uint64_t tailSpan = PlanTailSplit(prob, t, mask, budget, prob.dtypeBytes, tail);
        t.foldQBlocks = chosen.second;
        const bool shortLast = tailSpan != 0 && (tail.foldQBlocks & AttentionCore::UNITS_SHORT_LAST) != 0;
        if (tailSpan != 0 && tailSpan * 100 < chosen.first * (shortLast ? TAIL_SHORT_MARGIN_PCT : TAIL_MARGIN_PCT)) {
            t = tail;
            cores = static_cast<uint32_t>(std::min<uint64_t>(budget.aicNum, AttentionCore::MAX_CORES));
            return tailSpan;
        }
        // Causal GQA: the units dealt by cost (DealGroups) where that plans at least
        // DEAL_MARGIN_PCT shorter than the ranges and the table fits, both priced with the K/V
        // cache's reuse (KvCacheModel; so are the ranges where the deal loses, so that every
        // q-block size of the search is priced alike).
        if (cacheTiles != 0 && unitOrder != nullptr && t.unitCount <= std::min<uint64_t>(maxOrder, DEAL_MAX_UNITS) &&
            cores > 1) {
            const KvCacheModel model{prob, t, mask, cacheTiles, cacheBufs};
            std::vector<uint64_t> first;
            const std::vector<uint64_t> costs = UnitCostsCached(model, first);
            uint64_t ranges = 0;
            for (uint32_t c = 0; c < cores; ++c) {
                uint64_t sum = 0;
                for (uint64_t i = t.coreUnitStart[c]; i < t.coreUnitStart[c + 1]; ++i) {
                    sum += i == t.coreUnitStart[c] ? first[i] : costs[i];
                }
                ranges = std::max(ranges, sum);
            }
            AttentionCore::ForwardParams d = t;
            d.foldQBlocks = 0;
            std::vector<uint32_t> order;
            uint64_t starts[AttentionCore::MAX_CORES + 1] = {};
            const uint64_t span = DealGroups(KvCacheModel{prob, d, mask, cacheTiles, cacheBufs}, cores, order, starts);
            if (span * 100 >= ranges * DEAL_MARGIN_PCT) return ranges;
            t.foldQBlocks = AttentionCore::UNITS_TABLE;
            std::copy(starts, starts + cores + 1, t.coreUnitStart);
            deals[t.blockQ] = std::move(order);
            return span;
        }
        return chosen.first;
    });
    // The chosen q-block's deal: one q-block size plans one split, and DealGroups leaves no core
    // empty, so the search's cores are the plan's usedCores.
    if ((p.foldQBlocks & AttentionCore::UNITS_TABLE) != 0) {
        *unitOrder = std::move(deals.at(p.blockQ));
        // Causal GQA dealt by cost: a block's P.V leaves its last head-dim columns for the next
        // S's chunks (ForwardParams::pvFirstCols), where the M pipe otherwise waits for the
        // Fixpipe of each S chunk (modelled B1 N8/2 S2K 43.84 -> 43.60 us). Not on every lazy
        // row without K/V pairs: there only B1 N8 S1Kx4K moved on the default model (76.0 ->
        // 75.8 us), and under the bandwidth ledger eight rows were slower (B1 N8 S4K D128
        // 316.1 -> 317.9 us).
        if (p.headDimAlign > AttentionCore::PV_PIECE_COLS) {  // read by lazy P.V only
            p.pvFirstCols = p.headDimAlign - AttentionCore::PV_PIECE_COLS;
        }
    }

    PlanKvGeometry(prob, budget, wideLazy, p);
    PlanKvNzOwn(p, prob.dtypeBytes, UsableUb(budget));
    PlanKvNzLate(p, prob.dtypeBytes, UsableUb(budget), !masked && prob.actualSeqLengths.empty());
    if (p.tailSplits > 1) p.wsPartialOffset = WorkspaceBytes(p, 512);
    PlanQNz(tiling, prob.dtypeBytes, UsableUb(budget));
    // The blocks the pass leaves unstaged go to L1 as wide-row tiles where they fit (all of
    // them full, no mask: WideRowsFit). Planes that stage nothing (DropKvNz) keep their rows:
    // not measured there.
    const bool wide = WideRowsFit(prob, p);
    PlanKvNzStageKeys(p, !masked && prob.actualSeqLengths.empty(), wide);
    p.kvWideRows = wide && p.kvNzStageKeys != 0 ? p.blockKv / 16 : 0;
    PlanKvRotation(p);
    return true;
}

void PlanMaskSummary(AttentionCore::PrefillTiling &tiling)
{
    const AttentionCore::ForwardParams &p = tiling.params;
    AttentionCore::MaskBandParams &m = tiling.mask;
    if (!MaskSummaryPays(p, m)) {
        return;
    }
    const uint32_t cols = (p.seqKv + AttentionCore::SUMMARY_KEYS - 1) / AttentionCore::SUMMARY_KEYS;
    // after everything PlanForward placed (the slots, the K/V staging, the Q copies)
    const uint64_t base = AlignUp(PrefillWorkspaceBytes(tiling), 512);
    m.maskSummary = 1;
    m.summaryCols = cols;
    m.summaryPitch = uint32_t(AlignUp((p.seqQ + AttentionCore::SUMMARY_ROWS - 1) / AttentionCore::SUMMARY_ROWS, 8) + 8);
    m.wsMaskSummary = base;
}

uint64_t WorkspaceBytes(const AttentionCore::ForwardParams &p, uint64_t align)
{
    const uint64_t slots = uint64_t(p.usedCores) * p.wsBytesPerCore;
    if (p.kvNz == 0) {
        return AlignUp(slots, align);
    }
    const uint64_t nz = 2 * uint64_t(p.numKvHeads) * p.kvNzBatches * p.headDimAlign * p.kvNzRows * 2;
    return AlignUp(p.kvNzOffset + nz, align);
}

uint64_t PrefillWorkspaceBytes(const AttentionCore::PrefillTiling &tiling)
{
    const AttentionCore::MaskBandParams &m = tiling.mask;
    const AttentionCore::ForwardParams &p = tiling.params;
    if (m.maskSummary != 0) {  // the summary after everything else (PlanMaskSummary)
        return m.wsMaskSummary + uint64_t(m.summaryCols) * m.summaryPitch;
    }
    if (p.qNzUnits != 0) {  // the Q copies after the rest (PlanQNz)
        return p.qNzOffset + uint64_t(p.usedCores) * p.qNzUnits * p.blockQ * p.headDimAlign * 2;
    }
    if (p.tailSplits > 1) {  // the split-KV tail's partials (no mask: no summary)
        const uint64_t rows = uint64_t(p.tailPieces / p.tailSplits) * AttentionCore::TailUnitRows(p);
        return p.wsPartialOffset + AttentionCore::PartialRowsLayout(p.tailSplits, rows, p.headDimAlign).total;
    }
    return WorkspaceBytes(tiling.params);
}

}  // namespace fa_host
