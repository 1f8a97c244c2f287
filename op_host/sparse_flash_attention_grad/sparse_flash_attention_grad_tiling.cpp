// Tiling of SparseFlashAttentionGrad: shapes and attributes from the TilingContext, the core
// budget from PlatformAscendC, and the plan of the sparse backward core (PlanSparseBackward):
// blocks that fit the real buffers, query tokens split over the cores, whole or cut at chunk
// boundaries (one core in deterministic mode, so the fp32 atomic adds into dK/dV happen in
// one fixed order).
#include <cstring>
#include <string>
#include <vector>

#include "../common/tiling/cost_rates.h"
#include "../common/op_log.h"
#include "../common/tiling/tiling_inputs.h"
#include "../../op_kernel/attention_core/sparse_backward/sparse_backward_layout.h"
#include "../../op_kernel/sparse_flash_attention_grad/sparse_flash_attention_grad_tiling_data.h"
#include "exe_graph/runtime/tiling_context.h"
#include "sparse_flash_attention_grad_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace fa_host {

namespace {

constexpr uint32_t BLOCK_KV = 64;  // gathered keys per cube pass (one 64-lane fp32 repeat per row)
constexpr uint32_t D_CHUNK = 128;  // head-dim columns per matmul pass
constexpr uint64_t ALIGN = 512;
// Largest span staging of the gather (gatherSpanBytes): 32 rows of D = 512 in 16 bits, half a
// chunk's K or V rows.
constexpr uint64_t GATHER_SPAN_MAX = 32768;

uint64_t Up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// Chunks of a token's dQ segment at most; a pair item's: its estimated union and
// PAIR_SEG_SLACK chunks more, at most SPARSE_MAX_SEG (PlanOne).
constexpr uint64_t TOKEN_SEG = 32;
constexpr uint64_t PAIR_SEG_SLACK = 4;

// Estimated cost of query row s of a batch in gathered rows: BSND without lengths in sparse
// mode 3 sees min(K * bs, S2 - S1 + s + 1) keys (the selection may be smaller, but the
// causal limit is what grows along the rows); everything else is taken as uniform. PER_TOKEN
// is the per-token work that does not depend on the keys (Q/dO loads, row terms), in rows.
constexpr uint64_t PER_TOKEN = 64;

// A pair item (pairHalfK != 0) gathers the union of two selections of K rows: taken as two
// independent uniform picks from the S2 rows, 2K - K^2 / S2 (the device data may differ).
uint64_t PairUnion(const SparseBackwardProblem &prob)
{
    const uint64_t k = prob.pairHalfK, n = prob.s2 > k ? prob.s2 : k;
    return 2 * k - k * k / n;
}

uint64_t RowCost(const SparseBackwardProblem &prob, uint64_t s)
{
    const uint64_t cap = prob.pairHalfK != 0 ? PairUnion(prob) : uint64_t(prob.topK) * prob.blockSize;
    if (prob.tnd || prob.hasSeqQ || prob.hasSeqKv || prob.sparseMode != 3) return PER_TOKEN + cap;
    const int64_t thr = int64_t(prob.s2) - int64_t(prob.s1) + int64_t(s) + 1;
    const uint64_t keys = thr <= 0 ? 0 : (uint64_t(thr) < cap ? uint64_t(thr) : cap);
    return PER_TOKEN + keys;
}

uint64_t TokenCost(const SparseBackwardProblem &prob, uint64_t t)
{
    return RowCost(prob, prob.tnd || prob.s1 == 0 ? 0 : t % prob.s1);
}

// Largest estimated cost of one core's range under the cut `start`.
long double Makespan(const SparseBackwardProblem &prob, uint64_t used, const uint64_t *start)
{
    long double worst = 0;
    for (uint64_t c = 0; c < used; ++c) {
        long double sum = 0;
        for (uint64_t t = start[c]; t < start[c + 1]; ++t) sum += TokenCost(prob, t);
        worst = sum > worst ? sum : worst;
    }
    return worst;
}

// Contiguous token ranges, one per core: the even cut, or a cut at equal estimated cost
// (causal rows grow along the sequence) when that lowers the most expensive range — with
// few tokens per core the even cut usually wins, since a token is a large unit of work.
void SplitTokens(const SparseBackwardProblem &prob, uint64_t used, uint64_t *start)
{
    uint64_t byCost[AttentionCore::MAX_CORES + 1];
    for (uint64_t i = 0; i <= used; ++i) start[i] = prob.t1 * i / used;
    long double total = 0;
    for (uint64_t t = 0; t < prob.t1; ++t) total += TokenCost(prob, t);
    byCost[0] = 0;
    uint64_t core = 1;
    long double acc = 0;
    for (uint64_t t = 0; t < prob.t1 && core < used; ++t) {
        acc += TokenCost(prob, t);
        while (core < used && acc >= total * core / used) byCost[core++] = t + 1;
    }
    while (core <= used) byCost[core++] = prob.t1;
    if (Makespan(prob, used, byCost) < Makespan(prob, used, start)) {
        for (uint64_t i = 0; i <= used; ++i) start[i] = byCost[i];
    }
}

// Gathered keys of token t as the chunk cut estimates them: RowCost's keys, at most the KV
// length (rounded up to a block) where the selection rule reads no further (mode 0, BSND
// without lengths).
uint64_t KeyEstimate(const SparseBackwardProblem &prob, uint64_t t)
{
    uint64_t keys = TokenCost(prob, t) - PER_TOKEN;
    if (!prob.tnd && !prob.hasSeqKv && prob.sparseMode != 3) {
        const uint64_t kv = Up(prob.s2, prob.blockSize);
        keys = keys < kv ? keys : kv;
    }
    return keys;
}

// Parts of at most `span` estimated cost, in order: each takes whole tokens while they fit,
// then as many chunks of the next token as fit (a part of a token costs `per` for its Q/dO
// loads and row terms plus `unit` per chunk). Returns the parts needed (limit + 1 when more
// than `limit`); with `cutT`/`cutC` records where each part starts.
uint64_t FillParts(const std::vector<uint64_t> &ch, uint64_t span, uint64_t per, uint64_t unit, uint64_t limit,
                   uint64_t *cutT, uint32_t *cutC)
{
    const uint64_t n = ch.size();
    uint64_t t = 0, k = 0, parts = 0;
    while (t < n) {
        if (parts == limit) return limit + 1;
        if (cutT != nullptr) {
            cutT[parts] = t;
            cutC[parts] = static_cast<uint32_t>(k);
        }
        ++parts;
        uint64_t budget = span;
        bool took = false;
        while (t < n) {
            const uint64_t cost = per + unit * (ch[t] - k);
            if (cost <= budget) {
                budget -= cost;
                ++t;
                k = 0;
                took = true;
                continue;
            }
            const uint64_t fit = budget > per ? (budget - per) / unit : 0;
            if (fit > 0) {
                k += fit;
                took = true;
            }
            break;
        }
        if (!took) return limit + 1;  // span below one chunk
    }
    return parts;
}

// Positions (token, chunk) cut so that the most expensive part is as cheap as it can be
// (FillParts, bisection on the span), so a token may be shared by cores; taken instead of the
// token cut when that lowers the estimated makespan by at least 2 %. Only with the sorted
// selection and blockKv a multiple of the block size, where a core starts inside a token with
// one scalar read (KvGather::LimitChunks), and with at most 32 tokens per core (beyond, the
// token cut is within 3 % anyway). With fewer tokens than cores it can use them all: `used`
// (the token cut's core count) becomes the number of parts.
void SplitChunks(const SparseBackwardProblem &prob, uint64_t cores, uint64_t blockKv, uint64_t &used, uint64_t *start,
                 uint32_t *chunk)
{
    if (prob.t1 > 32 * cores) return;
    std::vector<uint64_t> ch(prob.t1);
    for (uint64_t t = 0; t < prob.t1; ++t) ch[t] = (KeyEstimate(prob, t) + blockKv - 1) / blockKv;
    uint64_t tokenSpan = 0;  // the token cut under the same costs
    for (uint64_t c = 0; c < used; ++c) {
        uint64_t sum = 0;
        for (uint64_t t = start[c]; t < start[c + 1]; ++t) sum += PER_TOKEN + blockKv * ch[t];
        tokenSpan = sum > tokenSpan ? sum : tokenSpan;
    }
    uint64_t lo = PER_TOKEN + blockKv, hi = tokenSpan;
    if (FillParts(ch, hi, PER_TOKEN, blockKv, cores, nullptr, nullptr) > cores) return;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (FillParts(ch, mid, PER_TOKEN, blockKv, cores, nullptr, nullptr) <= cores) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    if (static_cast<long double>(hi) > 0.98L * tokenSpan) return;
    std::vector<uint64_t> cutT(cores + 1, 0);
    std::vector<uint32_t> cutC(cores + 1, 0);
    used = FillParts(ch, hi, PER_TOKEN, blockKv, cores, cutT.data(), cutC.data());
    for (uint64_t i = 0; i < used; ++i) {
        start[i] = cutT[i];
        chunk[i] = cutC[i];
    }
    start[used] = prob.t1;
    chunk[used] = 0;
}

// Chunks of the dQ pass one L1 staging half holds (dS headsPad x blockKv and a K column block
// blockKv x cols each; the halves split all of L1), at most SPARSE_MAX_SEG: one copy per
// tensor stages them.
uint64_t DqPassChunks(uint64_t g, uint64_t c, uint64_t cols, uint64_t t, uint64_t l1)
{
    const uint64_t half = l1 / 2 / 512 * 512;
    const uint64_t m = half / ((g * c + c * cols) * t);
    return m < AttentionCore::SPARSE_MAX_SEG ? m : AttentionCore::SPARSE_MAX_SEG;
}

// The dQ pass's column width (dqPassCols) and accumulator count (dqTiles). Per chunk of a
// segment and column pass, MTE2 loads the chunk's dS (headsPad x blockKv) and a K column
// block (blockKv x cols) into one of two L1 staging halves (DqPassChunks chunks per copy),
// MTE1 moves them to L0A / L0B, M accumulates. Wider passes mean fewer dS reloads; two
// accumulators (when they fit L0C) let a pass's Fixpipe run under the next pass's Mmads, one
// must drain first. A K column block wider than one L0B copy takes both (the pass's loads
// and Mmads then alternate), which wider passes pay for with fewer dS reloads. Estimated
// cycles per chunk with the cost table's rates (cost_rates.h): max(MTE2, M) plus, with one
// accumulator, the passes' Fixpipes spread over the segment.
void ChooseDqPass(uint64_t g, uint64_t c, uint64_t width, uint64_t t, uint64_t seg, uint64_t l1,
                  const SparseCoreBudget &budget, AttentionCore::SparseBackwardParams &out)
{
    double best = 0;
    out.dqPassCols = 0;
    out.dqTiles = 0;
    const uint64_t widthPad = Up(width, 16);
    for (uint64_t w = 16; w <= widthPad; w += 16) {
        const uint64_t acc = g * w * 4;
        const uint64_t accs = 2 * acc <= budget.l0c ? 2 : (acc <= budget.l0c ? 1 : 0);
        const uint64_t per = DqPassChunks(g, c, w, t, l1);
        if (accs == 0 || c * w * t > budget.l0b || per == 0) {
            continue;
        }
        const uint64_t passes = (width + w - 1) / w;
        const uint64_t copies = per < seg ? per : seg;  // chunks per copy
        const double mte2 = double(passes * g * c * t + c * width * t) / L2_READ_BYTES_PER_CYCLE +
                            2.0 * DMA_HEAD_CYCLES * passes / double(copies);
        const double mmad = double(g * c * width) / MMAD_MACS_PER_CYCLE + MMAD_HEAD_CYCLES * passes;
        const double fix =
            accs == 1 ? passes * (FIXP_HEAD_CYCLES + double(acc) / FIXP_WRITE_BYTES_PER_CYCLE) / double(seg) : 0.0;
        const double cost = (mte2 > mmad ? mte2 : mmad) + fix;
        if (out.dqPassCols == 0 || cost < best) {
            best = cost;
            out.dqPassCols = static_cast<uint32_t>(w);
            out.dqTiles = static_cast<uint32_t>(accs);
        }
    }
}

// Pair items (SparseBackwardParams::pairTokens) where the kernel serves them: sparse mode 0,
// BSND without actual_seq_qlen (every pair lies in one batch), block size 1, INT32 indices, an
// even S1, K a multiple of 8, S2 below 2^29 (merged entries idx * 4 + sel) and 2G <= 128:
// two tokens' keys then share one gather and one dK/dV scatter per row (the scatter bounds
// G = 64), and the cube's M of 2G rows costs no more Fixpipe per key.
bool PairTokens(const SparseBackwardProblem &prob)
{
    return !prob.tnd && !prob.hasSeqQ && prob.sparseMode == 0 && prob.blockSize == 1 && !prob.index64 && prob.s1 != 0 &&
           prob.s1 % 2 == 0 && prob.heads != 0 && 2 * prob.heads <= 128 && prob.topK != 0 && prob.topK % 8 == 0 &&
           prob.s2 < (1ull << 29) && prob.pairHalfK == 0 && prob.allowPairs;
}

bool PlanOne(const SparseBackwardProblem &prob, const SparseCoreBudget &budget,
             AttentionCore::SparseBackwardParams &out, std::string &why);

}  // namespace

bool PlanSparseBackward(const SparseBackwardProblem &prob, const SparseCoreBudget &budget,
                        AttentionCore::SparseBackwardParams &out, std::string &why)
{
    if (PairTokens(prob)) {
        SparseBackwardProblem pair = prob;
        pair.heads = 2 * prob.heads;
        pair.t1 = prob.t1 / 2;
        pair.s1 = prob.s1 / 2;
        pair.topK = 2 * prob.topK;
        pair.pairHalfK = prob.topK;
        std::string pairWhy;
        if (PlanOne(pair, budget, out, pairWhy) && out.sortSelection != 0) {
            return true;
        }
    }
    return PlanOne(prob, budget, out, why);
}

namespace {

bool PlanOne(const SparseBackwardProblem &prob, const SparseCoreBudget &budget,
             AttentionCore::SparseBackwardParams &out, std::string &why)
{
    out = AttentionCore::SparseBackwardParams{};
    out.batch = prob.batch;
    out.heads = prob.heads;
    out.headDim = prob.headDim;
    out.ropeDim = prob.ropeDim;
    out.qkDim = prob.headDim + prob.ropeDim;
    out.t1 = prob.t1;
    out.t2 = prob.t2;
    out.s1 = prob.s1;
    out.s2 = prob.s2;
    out.tnd = prob.tnd ? 1 : 0;
    out.hasSeqQ = prob.hasSeqQ ? 1 : 0;
    out.hasSeqKv = prob.hasSeqKv ? 1 : 0;
    out.seq64 = prob.seq64 ? 1 : 0;
    out.index64 = prob.index64 ? 1 : 0;
    out.topK = prob.topK;
    out.blockSize = prob.blockSize;
    out.sparseMode = prob.sparseMode;
    out.scaleValue = prob.scale;
    out.blockKv = BLOCK_KV;
    out.dChunk = D_CHUNK;
    out.headsPad = static_cast<uint32_t>(Up(prob.heads == 0 ? 1 : prob.heads, 16));
    out.rowsPerVec = (prob.heads + 1) / 2;
    if (prob.headDim % 64 != 0 || prob.ropeDim % 16 != 0) {
        why = "headDim must be a multiple of 64 and ropeDim of 16";
        return false;
    }
    if (prob.blockSize == 0) {  // the op_api rejects it (161002); a graph may not have
        why = "sparse_block_size must be positive";
        return false;
    }

    // Buffers of the cube (L1, L0) and of one vector core (UB), as the kernel allocates them
    // (sparse_backward_layout.h).
    const uint64_t t = prob.dtypeBytes;
    const uint64_t g = out.headsPad, c = BLOCK_KV, wide = g > c ? g : c;
    const AttentionCore::SparseCubeL1 l1Layout = AttentionCore::SparseBackwardCubeL1Layout(
        uint32_t(g), uint32_t(c), out.qkDim, uint32_t(prob.headDim), uint32_t(t));
    const uint64_t l1 = l1Layout.Total();
    // L0C: a ring of up to three tiles, each large enough for a 16-key dK/dV tile over the
    // full width and for S or dP (headsPad x blockKv).
    out.keyGradRows = 16;
    uint64_t tileElems = uint64_t(out.keyGradRows) * out.qkDim;
    tileElems = tileElems > g * c ? tileElems : g * c;
    uint64_t tiles = budget.l0c / (tileElems * 4);
    tiles = tiles > 3 ? 3 : tiles;
    out.l0cTiles = static_cast<uint32_t>(tiles);
    out.l0cTileElems = static_cast<uint32_t>(tileElems);
    // dQ segments: every chunk of a token with at most TOKEN_SEG chunks (a token gathers at
    // most K x sparse_block_size rows, repeats included). A pair item's union is ~1.5 times a
    // token's at the benchmark's density: its segment covers the estimated union and a few
    // chunks more (up to SPARSE_MAX_SEG), so most items take one dQ pass and load Q and dO
    // once (the ring grows with it: dqSegChunks + 3 slots of dS and K per core).
    const uint64_t maxChunks = (uint64_t(prob.topK) * prob.blockSize + c - 1) / c;
    uint64_t segCap = TOKEN_SEG;
    if (prob.pairHalfK != 0) {
        segCap = (PairUnion(prob) + c - 1) / c + PAIR_SEG_SLACK;
        segCap = segCap < AttentionCore::SPARSE_MAX_SEG ? segCap : AttentionCore::SPARSE_MAX_SEG;
    }
    out.dqSegChunks = static_cast<uint32_t>(maxChunks == 0 ? 1 : (maxChunks < segCap ? maxChunks : segCap));
    out.ringSlots = out.dqSegChunks + 3;
    ChooseDqPass(g, c, out.qkDim, t, out.dqSegChunks, l1, budget, out);
    out.dqPassChunks = static_cast<uint32_t>(DqPassChunks(g, c, out.dqPassCols, t, l1));
    out.l0aElems = static_cast<uint32_t>(wide * (D_CHUNK > wide ? D_CHUNK : wide));
    // L0B: a copy holds the main loop's operand tiles and the dQ pass's K column block, or
    // half of a block that then takes both copies (SparseBackwardCube::QueryGradPass).
    const uint64_t passB = c * out.dqPassCols;
    const uint64_t mainB = wide * D_CHUNK;
    const uint64_t halfB = (passB + 1) / 2;
    uint64_t copyB = mainB > passB ? mainB : passB;
    if (2 * copyB * t > budget.l0b && 2 * mainB * t <= budget.l0b) {
        copyB = mainB > halfB ? mainB : halfB;
    }
    out.l0bElems = static_cast<uint32_t>(copyB);
    out.l0Copies = 2 * uint64_t(out.l0aElems) * t <= budget.l0a && 2 * uint64_t(out.l0bElems) * t <= budget.l0b ? 2 : 1;
    if (passB > uint64_t(out.l0Copies) * out.l0bElems) {
        why = "the dQ pass's K column block does not fit L0B";
        return false;
    }
    const AttentionCore::SparseCubeL0 l0 = AttentionCore::SparseBackwardCubeL0Layout(
        out.l0Copies, out.l0aElems, out.l0bElems, uint32_t(tiles), uint32_t(tileElems), out.dqTiles, uint32_t(g),
        out.dqPassCols, uint32_t(t));
    const uint64_t l0a = l0.a, l0b = l0.b, l0c = l0.c;
    // Key tiles in pairs (one Q / dO load into L0B for two tiles) when a tile's reload,
    // headsPad x qkDim into L0B, costs more than half its scatter, 16 rows of (Fixpipe head +
    // qkDim fp32 atomic) through the Fixpipe (cost_rates.h).
    const uint64_t reloadCycles = g * out.qkDim * t / L1_TO_L0_BYTES_PER_CYCLE;
    const uint64_t scatterCycles =
        uint64_t(out.keyGradRows) *
        (static_cast<uint64_t>(FIXP_HEAD_CYCLES) + out.qkDim * 8 / static_cast<uint64_t>(FIXP_WRITE_BYTES_PER_CYCLE));
    out.keyGradGroup = tiles >= 3 && 2 * reloadCycles > scatterCycles ? 2 : 1;
    // UB (sparse_backward_layout.h), with and without the selection sort. The sort needs at
    // most 255 Sort repeats and KV indices below the kernel's clamp (SORT_INDEX_CAP); INT64
    // rows are narrowed to INT32 in place first.
    out.pairTokens = prob.pairHalfK != 0 ? 1 : 0;
    out.halfTopK = prob.pairHalfK;
    const uint32_t listK = prob.pairHalfK != 0 ? prob.pairHalfK : prob.topK;  // one sorted list
    out.sortPad = static_cast<uint32_t>(Up(listK == 0 ? 1 : listK, 32));
    const auto ubBytes = [&](bool sort, uint32_t span) {
        return AttentionCore::SparseBackwardVectorUbLayout(
                   out.rowsPerVec, uint32_t(c), out.qkDim, uint32_t(prob.headDim), uint32_t(t), sort, out.sortPad,
                   AttentionCore::SparseIndexRowBytes(prob.index64, prob.pairHalfK != 0, prob.topK, out.sortPad), span)
            .Total();
    };
    const bool sortable = out.sortPad / 32 <= 255 && prob.t2 < 0x7E000000ull;
    out.sortSelection = sortable && ubBytes(true, 0) + 8192 <= budget.ub ? 1 : 0;
    // The gather's span staging takes the UB left over, up to GATHER_SPAN_MAX (none left: every
    // run is read on its own).
    const uint64_t ubBase = ubBytes(out.sortSelection != 0, 0);
    const uint64_t spare = ubBase + 8192 <= budget.ub ? (budget.ub - 8192 - ubBase) / 1024 * 1024 : 0;
    out.gatherSpanBytes = static_cast<uint32_t>(spare < GATHER_SPAN_MAX ? spare : GATHER_SPAN_MAX);
    const uint64_t ub = ubBytes(out.sortSelection != 0, out.gatherSpanBytes);
    if (l1 > budget.l1 || l0a > budget.l0a || l0b > budget.l0b || tiles == 0 || out.dqPassCols == 0 ||
        l0c > budget.l0c || ub + 8192 > budget.ub || out.gatherSpanBytes < prob.headDim * t) {
        why = "the heads (" + std::to_string(prob.heads) + ") and head dims (" + std::to_string(out.qkDim) +
              ") do not fit the core's buffers";
        return false;
    }

    uint64_t cores = prob.deterministic ? 1 : budget.aicNum;
    cores = cores > AttentionCore::MAX_CORES ? AttentionCore::MAX_CORES : cores;
    uint64_t used = prob.t1 < cores ? prob.t1 : cores;
    used = used == 0 ? 1 : used;
    SplitTokens(prob, used, out.coreTokenStart);
    if (out.sortSelection != 0 && BLOCK_KV % prob.blockSize == 0 && prob.t1 > 0) {
        SplitChunks(prob, cores, BLOCK_KV, used, out.coreTokenStart, out.coreChunkStart);
    }
    out.usedCores = static_cast<uint32_t>(used);

    // A core's area: S, dP, P x 2, V x 2, then the dS and K rings.
    out.wsSlotF32 = Up(g * c * 4, ALIGN);
    out.wsSlotT = Up(g * c * t, ALIGN);
    out.wsVSlot = Up(c * prob.headDim * t, ALIGN);
    out.wsKSlot = Up(c * out.qkDim * t, ALIGN);
    out.wsV = 2 * out.wsSlotF32 + 2 * out.wsSlotT;
    out.wsDsRing = out.wsV + 2 * out.wsVSlot;
    out.wsKRing = out.wsDsRing + uint64_t(out.ringSlots) * out.wsSlotT;
    out.wsSlotBytesPerCore = out.wsKRing + uint64_t(out.ringSlots) * out.wsKSlot;
    out.wsDq = 0;
    out.wsDk = Up(prob.t1 * prob.heads * out.qkDim * 4, ALIGN);
    out.wsDv = out.wsDk + Up(prob.t2 * out.qkDim * 4, ALIGN);
    out.wsSlots = out.wsDv + Up(prob.t2 * prob.headDim * 4, ALIGN);
    out.wsSorted = out.wsSlots + Up(uint64_t(out.usedCores) * out.wsSlotBytesPerCore, ALIGN);
    return true;
}

}  // namespace

uint64_t SparseBackwardWorkspaceBytes(const AttentionCore::SparseBackwardParams &p)
{
    return p.wsSorted + (p.sortSelection != 0 ? 2 * p.t1 * p.topK * 4 : 0);  // two tables
}

}  // namespace fa_host

namespace {

enum InputIndex : size_t {
    QUERY = 0,
    KEY,
    VALUE,
    SPARSE_INDICES,
    D_OUT,
    OUT,
    SOFTMAX_MAX,
    SOFTMAX_SUM,
    SEQ_Q,
    SEQ_KV,
    QUERY_ROPE,
    KEY_ROPE
};
enum AttrIndex : size_t { SCALE = 0, BLOCK_SIZE, LAYOUT, SPARSE_MODE, PRE_TOKENS, NEXT_TOKENS, DETERMINISTIC };

}  // namespace

namespace optiling {

ge::graphStatus SparseFlashAttentionGradTiling(gert::TilingContext *context)
{
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    const float *scale = attrs->GetAttrPointer<float>(SCALE);
    const int64_t *blockSize = attrs->GetAttrPointer<int64_t>(BLOCK_SIZE);
    const char *layout = attrs->GetAttrPointer<char>(LAYOUT);
    const int64_t *mode = attrs->GetAttrPointer<int64_t>(SPARSE_MODE);
    const bool *deterministic = attrs->GetAttrPointer<bool>(DETERMINISTIC);
    const bool tnd = layout != nullptr && std::strcmp(layout, "TND") == 0;
    const std::vector<int64_t> q = fa_host::Dims(context->GetInputShape(QUERY));
    const std::vector<int64_t> k = fa_host::Dims(context->GetInputShape(KEY));
    const std::vector<int64_t> idx = fa_host::Dims(context->GetInputShape(SPARSE_INDICES));
    const std::vector<int64_t> qr = fa_host::Dims(context->GetOptionalInputShape(QUERY_ROPE));
    const std::vector<int64_t> seqQ = fa_host::Dims(context->GetOptionalInputShape(SEQ_Q));
    const size_t rank = tnd ? 3 : 4;
    if (q.size() != rank || k.size() != rank || idx.size() != rank || k[rank - 2] != 1) {
        FA_LOGE("SparseFlashAttentionGrad tiling: query/key/sparse_indices are not %s with one KV head",
                tnd ? "TND" : "BSND");
        return ge::GRAPH_FAILED;
    }
    fa_host::SparseBackwardProblem prob;
    prob.tnd = tnd;
    prob.heads = static_cast<uint32_t>(q[rank - 2]);
    prob.headDim = static_cast<uint32_t>(q[rank - 1]);
    prob.ropeDim = qr.empty() ? 0 : static_cast<uint32_t>(qr.back());
    prob.topK = static_cast<uint32_t>(idx.back());
    if (tnd) {
        prob.t1 = q[0];
        prob.t2 = k[0];
        prob.batch = seqQ.empty() ? 0 : static_cast<uint32_t>(seqQ[0]);
    } else {
        prob.batch = static_cast<uint32_t>(q[0]);
        prob.s1 = q[1];
        prob.s2 = k[1];
        prob.t1 = q[0] * q[1];
        prob.t2 = k[0] * k[1];
    }
    const gert::CompileTimeTensorDesc *seqDesc = context->GetOptionalInputDesc(SEQ_Q);
    if (seqDesc == nullptr) seqDesc = context->GetOptionalInputDesc(SEQ_KV);
    prob.hasSeqQ = context->GetOptionalInputShape(SEQ_Q) != nullptr;
    prob.hasSeqKv = context->GetOptionalInputShape(SEQ_KV) != nullptr;
    prob.seq64 = seqDesc != nullptr && seqDesc->GetDataType() == ge::DT_INT64;
    prob.index64 = context->GetInputDesc(SPARSE_INDICES)->GetDataType() == ge::DT_INT64;
    prob.blockSize = blockSize == nullptr ? 1 : static_cast<uint32_t>(*blockSize);
    prob.sparseMode = mode == nullptr ? 0 : static_cast<uint32_t>(*mode);
    prob.scale = scale == nullptr ? 1.0f : *scale;
    prob.deterministic = deterministic != nullptr && *deterministic;
    if (tnd && (!prob.hasSeqQ || !prob.hasSeqKv)) {
        FA_LOGE("SparseFlashAttentionGrad tiling: layout TND needs actual_seq_qlen and actual_seq_kvlen");
        return ge::GRAPH_FAILED;
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    const fa_host::CoreBudget budget = fa_host::ReadCoreBudget(platform);

    SparseFlashAttentionGradTilingData *data = context->GetTilingData<SparseFlashAttentionGradTilingData>();
    std::string why;
    if (!fa_host::PlanSparseBackward(prob, budget, data->params, why)) {
        FA_LOGE("SparseFlashAttentionGrad tiling: %s", why.c_str());
        return ge::GRAPH_FAILED;
    }
    const ge::DataType dtype = context->GetInputDesc(QUERY)->GetDataType();
    context->SetTilingKey(dtype == ge::DT_BF16 ? SFAG_TILING_KEY_BF16 : SFAG_TILING_KEY_FP16);
    context->SetBlockDim(data->params.usedCores);
    size_t *ws = context->GetWorkspaceSizes(1);
    ws[0] = fa_host::SparseBackwardWorkspaceBytes(data->params) + platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
