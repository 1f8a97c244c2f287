#include "decode_tiling.h"

#include "cost_rates.h"
#include "../../../op_kernel/attention_core/forward/forward_layout.h"
#include "../../../op_kernel/attention_core/variants/int8_digit_layout.h"
#include "../../../op_kernel/attention_core/variants/kv_ring_layout.h"
#include "../../../op_kernel/attention_core/variants/split_kv_combine_layout.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace fa_host {

namespace {

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
uint64_t CeilDiv(uint64_t x, uint64_t a) { return (x + a - 1) / a; }

// Keys of batch b's window the kernel may compute: never more than the cache's S (a left-padded
// window longer than that leaves the cache and is empty; without left padding the checks bound
// the lengths by S), so a caller's length up to INT64_MAX cannot size the split plan.
int64_t WindowLength(const DecodeProblem &prob, uint32_t b)
{
    if (prob.kvLengths.empty()) return prob.seqKv;
    return std::min<int64_t>(prob.kvLengths[prob.kvLengths.size() == 1 ? 0 : b], prob.seqKv);
}

// Units in kernel order ((b, kvHead, headBlock), split), priced like the prefill units: keys x
// max(rows, D/2) (below D/2 rows K/V streaming dominates) plus a share per block and per unit.
std::vector<uint64_t> UnitCosts(const DecodeProblem &prob, const AttentionCore::DecodeTiling &t)
{
    const AttentionCore::ForwardParams &p = t.params;
    const AttentionCore::DecodeParams &d = t.decode;
    std::vector<uint64_t> costs;
    costs.reserve(p.unitCount);
    for (uint32_t b = 0; b < p.batch; ++b) {
        const int64_t len = std::max<int64_t>(0, WindowLength(prob, b));
        for (uint32_t h = 0; h < p.numKvHeads; ++h) {
            for (uint32_t hb = 0; hb < p.qBlocksPerHead; ++hb) {
                const uint32_t rows = std::min(p.blockQ, p.groupSize - hb * p.blockQ);
                const uint64_t depth = std::max<uint64_t>(rows, p.headDim / 2);
                for (uint32_t s = 0; s < d.kvSplits; ++s) {
                    const int64_t keys =
                        std::max<int64_t>(0, std::min<int64_t>(d.kvChunk, len - int64_t(s) * d.kvChunk));
                    costs.push_back(uint64_t(keys) * depth + CeilDiv(keys, p.blockKv) * p.blockQ * BLOCK_COST_PER_ROW +
                                    uint64_t(p.blockQ) * 64);
                }
            }
        }
    }
    return costs;
}

// Contiguous ranges with about total / cores cost each; returns the number of ranges.
uint32_t CutByCost(const std::vector<uint64_t> &costs, uint32_t cores, uint64_t *starts)
{
    uint64_t total = 0;
    for (uint64_t c : costs) total += c;
    uint32_t used = 0;
    uint64_t acc = 0;
    starts[0] = 0;
    for (size_t i = 0; i < costs.size(); ++i) {
        // open a new range when the running cost reached this range's share of the total
        if (i > 0 && used + 1 < cores && acc * cores >= total * (used + 1)) starts[++used] = i;
        acc += costs[i];
    }
    starts[used + 1] = costs.size();
    return used + 1;
}

}  // namespace

namespace {
// K/V ring (kv_ring.h): the cube computes S WS_SLOTS - 1 blocks ahead of the P.V it waits for,
// so the vector cores keep the ring filled RING_AHEAD = WS_SLOTS blocks ahead of their softmax
// (the cube never waits for a block it needs before that P.V), and WS_SLOTS + RING_AHEAD slots
// never make them wait for a slot the cube still needs.
constexpr uint32_t RING_AHEAD = AttentionCore::WS_SLOTS;
constexpr uint32_t RING_SLOTS = AttentionCore::WS_SLOTS + RING_AHEAD;
// Blocks past the lead in the ring before the first softmax (kv_ring.h, KvRingSource::Target).
constexpr uint32_t RING_START_EXTRA = 2;
// Rows per vector core up to which copied (fp16 / bf16) K/V take K/V pairs and a shorter lead
// (G <= 64 in one head block).
constexpr uint32_t PAIR_COPIED_MAX_ROWS = 32;

// Keys per split-KV chunk of copied K/V are a multiple of this: whole 16-row fractals, and
// 32-byte offsets into fp16 rows indexed by key (pse).
constexpr uint32_t KV_CHUNK_ALIGN = 16;
// Blocks per chunk from which a short last block pays (a few blocks per chunk gain little).
constexpr uint32_t FINE_CHUNK_MIN_BLOCKS = 4;

// Chunks the ring's producer holds in UB (kv_ring.h): read, and converted.
struct RingCopies {
    uint32_t in, out;
};
constexpr RingCopies RING_FULL{AttentionCore::KV_RING_IN_COPIES, AttentionCore::KV_RING_OUT_COPIES};
constexpr RingCopies RING_LEAN{AttentionCore::KV_RING_LEAN_IN_COPIES, AttentionCore::KV_RING_LEAN_OUT_COPIES};
constexpr RingCopies RING_TENSOR{AttentionCore::KV_RING_TENSOR_COPIES, AttentionCore::KV_RING_TENSOR_COPIES};
constexpr RingCopies RING_TENSOR_LEAN{AttentionCore::KV_RING_TENSOR_COPIES, 1};

// KV heads whose value antiquant rows (scale and offset, query dtype) stay in UB: all of them
// where per-channel rows fit ANTI_TABLE_MAX_BYTES, else none (loaded per unit). A per-unit load
// waits for the ring reads in flight at every unit boundary (modelled ~0.5 us per unit).
uint32_t AntiTableHeads(const DecodeProblem &prob, uint32_t headDimAlign)
{
    if (!prob.antiquant || !prob.antiPerChannel) return 0;
    const uint64_t bytes = 2ull * uint64_t(prob.numKvHeads) * headDimAlign * prob.dtypeBytes;
    return bytes <= AttentionCore::ANTI_TABLE_MAX_BYTES ? static_cast<uint32_t>(prob.numKvHeads) : 0;
}

// UB of the ring's producer for chunks of up to `chunk` cache elements (kv_ring_layout.h).
uint64_t RingUbBytes(uint32_t chunk, const DecodeProblem &prob, uint32_t headDimAlign, RingCopies copies)
{
    return AttentionCore::KvRingUbLayout(chunk, static_cast<uint32_t>(prob.headDim), headDimAlign, prob.dtypeBytes,
                                         prob.antiquant ? 1 : prob.dtypeBytes, prob.antiquant && prob.dtypeBf16,
                                         prob.antiquant, copies.in, copies.out, AntiTableHeads(prob, headDimAlign))
        .Total();
}

// Whether the forward stage keeps `rows` rows per vector core in one sub-block with two S
// buffers (the next block's S loads during this one's softmax) in UB `budget`.
bool StageWhole(AttentionCore::ForwardParams p, uint32_t rows, uint32_t blockKv, uint32_t dChunk, uint32_t dtypeBytes,
                const CoreBudget &budget)
{
    p.rowsPerVec = rows;
    p.blockQ = 2 * rows;
    p.blockKv = blockKv;
    p.dChunk = dChunk;
    FinishForwardGeometry(p, dtypeBytes, budget);
    return p.vecRows >= rows && p.vecSBufs == 2;
}

// Where the int8 x int8 core is modelled faster than the cast ring: a block's S and the O
// products it folds come in one copy only where blockKv == headDimAlign (D = 128; at D = 32 /
// 64 / 96 the extra DMA start per block makes it slower: B16 N32/4 S4K 58.7 / 61.3 / 64.6 us
// against 41.4 / 47.8 / 54.3), and a core's stream must be long enough to repay its query
// digits and start (B1 N8/1 S256, one block per core: 6.19 against 5.73 us).
constexpr uint64_t INT8_DIGIT_MIN_CORE_BLOCKS = 2;
bool Int8DigitsPay(const AttentionCore::DecodeTiling &t, uint64_t blocksPerCore)
{
    return t.params.blockKv == t.params.headDimAlign && blocksPerCore >= INT8_DIGIT_MIN_CORE_BLOCKS;
}

uint64_t CoreAndPartialBytes(const AttentionCore::DecodeTiling &t)
{
    const AttentionCore::DecodeParams &d = t.decode;
    if (d.kvSplits <= 1 && d.quantOut == 0) return uint64_t(t.params.usedCores) * t.params.wsBytesPerCore;
    return d.wsPartialOffset + AttentionCore::PartialRowsLayout(d.kvSplits, d.combineRows, t.params.headDimAlign).total;
}

// The int8 x int8 core's workspace (int8_digit_layout.h) after the core and partial regions, and
// its ring producer: the copied ring's plan for the same cache viewed as 16-bit rows of
// headDim / 2 columns (every int8 element stride halved: Int8DigitsEligible checks them even).
void PlanInt8Digits(const DecodeProblem &prob, const CoreBudget &budget, AttentionCore::DecodeTiling &t)
{
    const AttentionCore::ForwardParams &p = t.params;
    AttentionCore::DecodeParams &d = t.decode;
    AttentionCore::Int8DigitParams &g = d.digits;
    DecodeProblem view = prob;
    view.headDim = prob.headDim / 2;
    view.dtypeBytes = 2;
    view.antiquant = view.antiPerChannel = view.dtypeBf16 = view.int8Digits = false;
    view.kv = {prob.kv.b / 2, prob.kv.n / 2, prob.kv.s / 2};
    view.pageStride = prob.pageStride / 2;
    view.pageHeadStride = prob.pageHeadStride / 2;
    // The vector cores' UB beside the view's producer: the forward stage of this plan, the digit
    // hand-offs (Int8DigitStage) and the value antiquant rows; the view is planned in the rest.
    const uint32_t vecRows = p.vecRows != 0 && p.vecRows < p.rowsPerVec ? p.vecRows : p.rowsPerVec;
    const uint64_t stageUb =
        AttentionCore::ForwardVectorUbLayout(p.rowsPerVec, vecRows, p.blockKv, p.headDimAlign, prob.dtypeBytes,
                                             p.vecSBufs == 2 ? 2 : 1, p.hasSoftmaxStats != 0)
            .Total();
    const uint64_t digitUb = AttentionCore::Int8DigitStageUbBytes(p.rowsPerVec, vecRows, p.blockKv, p.headDimAlign);
    const uint64_t valueUb = AttentionCore::KvRingUbLayout(0, p.headDim, p.headDimAlign, prob.dtypeBytes, 1, false,
                                                           true, 0, 0, d.antiTableHeads)
                                 .value;
    if (stageUb + digitUb + valueUb >= budget.ub) return;
    CoreBudget viewBudget = budget;
    viewBudget.ub = budget.ub - digitUb - valueUb;
    const auto viewPlan = std::make_unique<AttentionCore::DecodeTiling>();  // a few KiB: not on the stack
    std::string ignored;
    if (!PlanDecode(view, viewBudget, *viewPlan, ignored) || viewPlan->decode.ring == 0) return;
    const uint64_t ringUb =
        AttentionCore::KvRingUbLayout(viewPlan->decode.ringChunkElems, p.headDim / 2, p.headDimAlign / 2, 2, 2, false,
                                      false, viewPlan->decode.ringInCopies, viewPlan->decode.ringOutCopies, 0)
            .Total();
    if (stageUb + digitUb + valueUb + ringUb > budget.ub) return;
    g.ringChunkElems = viewPlan->decode.ringChunkElems;
    g.ringInCopies = viewPlan->decode.ringInCopies;
    g.ringOutCopies = viewPlan->decode.ringOutCopies;
    g.ringByTensor = viewPlan->decode.ringByTensor;

    g.rowsPad = AttentionCore::Int8DigitRows(std::min(p.groupSize, p.blockQ));
    const uint32_t rows = std::min(p.groupSize, p.blockQ);
    g.queryItemBytes = AttentionCore::Int8DigitQueryItemBytes(g.rowsPad, rows, p.headDimAlign);
    // the (batch, KV head, head block) items from each core's first unit's to its last's
    uint64_t span = 1;
    for (uint32_t c = 0; c < p.usedCores; ++c) {
        const uint64_t u0 = p.coreUnitStart[c], u1 = p.coreUnitStart[c + 1];
        if (u1 > u0) span = std::max<uint64_t>(span, (u1 - 1) / d.kvSplits - u0 / d.kvSplits + 1);
    }
    g.queryOffset = AlignUp(CoreAndPartialBytes(t), 512);
    g.queryCoreBytes = AlignUp(span * g.queryItemBytes, 512);
    g.slotOffset = g.queryOffset + uint64_t(p.usedCores) * g.queryCoreBytes;
    g.slotCoreBytes = AttentionCore::Int8DigitSlotsLayout(g.rowsPad, p.blockKv, p.headDimAlign).total;
    g.ringOffset = g.slotOffset + uint64_t(p.usedCores) * g.slotCoreBytes;
    g.ringCoreBytes =
        AlignUp(uint64_t(RING_SLOTS) * AttentionCore::Int8DigitRingPairBytes(p.blockKv, p.headDimAlign), 512);
    g.end = g.ringOffset + uint64_t(p.usedCores) * g.ringCoreBytes;
    g.enabled = 1;
}
}  // namespace

bool PlanDecode(const DecodeProblem &prob, const CoreBudget &budget, AttentionCore::DecodeTiling &t, std::string &why)
{
    std::memset(&t, 0, sizeof(t));
    AttentionCore::ForwardParams &p = t.params;
    AttentionCore::DecodeParams &d = t.decode;
    p.batch = static_cast<uint32_t>(prob.batch);
    p.numHeads = static_cast<uint32_t>(prob.numHeads);
    p.numKvHeads = static_cast<uint32_t>(prob.numKvHeads);
    p.groupSize = p.numHeads / p.numKvHeads;
    p.seqQ = 1;
    p.seqKv = static_cast<uint32_t>(prob.seqKv);
    p.headDim = static_cast<uint32_t>(prob.headDim);
    // INT8 output rows of headDimAlign bytes must start on 32-byte blocks.
    p.headDimAlign = static_cast<uint32_t>(AlignUp(uint64_t(prob.headDim), prob.quantOut ? 32 : 16));
    p.qStrideB = p.oStrideB = prob.q.b;
    p.qStrideN = p.oStrideN = prob.q.n;
    p.qStrideS = p.oStrideS = prob.q.s;
    p.kvStrideB = prob.kv.b;
    p.kvStrideN = prob.kv.n;
    p.kvStrideS = prob.kv.s;

    // Rows of a unit are the G heads of a KV group: no more rows per vector core than needed.
    const uint32_t need = static_cast<uint32_t>(AlignUp(CeilDiv(p.groupSize, 2), 8));
    uint32_t maxRows = 0;
    if (!ChooseBlocks(p.headDimAlign, prob.dtypeBytes, budget, maxRows, p.blockKv, p.dChunk, why)) return false;
    // The K/V ring's producer (kv_ring.h) shares the vector cores' UB with the stage: the largest
    // chunk that leaves the stage all its rows in one sub-block with two S buffers, first with
    // the full set of copies, then (K/V copied, not cast) the lean set; else the largest chunk
    // that leaves the rows the full UB gives; below 4096 elements, fewer rows rather than
    // smaller chunks (DMA start costs). With G = 64 (32 rows per vector core) the full set left
    // two sub-blocks and one S buffer, the lean set one of each: modelled B4 N64/1 S8K 20.5 ->
    // 16.8 us. The int8 cast keeps the full set (its conversions wait for their ring writes
    // with fewer: B16 N32/4 S4K 66.5 -> 83.7 us). int8 K/V always go through the ring; fp16 /
    // bf16 K/V only when it leaves the stage those rows (else the cube reads the cache: another
    // head block would stream every key again).
    {
        const uint32_t fullRows = std::min(maxRows, need);
        const uint64_t rowBytes = AlignUp(uint64_t(prob.headDim), 32);
        uint32_t chosen = 0, chosenRows = 0, chosenKv = 0, chosenDc = 0;
        RingCopies chosenCopies = RING_FULL;
        bool whole = false;
        // Copied K/V by tensor (DecodeParams::ringByTensor): a chunk of a whole key block, two
        // copies each way, where that leaves the stage all its rows in one sub-block with two S
        // buffers (few rows per core: G <= 16 at D = 128), else one out copy (G = 64: each
        // block is converted and written in one call, kv_ring.h); each vector core then reads
        // a block with one copy instead of two. Modelled B4 N64/1 S8K 15.74 -> 15.15 us
        // against the lean set (its vector cores' reads paced it).
        if (!prob.antiquant) {
            const uint64_t rowElems =
                std::max<uint64_t>(AlignUp(uint64_t(prob.headDim), 32 / prob.dtypeBytes), p.headDimAlign);
            const uint32_t c = static_cast<uint32_t>(AttentionCore::KV_RING_MAX_CHUNK_ROWS * rowElems);
            for (const RingCopies copies : {RING_TENSOR, RING_TENSOR_LEAN}) {
                CoreBudget reduced = budget;
                const uint64_t reserve = RingUbBytes(c, prob, p.headDimAlign, copies);
                reduced.ub = budget.ub > reserve ? budget.ub - reserve : 0;
                uint32_t rows = 0, bk = 0, dc = 0;
                std::string ignored;
                if (ChooseBlocks(p.headDimAlign, prob.dtypeBytes, reduced, rows, bk, dc, ignored) &&
                    std::min(rows, need) == fullRows && StageWhole(p, fullRows, bk, dc, prob.dtypeBytes, reduced)) {
                    chosen = c;
                    chosenRows = rows;
                    chosenKv = bk;
                    chosenDc = dc;
                    chosenCopies = copies;
                    whole = true;
                    d.ringByTensor = 1;
                    break;
                }
            }
        }
        for (uint32_t chunk : {8192u, 4096u, 2048u, 1024u, 512u}) {
            if (whole) break;
            if (chunk < rowBytes && chosen != 0) break;
            bool fits = false;  // the full set fits this chunk
            const uint32_t c = static_cast<uint32_t>(std::max<uint64_t>(chunk, rowBytes));
            for (const RingCopies copies : {RING_FULL, RING_LEAN}) {
                if (prob.antiquant && copies.in != RING_FULL.in) continue;
                CoreBudget reduced = budget;
                const uint64_t reserve = RingUbBytes(c, prob, p.headDimAlign, copies);
                reduced.ub = budget.ub > reserve ? budget.ub - reserve : 0;
                uint32_t rows = 0, bk = 0, dc = 0;
                std::string ignored;
                if (!ChooseBlocks(p.headDimAlign, prob.dtypeBytes, reduced, rows, bk, dc, ignored)) continue;
                const bool full = std::min(rows, need) == fullRows;
                fits = fits || copies.in == RING_FULL.in;
                whole = full && StageWhole(p, fullRows, bk, dc, prob.dtypeBytes, reduced);
                // the full set as before; the lean one only where it makes the stage whole
                if (whole || (copies.in == RING_FULL.in && (chosen == 0 || full))) {
                    chosen = c;
                    chosenRows = rows;
                    chosenKv = bk;
                    chosenDc = dc;
                    chosenCopies = copies;
                }
                if (whole) break;
            }
            if (whole || (fits && (std::min(chosenRows, need) == fullRows || chunk <= 4096))) break;
        }
        if (chosen == 0 && prob.antiquant) {
            why = "no block size leaves UB for the int8 key/value cast at head dim " + std::to_string(prob.headDim);
            return false;
        }
        if (chosen != 0 && (prob.antiquant || std::min(chosenRows, need) == fullRows)) {
            d.ring = 1;
            d.ringChunkElems = chosen;
            d.ringInCopies = chosenCopies.in;
            d.ringOutCopies = chosenCopies.out;
            d.antiTableHeads = AntiTableHeads(prob, p.headDimAlign);
            maxRows = chosenRows;
            p.blockKv = chosenKv;
            p.dChunk = chosenDc;
        }
    }
    p.rowsPerVec = std::min(maxRows, need);
    p.blockQ = 2 * p.rowsPerVec;
    p.qBlocksPerHead = static_cast<uint32_t>(CeilDiv(p.groupSize, p.blockQ));

    AttentionCore::DecodeMaskParams &mask = t.mask;
    mask.hasKvLengths = prob.kvLengths.empty() ? 0 : 1;
    mask.kvLengthsCount = static_cast<uint32_t>(prob.kvLengths.size());
    mask.hasLeftPadding = prob.leftPadding && !prob.kvLengths.empty() ? 1 : 0;
    mask.hasMask = prob.hasMask ? 1 : 0;
    mask.maskStrideB = prob.maskStrideB;
    AttentionCore::DecodePseParams &score = t.score;
    score.scaleValue = prob.scale;
    score.hasPse = prob.hasPse ? 1 : 0;
    score.pseIsBf16 = prob.pseBf16 ? 1 : 0;
    score.pseStrideB = prob.pseStrideB;
    score.pseStrideN = prob.pseStrideN;
    score.groupSize = p.groupSize;
    d.paged = prob.paged ? 1 : 0;
    d.blockSize = static_cast<uint32_t>(prob.blockSize);
    d.maxBlocks = static_cast<uint32_t>(prob.maxBlocks);
    d.cacheBlocks = static_cast<uint32_t>(prob.cacheBlocks);
    d.pageStride = prob.pageStride;
    d.pageHeadStride = prob.pageHeadStride;
    d.quantOut = prob.quantOut ? 1 : 0;
    d.quantPerChannel = prob.quantPerChannel ? 1 : 0;
    d.hasQuantOffset = prob.hasQuantOffset ? 1 : 0;
    d.quantParamsBf16 = prob.quantBf16 ? 1 : 0;

    // KV splits: the count with the smallest estimated makespan, (units per core) x (keys per
    // chunk + one block's worth of fixed cost per unit). Many rows need no split; one long
    // sequence is cut over the cores.
    int64_t maxLen = 1;
    for (uint32_t b = 0; b < p.batch; ++b) maxLen = std::max(maxLen, WindowLength(prob, b));
    const uint64_t baseUnits = uint64_t(p.batch) * p.numKvHeads * p.qBlocksPerHead;
    const uint32_t aic = std::max<uint32_t>(1, std::min<uint32_t>(budget.aicNum, AttentionCore::MAX_CORES));
    const uint64_t keyBlocks = CeilDiv(uint64_t(maxLen), p.blockKv);
    // Keys per chunk for `sp` splits: whole key blocks, or for copied (fp16 / bf16) K/V cut into
    // chunks of several blocks (a long sequence over the cores) KV_CHUNK_ALIGN keys, so a core's
    // last block is short rather than reaching a whole block past its share (the ring's reads
    // pace these rows, a short block's reads are short). Modelled B4 N64/1 S8K 14.69 -> 14.42
    // us, B1 N16/1 S32K 13.04 -> 12.79. int8 K/V keep whole blocks: with several units per core
    // a short block costs a block's fixed work more per unit (B16 N32/4 S4K 57.9 -> 58.4 us).
    const auto chunkKeys = [&](uint64_t sp) {
        const uint64_t share = CeilDiv(uint64_t(maxLen), sp);
        const bool fine = !prob.antiquant && share >= uint64_t(FINE_CHUNK_MIN_BLOCKS) * p.blockKv;
        return AlignUp(share, fine ? KV_CHUNK_ALIGN : p.blockKv);
    };
    uint64_t splits = 1;
    uint64_t best = ~0ULL;
    for (uint64_t sp = 1; sp <= std::min<uint64_t>(keyBlocks, MAX_KV_SPLITS); ++sp) {
        const uint64_t span = CeilDiv(baseUnits * sp, aic) * (chunkKeys(sp) + p.blockKv);
        if (span < best) {
            best = span;
            splits = sp;
        }
    }
    d.kvChunk = static_cast<uint32_t>(chunkKeys(splits));
    d.kvSplits = static_cast<uint32_t>(CeilDiv(uint64_t(maxLen), d.kvChunk));
    if (d.kvSplits == 1) {  // one chunk holds any window of the cache (left padding: within S)
        d.kvChunk =
            static_cast<uint32_t>(AlignUp(std::max<uint64_t>(uint64_t(maxLen), uint64_t(prob.seqKv)) + 1, p.blockKv));
    }
    p.unitCount = baseUnits * d.kvSplits;
    // The combine pass runs after the core with the whole UB (split_kv_combine_layout.h).
    if (AttentionCore::CombineUbLayout(d.kvSplits, p.headDimAlign, prob.dtypeBytes, prob.quantOut, prob.antiquant)
            .Total() > budget.ub) {
        why = "the split-KV combine does not fit UB at head dim " + std::to_string(prob.headDim);
        return false;
    }
    mask.kvSplits = score.kvSplits = d.kvSplits;  // a unit's n is kvHead * kvSplits + split
    mask.kvChunk = d.kvChunk;

    const uint32_t cores = static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(aic, p.unitCount)));
    p.usedCores = CutByCost(UnitCosts(prob, t), cores, p.coreUnitStart);

    // The ring's producer keeps its UB: the stage's sub-blocks and S buffers fit the rest.
    CoreBudget stageBudget = budget;
    if (d.ring != 0) {
        const uint64_t reserve = RingUbBytes(d.ringChunkElems, prob, p.headDimAlign, {d.ringInCopies, d.ringOutCopies});
        stageBudget.ub = budget.ub > reserve ? budget.ub - reserve : 0;
    }
    FinishForwardGeometry(p, prob.dtypeBytes, stageBudget);

    d.combineRows = uint64_t(p.batch) * p.numHeads;
    d.wsPartialOffset = AlignUp(uint64_t(p.usedCores) * p.wsBytesPerCore, 512);
    d.antiquant = prob.antiquant ? 1 : 0;
    d.antiPerChannel = prob.antiPerChannel ? 1 : 0;
    if (d.ring != 0) {
        d.ringSlots = RING_SLOTS;
        d.ringAhead = RING_AHEAD;
        d.ringStartExtra = RING_START_EXTRA;
        d.ringCoreBytes = AlignUp(uint64_t(d.ringSlots) * 2 * p.blockKv * p.headDimAlign * prob.dtypeBytes, 512);
        // A block's K and V slots in one copy where L1 holds WS_SLOTS pairs (the cube loads K
        // WS_SLOTS - 1 blocks before P.V needs V): one DMA start less per block on the cube's
        // MTE2. int8 K/V: that MTE2 bounds the cast ring (the vector cores read half the bytes
        // they write). fp16 / bf16 (G <= 64): pairs with a lead one block shorter; where the
        // vector cores' reads pace the kernel (one long sequence cut over the cores) the first
        // softmax comes one ring read earlier and the cube's spare MTE2 absorbs the shorter lead
        // (modelled B1 N16/1 S32K 14.5 -> 14.2 us; either alone: 14.5). G = 64 takes them since
        // its ring goes by tensor (B4 N64/1 S8K 15.15 -> 15.03 us; pairs with the full lead
        // 15.45); docs/performance.md "Decode".
        const bool shortCopied = !prob.antiquant && p.rowsPerVec <= PAIR_COPIED_MAX_ROWS;
        if ((prob.antiquant || shortCopied) && p.lazyO != 0 &&
            AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, prob.dtypeBytes, p.l1Bufs,
                                              AttentionCore::WS_SLOTS) <= budget.l1) {
            d.kvPairCopies = AttentionCore::WS_SLOTS;
            if (shortCopied) d.ringAhead = RING_AHEAD - 1;
            // More than 8 rows per vector core (G = 64): one block less before the first
            // softmax, whose S load and P store then start the cube's P.V stream earlier
            // (modelled B4 N64/1 S8K 15.03 -> 14.78 us; B1 N16/1 S32K 13.04 -> 13.63 with it,
            // int8 B16 S4K 59.2 -> 59.3; two blocks less: 15.71).
            if (shortCopied && p.rowsPerVec > 8) d.ringStartExtra = RING_START_EXTRA - 1;
        }
    }
    const uint32_t vecCores = 2 * p.usedCores;
    for (uint32_t v = 0; v <= vecCores; ++v) d.combineRowStart[v] = d.combineRows * v / vecCores;
    uint64_t end = AlignUp(CoreAndPartialBytes(t), 512);
    if (d.antiquant != 0) {
        // Q * scale_k per core (kv_antiquant.h): the batches from the core's first unit's to its
        // last's, at the query's element offsets.
        const uint64_t unitsPerBatch = uint64_t(d.kvSplits) * p.qBlocksPerHead * p.numKvHeads;
        uint64_t span = 1;
        for (uint32_t c = 0; c < p.usedCores; ++c) {
            const uint64_t u0 = p.coreUnitStart[c], u1 = p.coreUnitStart[c + 1];
            if (u1 > u0) span = std::max<uint64_t>(span, (u1 - 1) / unitsPerBatch - u0 / unitsPerBatch + 1);
        }
        d.antiQueryOffset = end;
        d.antiQueryCoreBytes = AlignUp(span * p.qStrideB * prob.dtypeBytes, 512);
        end = d.antiQueryOffset + uint64_t(p.usedCores) * d.antiQueryCoreBytes;
    }
    d.ringOffset = end;
    if (prob.int8Digits) {
        std::string notDigits;
        const uint64_t blocksPerCore = baseUnits * keyBlocks / std::max<uint32_t>(1, p.usedCores);
        if (Int8DigitsEligible(prob, t, notDigits) && Int8DigitsPay(t, blocksPerCore)) PlanInt8Digits(prob, budget, t);
    }
    return true;
}

bool Int8DigitsEligible(const DecodeProblem &prob, const AttentionCore::DecodeTiling &t, std::string &why)
{
    const AttentionCore::ForwardParams &p = t.params;
    const auto even = [](uint64_t x) { return x % 2 == 0; };
    if (!prob.antiquant) {
        why = "K/V are not int8";
    } else if (p.groupSize > AttentionCore::INT8_DIGIT_MAX_GROUP || p.qBlocksPerHead != 1) {
        why = "more than " + std::to_string(AttentionCore::INT8_DIGIT_MAX_GROUP) + " query heads per KV head";
    } else if (prob.headDim % AttentionCore::INT8_DIGIT_C0 != 0 || prob.headDim > 128) {
        why = "head dim not a multiple of 32 up to 128";  // whole int8 Nz columns; two K tiles in L0B
    } else if (p.blockKv % 64 != 0) {
        why = "key blocks not a multiple of 64";  // the P digit units reduce 64-column groups
    } else if (!even(prob.kv.b) || !even(prob.kv.n) || !even(prob.kv.s) || !even(prob.pageStride) ||
               !even(prob.pageHeadStride)) {
        why = "odd K/V element strides";  // the ring views int8 rows as 16-bit columns
    } else {
        return true;
    }
    return false;
}

uint64_t DecodeWorkspaceBytes(const AttentionCore::DecodeTiling &t)
{
    const AttentionCore::DecodeParams &d = t.decode;
    if (d.digits.enabled != 0) return d.digits.end;
    if (d.ring == 0) return CoreAndPartialBytes(t);
    return d.ringOffset + uint64_t(t.params.usedCores) * d.ringCoreBytes;
}

}  // namespace fa_host
