#include "forward_work_split.h"

#include "cost_rates.h"

#include <algorithm>
#include <cstddef>
#include <tuple>

namespace fa_host {

namespace {

// Mirror of the kernel's unit geometry (WorkSplit<SplitQBlocks>::Decode + MaskMod::KvRange):
// the valid rows of rows [q0, q0 + rows) of batch b and the keys [lo, hi) they see (none: hi <= lo).
int64_t UnitKeys(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
                 const AttentionCore::MaskBandParams &mask, uint32_t b, uint32_t q0, uint32_t rows, int64_t &lo,
                 int64_t &hi)
{
    int64_t len = p.seqQ;
    if (!prob.actualSeqLengths.empty()) len = prob.actualSeqLengths[prob.actualSeqLengths.size() == 1 ? 0 : b];
    const int64_t valid = std::max<int64_t>(0, std::min<int64_t>(rows, len - q0));
    lo = 0;
    hi = valid == 0 ? 0 : p.seqKv;
    if (mask.bandActive && valid != 0) {
        lo = std::max<int64_t>(lo, int64_t(q0) - mask.preTokens);
        hi = std::min<int64_t>(hi, int64_t(q0) + valid - 1 + mask.nextTokens + 1);
    }
    return valid;
}

// The first row of the q-block at position pos of a head's order (WorkSplit<SplitQBlocks>;
// with foldQBlocks 0, last, 1, last - 1, ..., FoldedQBlock in policies.h) and its row count.
uint32_t QBlockRows(const AttentionCore::ForwardParams &p, uint32_t pos, uint32_t &rows)
{
    const uint32_t count = p.qBlocksPerHead;
    const uint32_t qb = (p.foldQBlocks & AttentionCore::UNITS_FOLDED) == 0 ? pos
                        : pos % 2 == 0                                     ? pos / 2
                                                                           : count - 1 - pos / 2;
    // with UNITS_TAIL_FIRST the short one first
    const uint32_t shift =
        (p.foldQBlocks & AttentionCore::UNITS_TAIL_FIRST) != 0 ? p.qBlocksPerHead * p.blockQ - p.seqQ : 0;
    const uint32_t q0 = qb == 0 ? 0 : qb * p.blockQ - shift;
    rows = std::min((qb + 1) * p.blockQ - shift, p.seqQ) - q0;
    return q0;
}

}  // namespace

uint64_t UnitCost(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
                  const AttentionCore::MaskBandParams &mask, uint32_t b, uint32_t q0, uint32_t rows)
{
    int64_t lo = 0, hi = 0;
    const int64_t valid = UnitKeys(prob, p, mask, b, q0, rows, lo, hi);
    const uint64_t fixed = ForwardUnitCost(p);
    if (hi <= lo) return fixed;
    const uint64_t blocks = uint64_t((hi - lo + p.blockKv - 1) / p.blockKv);
    return uint64_t(hi - lo) * ForwardKeyCost(uint64_t(valid), p.headDim) + blocks * p.blockQ * BLOCK_COST_PER_ROW +
           fixed;
}

namespace {

// The costs of a batch's q-blocks in the kernel's order of a head's units (QBlockRows).
void HeadCosts(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
               const AttentionCore::MaskBandParams &mask, uint32_t b, std::vector<uint64_t> &perPos)
{
    for (uint32_t pos = 0; pos < p.qBlocksPerHead; ++pos) {
        uint32_t rows = 0;
        const uint32_t q0 = QBlockRows(p, pos, rows);
        perPos[pos] = UnitCost(prob, p, mask, b, q0, rows);
    }
}

// The kernel's unit order (WorkSplit<SplitQBlocks>::Decode), fn(b, n, pos) per unit: (batch,
// head, q-block), or (batch, q-block, head) with UNITS_HEADS_INNER, or with UNITS_PAIRED too
// (batch, folded pair, head, member); with UNITS_SHORT_LAST (batch, head, q-block) without each
// head's last q-block, then those, (batch, head).
template <class Fn> void ForEachUnit(const AttentionCore::ForwardParams &p, Fn &&fn)
{
    const uint32_t count = p.qBlocksPerHead;
    const bool headsInner = (p.foldQBlocks & AttentionCore::UNITS_HEADS_INNER) != 0;
    const bool paired = (p.foldQBlocks & AttentionCore::UNITS_PAIRED) != 0;
    for (uint32_t b = 0; b < p.batch; ++b) {
        if (paired) {
            for (uint32_t pos = 0; pos < count; pos += 2) {
                if (pos + 1 == count) {
                    for (uint32_t n = 0; n < p.numHeads; ++n) fn(b, n, pos);
                    continue;
                }
                for (uint32_t n = 0; n < p.numHeads; ++n)
                    for (uint32_t m = pos; m < pos + 2; ++m) fn(b, n, m);
            }
        } else if (headsInner) {
            for (uint32_t pos = 0; pos < count; ++pos)
                for (uint32_t n = 0; n < p.numHeads; ++n) fn(b, n, pos);
        } else {
            const uint32_t whole = (p.foldQBlocks & AttentionCore::UNITS_SHORT_LAST) != 0 ? count - 1 : count;
            for (uint32_t n = 0; n < p.numHeads; ++n)
                for (uint32_t pos = 0; pos < whole; ++pos) fn(b, n, pos);
        }
    }
    if ((p.foldQBlocks & AttentionCore::UNITS_SHORT_LAST) != 0 && !paired && !headsInner) {
        for (uint32_t b = 0; b < p.batch; ++b)
            for (uint32_t n = 0; n < p.numHeads; ++n) fn(b, n, count - 1);
    }
}

// Each unit's cost in the kernel's order (ForEachUnit).
template <class Fn>
void ForEachUnitCost(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
                     const AttentionCore::MaskBandParams &mask, Fn &&fn)
{
    std::vector<uint64_t> perPos(p.qBlocksPerHead);
    uint32_t batch = UINT32_MAX;
    ForEachUnit(p, [&](uint32_t b, uint32_t, uint32_t pos) {
        if (b != batch) HeadCosts(prob, p, mask, b, perPos);
        batch = b;
        fn(perPos[pos]);
    });
}

}  // namespace

std::vector<uint64_t> UnitCosts(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
                                const AttentionCore::MaskBandParams &mask)
{
    std::vector<uint64_t> costs;
    costs.reserve(p.unitCount);
    ForEachUnitCost(prob, p, mask, [&](uint64_t c) { costs.push_back(c); });
    return costs;
}

KvCacheModel::Unit KvCacheModel::At(uint32_t b, uint32_t n, uint32_t pos) const
{
    Unit u;
    u.b = b;
    u.kvHead = n / std::max<uint32_t>(1, p.groupSize);
    u.q0 = QBlockRows(p, pos, u.rows);
    u.valid = UnitKeys(prob, p, mask, b, u.q0, u.rows, u.lo, u.hi);
    return u;
}

uint64_t KvCacheModel::Cost(const Unit &u) const { return UnitCost(prob, p, mask, u.b, u.q0, u.rows); }

uint64_t KvCacheModel::CostAfter(const Unit &prev, const Unit &u) const
{
    const uint64_t cost = Cost(u);
    if (tiles == 0 || u.valid == 0 || prev.b != u.b || prev.kvHead != u.kvHead || prev.lo != u.lo || prev.hi > u.hi ||
        prev.lo >= prev.hi) {
        return cost;
    }
    const int64_t blockKv = p.blockKv;
    // what all of the unit's rows see: keys before q0 + nextTokens + 1 (RowsBefore)
    const int64_t seen = mask.bandActive ? int64_t(u.q0) + mask.nextTokens + 1 : u.hi;
    uint64_t full = uint64_t((prev.hi - prev.lo) / blockKv);
    uint64_t t = tiles;
    if ((prev.hi - prev.lo) % blockKv != 0) {
        const int64_t k0 = prev.lo + int64_t(full) * blockKv;
        if (l1Bufs == 1 && u.hi >= k0 + blockKv && seen >= k0 + blockKv) {
            ++full;
        } else {
            --t;
        }
    }
    uint64_t run = std::min(t, full);
    if (run != 0 && seen <= prev.lo + int64_t(full - run) * blockKv) run = 0;
    const uint64_t saved =
        ForwardKeyCost(uint64_t(u.valid), p.headDim) - ForwardKeyCost(uint64_t(u.valid), p.headDim, true);
    return cost - std::min<uint64_t>(cost, run * uint64_t(blockKv) * saved);
}

std::vector<uint64_t> UnitCostsCached(const KvCacheModel &model, std::vector<uint64_t> &first)
{
    std::vector<uint64_t> costs;
    costs.reserve(model.p.unitCount);
    first.clear();
    first.reserve(model.p.unitCount);
    KvCacheModel::Unit prev;
    ForEachUnit(model.p, [&](uint32_t b, uint32_t n, uint32_t pos) {
        const KvCacheModel::Unit u = model.At(b, n, pos);
        first.push_back(model.Cost(u));
        costs.push_back(model.CostAfter(prev, u));
        prev = u;
    });
    return costs;
}

uint64_t DealGroups(const KvCacheModel &model, uint32_t cores, std::vector<uint32_t> &order, uint64_t *starts)
{
    const AttentionCore::ForwardParams &p = model.p;
    const uint32_t count = p.qBlocksPerHead;
    const uint32_t g = std::max<uint32_t>(1, p.groupSize);
    struct Item {
        uint32_t b, n, qb;
        KvCacheModel::Unit u;
        uint64_t cost;
    };
    // a core's run order: (batch, KV head, q-block, head)
    auto before = [g](const Item &a, const Item &b) {
        return std::make_tuple(a.b, a.n / g, a.qb, a.n) < std::make_tuple(b.b, b.n / g, b.qb, b.n);
    };
    std::vector<Item> items;
    for (uint32_t b = 0; b < p.batch; ++b)
        for (uint32_t n = 0; n < p.numHeads; ++n)
            for (uint32_t qb = 0; qb < count; ++qb) {
                const KvCacheModel::Unit u = model.At(b, n, qb);
                items.push_back({b, n, qb, u, model.Cost(u)});
            }
    std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) { return a.cost > b.cost; });
    std::vector<std::vector<Item>> held(cores);
    std::vector<uint64_t> load(cores, 0);
    const KvCacheModel::Unit none;
    for (const Item &it : items) {
        uint32_t pick = cores;
        uint64_t end = 0;
        size_t at = 0;
        for (uint32_t c = 0; c < cores; ++c) {
            // the core's cost with the unit in its place, between prev and next
            const std::vector<Item> &run = held[c];
            const size_t i = static_cast<size_t>(std::upper_bound(run.begin(), run.end(), it, before) - run.begin());
            const KvCacheModel::Unit &prev = i == 0 ? none : run[i - 1].u;
            uint64_t e = load[c] + model.CostAfter(prev, it.u);
            if (i < run.size()) e = e + model.CostAfter(it.u, run[i].u) - model.CostAfter(prev, run[i].u);
            if (pick == cores || e < end || (e == end && load[c] < load[pick])) {
                pick = c;
                end = e;
                at = i;
            }
        }
        held[pick].insert(held[pick].begin() + static_cast<std::ptrdiff_t>(at), it);
        load[pick] = end;
    }
    order.clear();
    for (uint32_t c = 0; c < cores; ++c) {
        starts[c] = order.size();
        for (const Item &it : held[c]) {
            order.push_back(static_cast<uint32_t>((uint64_t(it.b) * p.numHeads + it.n) * count + it.qb));
        }
    }
    starts[cores] = order.size();
    return *std::max_element(load.begin(), load.end());
}

uint64_t ForwardUnitCost(const AttentionCore::ForwardParams &p)
{
    // The pipeline fills and drains per unit: the cube's S chain (P, V, K loads, Q.K^T, Fixpipe)
    // runs about two key blocks' time before the vector cores have their first S (trace of a
    // TND varlen case with 512-key batches, docs/performance.md "Planner costs").
    return 2ull * p.blockKv * ForwardKeyCost(p.blockQ, p.headDim);
}

uint64_t ForwardKeyCost(uint64_t rows, uint64_t headDim, bool kvCached)
{
    // In 1/KEY_COST_SCALE cube cycles per key (the rates: cost_rates.h): cube MTE2 streams
    // 2 D + rows fp16 elements, the two matmuls take 2 rows x D MACs, a vector core spends
    // KEY_VEC_PER_SCORE per score of its half, and the key's L2 traffic - K and V re-streamed
    // for the q-block (4 D bytes) and the S/P hand-off (12 B per score) - takes a core's share
    // of the device's L2 bandwidth.
    // A key whose K and V rows the cube's K/V cache holds (kvCached) streams only P.
    const uint64_t kv = kvCached ? 0 : headDim;
    const uint64_t mte2 = (2 * kv + rows) * KEY_MTE2_PER_ELEM;
    const uint64_t mmad = 2 * rows * headDim * KEY_COST_SCALE / static_cast<uint64_t>(MMAD_MACS_PER_CYCLE);
    const uint64_t vec = rows * KEY_VEC_PER_SCORE;
    const uint64_t l2 = (4 * kv + 12 * rows) * KEY_COST_SCALE / L2_DEVICE_SHARE_BYTES_PER_CYCLE;
    // in score elements (vector-bound: rows)
    return (std::max({mte2, mmad, vec, l2}) + KEY_VEC_PER_SCORE - 1) / KEY_VEC_PER_SCORE;
}

uint32_t SplitCores(uint32_t aicNum, uint64_t units)
{
    return static_cast<uint32_t>(
        std::max<uint64_t>(1, std::min<uint64_t>({uint64_t(aicNum), units, AttentionCore::MAX_CORES})));
}

uint64_t SplitContiguous(const std::vector<uint64_t> &costs, uint32_t cores, uint64_t *starts)
{
    uint64_t lo = 0, hi = 0;
    for (uint64_t c : costs) {
        lo = std::max(lo, c);
        hi += c;
    }
    auto pack = [&](uint64_t limit, uint64_t *out) {
        uint32_t used = 1;
        uint64_t acc = 0;
        if (out) out[0] = 0;
        for (size_t i = 0; i < costs.size(); ++i) {
            if (acc + costs[i] > limit) {
                if (out) out[used] = i;
                ++used;
                acc = 0;
            }
            acc += costs[i];
        }
        return used;
    };
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (pack(mid, nullptr) <= cores)
            hi = mid;
        else
            lo = mid + 1;
    }
    const uint32_t used = pack(lo, starts);
    for (uint32_t c = used; c <= cores; ++c) starts[c] = costs.size();
    return lo;
}

uint64_t SplitProportional(const ForwardProblem &prob, AttentionCore::ForwardParams &p,
                           const AttentionCore::MaskBandParams &mask, uint32_t cores)
{
    auto forEach = [&](auto &&fn) { ForEachUnitCost(prob, p, mask, fn); };
    uint64_t total = 0;
    forEach([&](uint64_t c) { total += c; });
    uint64_t unit = 0, acc = 0, rangeStart = 0, span = 0;
    uint32_t core = 0;
    p.coreUnitStart[0] = 0;
    forEach([&](uint64_t c) {
        acc += c;
        ++unit;
        if (core + 1 < cores && acc * cores >= total * (core + 1)) {
            p.coreUnitStart[++core] = unit;
            span = std::max(span, acc - rangeStart);
            rangeStart = acc;
        }
    });
    span = std::max(span, acc - rangeStart);
    for (uint32_t c = core + 1; c <= cores; ++c) p.coreUnitStart[c] = p.unitCount;
    return span;
}

bool OrderRangesForVPass(const ForwardProblem &prob, AttentionCore::ForwardParams &p,
                         const AttentionCore::MaskBandParams &mask, uint64_t maxOrder, std::vector<uint32_t> &order)
{
    constexpr uint32_t PLAIN = AttentionCore::UNITS_FOLDED | AttentionCore::UNITS_TAIL_FIRST;
    if (p.vAbsMaxElems == 0 || mask.bandActive == 0 || (p.foldQBlocks & ~PLAIN) != 0 || p.tailSplits > 1 ||
        p.unitCount == 0 || p.unitCount > maxOrder || p.unitCount > UINT32_MAX || p.qBlocksPerHead == 0) {
        return false;
    }
    // (batch, head, q-block) positions are the unit ids here: UnitCosts is in that order
    const std::vector<uint64_t> costs = UnitCosts(prob, p, mask);
    order.resize(p.unitCount);
    for (uint64_t i = 0; i < p.unitCount; ++i) order[i] = static_cast<uint32_t>(i);
    const uint32_t count = p.qBlocksPerHead;
    for (uint32_t c = 0; c < p.usedCores; ++c) {
        const auto b = order.begin() + static_cast<std::ptrdiff_t>(p.coreUnitStart[c]);
        const auto e = order.begin() + static_cast<std::ptrdiff_t>(p.coreUnitStart[c + 1]);
        if (e <= b) continue;
        std::stable_sort(b, e, [&](uint32_t x, uint32_t y) {
            return x / count != y / count ? x / count < y / count : costs[x] < costs[y];
        });
        auto longest = b;
        for (auto i = b; i != e; ++i) {
            if (costs[*i] > costs[*longest]) longest = i;
        }
        std::rotate(b, longest, longest + 1);
    }
    p.foldQBlocks |= AttentionCore::UNITS_TABLE;
    return true;
}

}  // namespace fa_host
