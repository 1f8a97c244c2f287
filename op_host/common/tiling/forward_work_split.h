// The forward planner's units over the cores: each unit's planned cost (a mirror of the
// kernel's unit geometry and order, with the cube's K/V cache reuse between neighbours) and the
// ways to cut the units over the cores - contiguous ranges (SplitContiguous, forward_tiling.h),
// proportional ranges for very many units, and a deal by cost with a unit table.
#pragma once

#include "forward_tiling.h"

#include <cstdint>
#include <vector>

namespace fa_host {

// A unit's cost: priced per visible key by ForwardKeyCost, plus a fixed share per block
// (hand-off, rescale) and per unit (Q load, normalisation, output).
uint64_t UnitCost(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
                  const AttentionCore::MaskBandParams &mask, uint32_t b, uint32_t q0, uint32_t rows);

// Every unit's cost (UnitCost) in the kernel's order: (batch, head, q-block), or (batch,
// q-block, head) with UNITS_HEADS_INNER, or (batch, folded pair, head, member) with UNITS_PAIRED;
// with UNITS_SHORT_LAST every head's last q-block after all the others, (batch, head).
std::vector<uint64_t> UnitCosts(const ForwardProblem &prob, const AttentionCore::ForwardParams &p,
                                const AttentionCore::MaskBandParams &mask);

// The cube's K/V cache as the planner sees it (policies.h PlanKvReuse, mirrored for whole
// units): `tiles` tiles with `l1Bufs` Q and P copies. A unit that runs right after one of the
// same (batch, KV head) whose keys start where its own start and which it sees all of - a
// head's later q-block, or a GQA group's next head on the same q-block - takes up to `tiles` of
// those blocks first without loading K and V (ForwardKeyCost's kvCached rate per key).
struct KvCacheModel {
    const ForwardProblem &prob;
    const AttentionCore::ForwardParams &p;
    const AttentionCore::MaskBandParams &mask;
    uint32_t tiles, l1Bufs;

    struct Unit {
        uint32_t b = UINT32_MAX, kvHead = 0, q0 = 0, rows = 0;
        int64_t lo = 0, hi = 0, valid = 0;
    };
    // Unit pos of head n of batch b's order (the kernel's q-block order, QBlockRows).
    Unit At(uint32_t b, uint32_t n, uint32_t pos) const;
    // The unit's cost with nothing before it on the core.
    uint64_t Cost(const Unit &u) const;
    // Its cost right after `prev` on the core.
    uint64_t CostAfter(const Unit &prev, const Unit &u) const;
};

// The unit costs in the kernel's order with the K/V cache's reuse between neighbours
// (KvCacheModel); `first` gets each unit's cost where it opens a core's range.
std::vector<uint64_t> UnitCostsCached(const KvCacheModel &model, std::vector<uint64_t> &first);

// Deals the units to `cores` cores by cost with the K/V cache's reuse in view (UNITS_TABLE; unit
// ids in the (batch, head, q-block) order): the units, largest first, each to the core where it
// would end earliest - a core's units run by (batch, KV head, q-block, head), so a unit costs
// less on a core that holds its group's units of that q-block or its KV head's earlier q-blocks
// (KvCacheModel). A fixed order cut into contiguous ranges cannot both keep a group's units
// together and end even: a group of a late causal q-block is most of a core's share (B1 N8/2
// S2K, 4.3 units per core: (folded pair, KV head, member, head) in ranges modelled 49.6 us, its
// cores 30-47 us apart as planned, against 45.8 for the folded order, whose units pair a light
// q-block with a heavy one; dealt, 45.8 us with the cores within 2 us and 5 % less L2). Writes the
// table to `order` and the position starts to `starts`; returns the planned makespan.
uint64_t DealGroups(const KvCacheModel &model, uint32_t cores, std::vector<uint32_t> &order, uint64_t *starts);

// Where the vector cores take max|V| from a read-only pass (ForwardParams::vAbsMaxElems) under a
// band, with plain ranges (bits UNITS_FOLDED / UNITS_TAIL_FIRST only, no split-KV tail): each
// core's range in a unit table (UNITS_TABLE, the same units per core), its longest unit first
// and then each head's q-blocks in ascending cost. The first unit then ends after the pass's
// meeting, so its final sum can go fp16 (a short first unit keeps fp32), and each later q-block
// of a head finds the keys the one before ran last in the cube's K/V cache (a folded order
// alternates light and heavy q-blocks, and a heavy one's last keys serve no lighter one).
// Writes the table to `order` (at most maxOrder entries) and returns whether it did.
bool OrderRangesForVPass(const ForwardProblem &prob, AttentionCore::ForwardParams &p,
                         const AttentionCore::MaskBandParams &mask, uint64_t maxOrder, std::vector<uint32_t> &order);

// For very many units: one streaming pass that cuts where the running cost reaches each
// core's share of the total (as balanced as the optimal cut to within one unit's cost).
uint64_t SplitProportional(const ForwardProblem &prob, AttentionCore::ForwardParams &p,
                           const AttentionCore::MaskBandParams &mask, uint32_t cores);

}  // namespace fa_host
