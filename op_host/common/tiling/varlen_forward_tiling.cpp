#include "varlen_forward_tiling.h"

#include "cost_rates.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "../../../op_kernel/attention_core/common/sparse_mode.h"

namespace fa_host {

namespace {

int64_t Clamp(int64_t v)
{
    return std::max(-AttentionCore::SPARSE_UNBOUNDED, std::min(AttentionCore::SPARSE_UNBOUNDED, v));
}

AttentionCore::SparseBand BandOf(const VarLenProblem &prob, const AttentionCore::SparseMaskParams &m, size_t b)
{
    const int64_t prefix = prob.prefix.empty() ? 0 : prob.prefix[b];
    return AttentionCore::MakeSparseBand(m.sparseMode, m.hasMask != 0, m.preTokens, m.nextTokens, prob.seqQ[b],
                                         prob.seqKv[b], prefix, int64_t(b) == m.bandBatch);
}

// Units in (b, n, q-block) order, priced like the PFA planner (forward_work_split.cpp, UnitCost):
// visible keys x ForwardKeyCost + a share per key block and per unit. A TND unit's share is
// half as large again as a PFA unit's (three key blocks' time, not two): uneven lengths leave
// many short units (a batch's last q-block), whose fill and drain the cores holding them paid
// on top of their planned cost (modelled: TND [100, 3000, 1500, 700, 2200] D = 64 causal, the
// core holding 27 units ended ~0.45 us per unit after those of equal cost holding 6-11).
// With `keys`: per unit the id of the K/V it reads, (batch, KV head, key range), equal ids for
// units that can reuse each other's K/V whole (GroupEqualCosts), and in `heads` the id of its
// (batch, KV head), equal for units whose key ranges may overlap (DealByCost).
std::vector<uint64_t> UnitCosts(const VarLenProblem &prob, const AttentionCore::ForwardParams &p,
                                const AttentionCore::SparseMaskParams &mask, std::vector<uint64_t> *keys = nullptr,
                                std::vector<uint64_t> *heads = nullptr)
{
    if (keys != nullptr) keys->clear();
    if (heads != nullptr) heads->clear();
    std::map<std::array<int64_t, 4>, uint64_t> ids;
    std::vector<uint64_t> costs;
    std::vector<uint64_t> perQb;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t b = 0; b < prob.seqQ.size(); ++b) {
        const int64_t sq = prob.seqQ[b];
        const AttentionCore::SparseBand band = BandOf(prob, mask, b);
        perQb.clear();
        ranges.clear();
        // UNITS_TAIL_FIRST: the short q-block first (varlen_policies.h WorkSplit<SplitTnd>).
        const int64_t shift =
            (p.foldQBlocks & AttentionCore::UNITS_TAIL_FIRST) != 0 ? (sq + p.blockQ - 1) / p.blockQ * p.blockQ - sq : 0;
        for (int64_t end = p.blockQ - shift; end - int64_t(p.blockQ) < sq; end += p.blockQ) {
            const int64_t q0 = std::max<int64_t>(0, end - p.blockQ);
            const int64_t rows = std::min<int64_t>(end, sq) - q0;
            const int64_t lo = band.Lo(q0);
            const int64_t hi = band.Hi(q0 + rows - 1);
            uint64_t cost = ForwardUnitCost(p) * 3 / 2;
            if (hi > lo) {
                const uint64_t blocks = uint64_t((hi - lo + p.blockKv - 1) / p.blockKv);
                cost += uint64_t(hi - lo) * ForwardKeyCost(uint64_t(rows), p.headDim) +
                        blocks * p.blockQ * BLOCK_COST_PER_ROW;
            }
            perQb.push_back(cost);
            ranges.emplace_back(lo, hi);
        }
        for (int64_t n = 0; n < prob.numHeads; ++n) {
            costs.insert(costs.end(), perQb.begin(), perQb.end());
            if (heads != nullptr) heads->insert(heads->end(), perQb.size(), b * prob.numKvHeads + n / p.groupSize);
            for (size_t i = 0; keys != nullptr && i < ranges.size(); ++i) {
                const std::array<int64_t, 4> id = {int64_t(b), n / int64_t(p.groupSize), ranges[i].first,
                                                   ranges[i].first < ranges[i].second ? ranges[i].second : -1};
                keys->push_back(ids.emplace(id, ids.size()).first->second);
            }
        }
    }
    return costs;
}

// Units of equal cost are interchangeable in a deal: which of them a core takes leaves every
// core's planned cost as it is. Per set of equal-cost units (each core keeping its count of
// them), reassigns them as runs of consecutive units (a head's q-blocks) to one core,
// preferring the core that already holds units of the head; kept only where that spreads the
// set's units over fewer (core, K/V head) pairs than the deal did. Consecutive units of a head
// on a core then find the K/V the one before left in the cube's cache (policies.h
// PlanKvReuse); dealt one by one they rarely meet (TND [1000, 5000, 2000] N4: 3 MB of 334 MB of
// K/V loads saved). The causal rows' deal already keeps a core on one head per cost.
void GroupEqualCosts(const std::vector<uint64_t> &costs, const std::vector<uint64_t> &keys,
                     const std::vector<uint32_t> &byCost, std::vector<uint32_t> &owner, uint32_t cores)
{
    std::map<std::pair<uint32_t, uint64_t>, uint32_t> held;  // (core, head) -> units placed
    std::vector<uint32_t> quota(cores, 0);
    for (size_t first = 0; first < byCost.size();) {
        size_t end = first;
        while (end < byCost.size() && costs[byCost[end]] == costs[byCost[first]]) ++quota[owner[byCost[end++]]];
        std::vector<uint32_t> cls(byCost.begin() + first, byCost.begin() + end);
        std::sort(cls.begin(), cls.end());
        std::map<std::pair<uint32_t, uint64_t>, uint32_t> added;  // the set's units per (core, head)
        std::vector<uint32_t> pickOf(cls.size());
        uint32_t last = cores;
        for (size_t i = 0; i < cls.size(); ++i) {
            const uint64_t h = keys[cls[i]];
            uint32_t pick = cores;
            uint32_t most = 0;
            if (last < cores && quota[last] != 0 && added[{last, h}] != 0) {
                pick = last;
            } else {
                for (uint32_t c = 0; c < cores; ++c) {
                    if (quota[c] == 0) continue;
                    const auto it = held.find({c, h});
                    const uint32_t n = added[{c, h}] + (it == held.end() ? 0 : it->second);
                    if (pick == cores || n > most || (n == most && quota[c] > quota[pick])) {
                        pick = c;
                        most = n;
                    }
                }
            }
            pickOf[i] = pick;
            --quota[pick];
            ++added[{pick, h}];
            last = pick;
        }
        // New (core, head) pairs of the set: as dealt and as regrouped.
        std::map<std::pair<uint32_t, uint64_t>, uint32_t> dealt;
        for (const uint32_t u : cls) ++dealt[{owner[u], keys[u]}];
        const auto fresh = [&held](const std::map<std::pair<uint32_t, uint64_t>, uint32_t> &m) {
            size_t n = 0;
            for (const auto &kv : m) n += kv.second != 0 && held.find(kv.first) == held.end() ? 1 : 0;
            return n;
        };
        const bool regroup = fresh(added) < fresh(dealt);
        for (size_t i = 0; i < cls.size(); ++i) {
            if (regroup) owner[cls[i]] = pickOf[i];
            ++held[{owner[cls[i]], keys[cls[i]]}];
        }
        first = end;
    }
}

// A unit goes to a core that already holds units of its (batch, KV head) where that core's load
// is at most this share (per cent) of the unit's cost above the least loaded core's (DealByCost).
constexpr uint64_t HEAD_AFFINITY_SLACK_PCT = 50;
// Up to D = 64 more (HEAD_AFFINITY_SLACK_PCT_D64) where that deal plans at most
// HEAD_AFFINITY_D64_MARGIN_PCT longer: there the forward is bound by L2, and the K/V loads a unit
// saves on a core that ran its head before weigh more per FLOP than the core's later end
// (modelled TND [100, 3000, 1500, 700, 2200] N8 D64 causal with the short q-blocks first and P
// stored per fractal row: 120 % 132.35 us, 148.0 under the bandwidth ledger, K/V loads 44.3 ->
// ~36 MB; 50 % 134.1 / 152.2, 100 % 133.2 / 152.2, 140 % 132.6 / 150.1, 200 % 132.2 / 150.8: the
// deal's outcome moves in steps, 120 % is the best of both models). Not where a core's share is
// a few units: there the wider deal planned 8-16 % longer (TND [300, 900, 100, 1200] N4 causal)
// and the cores' ends drift apart.
constexpr uint64_t HEAD_AFFINITY_SLACK_PCT_D64 = 120;
constexpr uint64_t HEAD_AFFINITY_D64_MARGIN_PCT = 3;
constexpr uint32_t HEAD_AFFINITY_D64_MAX_HEAD_DIM = 64;

// Deals the units to `cores` cores by cost, the largest first to the least loaded core (ties:
// the lower unit, the lower core), or to the least loaded core holding units of its (batch, KV
// head) (`heads`) within HEAD_AFFINITY_SLACK_PCT of the unit's cost: a causal head's q-blocks
// differ in cost (GroupEqualCosts cannot regroup them), and spread over many cores they rarely
// find the K/V the unit before left in the cube's cache (modelled TND [100, 3000, 1500, 700,
// 2200] N8 D64 causal: the cores holding the most scattered q-blocks ended 8 us after the others,
// their cube MTE2 busy 108 against 100 us); `slackPct`: that share. Writes each core's units in ascending order to `order` and the cores + 1 position
// starts to `starts`, and returns the largest core cost.
uint64_t DealByCost(const std::vector<uint64_t> &costs, const std::vector<uint64_t> &keys,
                    const std::vector<uint64_t> &heads, uint32_t cores, uint64_t slackPct, std::vector<uint32_t> &order,
                    uint64_t *starts)
{
    std::vector<uint32_t> byCost(costs.size());
    for (size_t i = 0; i < costs.size(); ++i) byCost[i] = static_cast<uint32_t>(i);
    std::stable_sort(byCost.begin(), byCost.end(), [&](uint32_t a, uint32_t b) { return costs[a] > costs[b]; });
    std::vector<uint64_t> load(cores, 0);
    std::vector<uint32_t> owner(costs.size(), 0);
    std::set<std::pair<uint32_t, uint64_t>> held;  // (core, head) pairs dealt so far
    for (const uint32_t u : byCost) {
        uint32_t c = static_cast<uint32_t>(std::min_element(load.begin(), load.end()) - load.begin());
        if (held.count({c, heads[u]}) == 0) {
            const uint64_t limit = load[c] + costs[u] * slackPct / 100;
            uint32_t pick = cores;
            for (uint32_t k = 0; k < cores; ++k) {
                if (load[k] <= limit && held.count({k, heads[u]}) != 0 && (pick == cores || load[k] < load[pick])) {
                    pick = k;
                }
            }
            c = pick < cores ? pick : c;
        }
        held.insert({c, heads[u]});
        owner[u] = c;
        load[c] += costs[u];
    }
    GroupEqualCosts(costs, keys, byCost, owner, cores);
    order.clear();
    for (uint32_t c = 0; c < cores; ++c) {
        starts[c] = order.size();
        for (size_t u = 0; u < costs.size(); ++u) {
            if (owner[u] == c) order.push_back(static_cast<uint32_t>(u));
        }
    }
    starts[cores] = order.size();
    return *std::max_element(load.begin(), load.end());
}

// DealByCost at HEAD_AFFINITY_SLACK_PCT, or up to D = 64 at HEAD_AFFINITY_SLACK_PCT_D64 where
// that plans at most HEAD_AFFINITY_D64_MARGIN_PCT longer.
uint64_t DealUnits(const std::vector<uint64_t> &costs, const std::vector<uint64_t> &keys,
                   const std::vector<uint64_t> &heads, uint32_t cores, uint32_t headDim, std::vector<uint32_t> &order,
                   uint64_t *starts)
{
    const uint64_t span = DealByCost(costs, keys, heads, cores, HEAD_AFFINITY_SLACK_PCT, order, starts);
    if (headDim > HEAD_AFFINITY_D64_MAX_HEAD_DIM) return span;
    std::vector<uint32_t> wide;
    uint64_t wideStarts[AttentionCore::MAX_CORES + 1] = {};
    const uint64_t wideSpan = DealByCost(costs, keys, heads, cores, HEAD_AFFINITY_SLACK_PCT_D64, wide, wideStarts);
    if (wideSpan * 100 > span * (100 + HEAD_AFFINITY_D64_MARGIN_PCT)) return span;
    order = std::move(wide);
    std::copy(wideStarts, wideStarts + cores + 1, starts);
    return wideSpan;
}

}  // namespace

int64_t BandBatch(uint32_t sparseMode, const std::vector<int64_t> &seqQ, const std::vector<int64_t> &seqKv)
{
    if (sparseMode != AttentionCore::SPARSE_RIGHT_DOWN_CAUSAL_BAND &&
        sparseMode != AttentionCore::SPARSE_BAND_LEFT_UP_CAUSAL) {
        return -1;
    }
    int64_t found = -1;
    for (size_t b = 0; b < seqQ.size(); ++b) {
        if (seqQ[b] > 0 && seqKv[b] > 0) {
            found = int64_t(b);
            if (sparseMode == AttentionCore::SPARSE_BAND_LEFT_UP_CAUSAL) break;
        }
    }
    return found;
}

bool PlanVarLenForward(const VarLenProblem &prob, const CoreBudget &budget, AttentionCore::VarLenTiling &tiling,
                       std::string &why, std::vector<uint32_t> *unitOrder, uint64_t maxOrder)
{
    if (unitOrder != nullptr) unitOrder->clear();
    std::memset(&tiling, 0, sizeof(tiling));
    AttentionCore::ForwardParams &p = tiling.params;
    const uint64_t n = uint64_t(prob.numHeads), nkv = uint64_t(prob.numKvHeads), d = uint64_t(prob.headDim);
    p.batch = static_cast<uint32_t>(prob.seqQ.size());
    p.numHeads = static_cast<uint32_t>(n);
    p.numKvHeads = static_cast<uint32_t>(nkv);
    p.groupSize = nkv == 0 ? 1 : static_cast<uint32_t>(n / nkv);
    p.seqQ = static_cast<uint32_t>(*std::max_element(prob.seqQ.begin(), prob.seqQ.end()));
    p.seqKv = static_cast<uint32_t>(*std::max_element(prob.seqKv.begin(), prob.seqKv.end()));
    p.headDim = static_cast<uint32_t>(d);
    p.headDimAlign = static_cast<uint32_t>((d + 15) / 16 * 16);
    // TND: a batch is a token offset (WorkUnit::qBase / kvBase), so the batch stride is 0.
    p.qStrideN = d;
    p.qStrideS = n * d;
    p.kvStrideN = d;
    p.kvStrideS = nkv * d;
    p.oStrideN = d;
    p.oStrideS = n * d;
    p.hasSoftmaxStats = 1;
    p.statsStrideS = n * 8;
    p.statsStrideN = 8;
    AttentionCore::SparseMaskParams &mask = tiling.mask;
    mask.hasMask = prob.hasMask ? 1 : 0;
    mask.strides = {0, 0, uint64_t(prob.maskCols)};
    mask.preTokens = Clamp(prob.preTokens);
    mask.nextTokens = Clamp(prob.nextTokens);
    mask.sparseMode = prob.sparseMode;
    mask.hasPrefix = prob.prefix.empty() ? 0 : 1;
    mask.bandBatch = BandBatch(prob.sparseMode, prob.seqQ, prob.seqKv);
    mask.keyAlign = prob.hasDropMask ? 16 : 1;  // with Skv % 8 == 0 each row's keep bits start on a byte
    AttentionCore::PseParams &score = tiling.score;
    score.scaleValue = prob.scale;
    score.hasPse = prob.hasPse ? 1 : 0;
    if (prob.hasPse) {
        score.pseRows = static_cast<uint32_t>(prob.pseRows);
        score.pseCols = static_cast<uint32_t>(prob.pseCols);
        score.pseStrideN = uint64_t(prob.pseRows) * uint64_t(prob.pseCols);
        score.pseStrideB = prob.pseBatch == 1 ? 0 : n * score.pseStrideN;
    }
    AttentionCore::DropoutParams &softmax = tiling.softmax;
    softmax.hasDropMask = prob.hasDropMask ? 1 : 0;
    softmax.keepProbInv = prob.hasDropMask ? 1.0f / prob.keepProb : 1.0f;
    softmax.numHeads = p.numHeads;

    uint32_t maxRows = 0;
    if (!ChooseBlocks(prob.headDim, prob.dtypeBytes, budget, maxRows, p.blockKv, p.dChunk, why, true)) return false;

    // Under a causal band (a batch whose last row sees more keys than its first) each batch's
    // short q-block (Sq_b % blockQ rows) comes first (UNITS_TAIL_FIRST): it then sees a few keys,
    // where last it would stream all of the batch's K and V for a few rows, and those short units'
    // fill and drain set the cores' ends (modelled TND [100, 3000, 1500, 700, 2200] N8 D64 causal:
    // critical path 131.5 -> 127.3 us, cores ending 125.0-130.8 -> 122.2-126.1 us; 4 x 2K N8
    // causal 161.8 -> 160.6, [300, 2900, 800, 4000] causal 231.8 -> 231.0). Not without one: there
    // every q-block sees the same keys (6 x 1K 222.7 -> 223.2 us).
    bool tailFirst = false;
    for (size_t b = 0; b < prob.seqQ.size(); ++b) {
        if (prob.seqQ[b] <= 0) continue;
        const AttentionCore::SparseBand band = BandOf(prob, mask, b);
        tailFirst = tailFirst || band.Hi(0) < band.Hi(prob.seqQ[b] - 1);
    }
    // The contiguous plan's makespan per q-block tried (ChooseQBlock keeps one of them).
    std::vector<std::pair<uint32_t, uint64_t>> contiguousOf;
    ChooseQBlock(maxRows, p, [&](AttentionCore::ForwardParams &t, uint32_t &cores) {
        if (tailFirst) t.foldQBlocks |= AttentionCore::UNITS_TAIL_FIRST;
        std::vector<uint64_t> keys, heads;
        const std::vector<uint64_t> costs = UnitCosts(prob, t, mask, &keys, &heads);
        t.unitCount = costs.size();
        cores = SplitCores(budget.aicNum, t.unitCount);
        const uint64_t contiguous = SplitContiguous(costs, cores, t.coreUnitStart);
        contiguousOf.emplace_back(t.blockQ, contiguous);
        // Where the units may be dealt by cost the q-block is chosen by that plan: larger q-blocks
        // (fewer K/V loads) whose few units contiguous ranges cut unevenly (TND [1000, 5000,
        // 2000]: 192 rows, L2 floor 269.2 -> 265.7 us).
        if (unitOrder != nullptr && t.unitCount <= maxOrder && cores > 1) {
            std::vector<uint32_t> order;
            uint64_t starts[AttentionCore::MAX_CORES + 1] = {};
            return std::min(contiguous, DealUnits(costs, keys, heads, cores, t.headDim, order, starts));
        }
        return contiguous;
    });
    // Contiguous ranges end apart by up to a unit where a core's share is a few units (causal
    // TND [300, 2900, 800, 4000]: one 2900-token head per core); dealt by cost where that plans
    // at least 1 % shorter and the table fits.
    if (unitOrder != nullptr && p.unitCount <= maxOrder && p.unitCount <= UINT32_MAX && p.usedCores > 1) {
        std::vector<uint64_t> keys, heads;
        const std::vector<uint64_t> costs = UnitCosts(prob, p, mask, &keys, &heads);
        uint64_t contiguous = 0;
        for (const auto &[blockQ, span] : contiguousOf) {
            if (blockQ == p.blockQ) contiguous = span;
        }
        const uint32_t cores = SplitCores(budget.aicNum, p.unitCount);
        uint64_t starts[AttentionCore::MAX_CORES + 1] = {};
        std::vector<uint32_t> order;
        if (DealUnits(costs, keys, heads, cores, p.headDim, order, starts) * 100 < contiguous * 99) {
            *unitOrder = std::move(order);
            std::copy(starts, starts + cores + 1, p.coreUnitStart);
            p.usedCores = cores;
            p.foldQBlocks |= AttentionCore::UNITS_TABLE;
        }
    }
    FinishForwardGeometry(p, prob.dtypeBytes, budget);
    uint64_t tokens = 0;  // the TND token axis is one "batch" of the staged K/V
    for (const int64_t len : prob.seqKv) tokens += uint64_t(std::max<int64_t>(0, len));
    // Up to D = 64 only K is staged, as in PlanForward: V's staging pass and its bytes through L2
    // cost more than the cube's Nd2Nz of V's rows (modelled TND [100, 3000, 1500, 700, 2200] N8
    // D64 causal 139.4 -> 137.2 us, its critical path 129.4 -> 134.4 us under the L2 floor).
    PlanKvNz(p, prob.dtypeBytes, tokens, 1, budget.l1, p.headDim > KV_NZ_K_ONLY_MAX_HEAD_DIM);
    // Up to D = 64 one Q and P copy for another K/V tile pair in the cache (13 tiles against 10
    // at 224-row q-blocks), as PlanForward takes it there under a mask: the forward is bound by
    // L2 above its critical path (modelled TND [100, 3000, 1500, 700, 2200] N8 D64 causal 136.2
    // -> 135.0 us, the L2 floor 134.2 -> 133.0).
    // Above it one P copy for one more K tile where that fits beside two Q copies (modelled TND 6 x
    // 1K N16 D128 224.9 -> 222.8 us, 4 x 2K causal 167.9 -> 167.2, [512 ... 4096] 393.1 -> 392.1).
    PlanKvCache(p, prob.dtypeBytes, budget.l1, p.headDim <= KV_CACHE_ONE_COPY_MAX_HEAD_DIM, false, true);
    // Up to D = 64 a band's P staircase stays off the hand-off (ForwardParams::pPieceFractals;
    // nothing changes where a block has none), in pieces of four fractal rows: this forward's cube MTE2 is close to
    // binding, so not S in pieces nor P stored per fractal row (modelled TND [100, 3000, 1500,
    // 700, 2200] N8 D64 causal 135.0 -> 134.1 us; with S in 32-row pieces 133.9, but 151.6 ->
    // 152.3 under the bandwidth ledger; P in pieces of one or two fractal rows bound the cube's
    // MTE2: 139.4 / 135.2). Above it, under a mask, S in 32-row pieces as PFA takes them
    // (modelled TND 4 x 2K N8 D128 causal 162.4 -> 161.8 us, [300 ... 4000] causal 232.4 -> 231.8).
    // With the short q-blocks first the critical path has room for S in 32-row pieces and P
    // stored per fractal row at D = 64 too (modelled TND [100 ... 2200] N8 D64 causal: S pieces
    // 133.2 -> 132.6 us, 151.1 -> 150.8 under the bandwidth ledger, before them 133.9 but 152.3
    // under the ledger; P per fractal row 132.7 -> 132.35, ledger 147.6 -> 148.0, before them
    // 134.2 with the vector cores bound). P in pieces of two fractal rows 132.1 but ledger 149.1.
    if (p.headDim <= STAIR_PIECES_MAX_HEAD_DIM) {
        p.pPieceFractals = VARLEN_STAIR_P_PIECE_FRACTALS;
        if ((p.foldQBlocks & AttentionCore::UNITS_TAIL_FIRST) != 0) {
            p.sPieceRows = BAND_S_PIECE_ROWS;
            p.pStoreFractals = STAIR_P_STORE_FRACTALS;
        }
    } else if (prob.hasMask && p.headDim <= BAND_S_PIECES_MAX_HEAD_DIM) {
        p.sPieceRows = BAND_S_PIECE_ROWS;
    }
    return true;
}

}  // namespace fa_host
