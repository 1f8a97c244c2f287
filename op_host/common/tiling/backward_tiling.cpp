// Host planning of the backward attention core; see backward_tiling.h.
#include "backward_tiling.h"

#include <algorithm>

#include "../../../op_kernel/attention_core/backward/backward_layout.h"
#include "../../../op_kernel/attention_core/common/sparse_mode.h"
#include "cost_rates.h"

namespace fa_host {

namespace {

constexpr uint32_t BLOCK_KV = 128;
constexpr uint32_t D_CHUNK = 128;
constexpr uint64_t UB_API_RESERVE = 8192;
constexpr uint32_t MAX_Q_SPLIT = 16;
constexpr int64_t BAND_LIMIT = AttentionCore::SPARSE_UNBOUNDED;
// Unit pricing in query rows (a step of 128 rows at D = 128 is ~3050 Fixpipe cycles, ~21 per
// row): a step's fixed share, its twelve 32-cycle Fixpipe heads (~18 rows) and its flag
// round trips; a unit's, the flush of its dK/dV accumulators with accumKv (dK fp32 and dV
// fp16: 2 x 32 + 96 x 128 x (4 / 86 + 2 / 86) = 922 Fixpipe cycles, ~44 rows), during which
// the next unit's first dV Mmad waits, the K/V staging and the vector cores' cast of its dK.
// Both set from the modelled timeline of TND 1 x 4K N8 causal, where the cores holding 25
// short units ended ~10 us after those holding 9 long ones at the same planned cost with 16
// and 64; with K/V read into L2 ahead of the cube and K staged a step early a unit start costs
// less, and 64 (was 128) per unit gave the shortest 4K causal (423.8 us against 425.2 with 96
// and 424.4 with 32, modelled).
constexpr double STEP_SHARE = 32;
constexpr double UNIT_SHARE = 64;

uint64_t Align512(uint64_t x) { return (x + 511) / 512 * 512; }

int64_t BandBatchIndex(const BackwardProblem &prob)
{
    const int64_t batch = int64_t(prob.cumQ.size());
    int64_t first = -1, last = -1;
    for (int64_t b = 0; b < batch; ++b) {
        const int64_t sq = prob.cumQ[b] - (b == 0 ? 0 : prob.cumQ[b - 1]);
        const int64_t sk = prob.cumKv[b] - (b == 0 ? 0 : prob.cumKv[b - 1]);
        if (sq > 0 && sk > 0) {
            if (first < 0) first = b;
            last = b;
        }
    }
    return prob.sparseMode == 7 ? last : (prob.sparseMode == 8 ? first : -1);
}

// Planned cost of every unit (batch, kv head, kv block, query slice), in the kernel's order:
// the query rows of the group that see the block, a share per query block (hand-off) and per
// unit (K/V staging). Per step (UnitStepCosts, the kernel's walk order: heads of the group, then
// query blocks) the block's rows and its share; the unit's share goes with its first step.
std::vector<std::vector<double>> UnitStepCosts(const BackwardProblem &prob, const AttentionCore::BackwardParams &p,
                                               uint32_t qSplit, std::vector<std::vector<int64_t>> *stepRows = nullptr)
{
    std::vector<std::vector<double>> units;
    for (int64_t b = 0; b < int64_t(p.batch); ++b) {
        const int64_t sq = prob.cumQ[b] - (b == 0 ? 0 : prob.cumQ[b - 1]);
        const int64_t sk = prob.cumKv[b] - (b == 0 ? 0 : prob.cumKv[b - 1]);
        const AttentionCore::SparseBand band =
            AttentionCore::MakeSparseBand(p.mask.sparseMode, prob.hasMask, p.mask.preTokens, p.mask.nextTokens, sq, sk,
                                          prob.prefix.empty() ? 0 : prob.prefix[b], b == p.mask.bandBatch);
        const int64_t bk = p.blockKv;
        const int64_t blocks = (sk + bk - 1) / bk;
        for (int64_t h = 0; h < prob.numKvHeads; ++h) {
            for (int64_t j = 0; j < blocks; ++j) {
                const int64_t k0 = j * bk;
                const int64_t cols = std::min<int64_t>(bk, sk - k0);
                int64_t lo = 0, hi = 0;
                AttentionCore::BackwardVisibleRows(band, k0, cols, sq, lo, hi);
                const int64_t nb = (hi - lo + p.blockQ - 1) / p.blockQ;
                for (uint32_t s = 0; s < qSplit; ++s) {
                    const int64_t b0 = nb * s / qSplit, b1 = nb * (s + 1) / qSplit;
                    std::vector<double> steps;
                    std::vector<int64_t> first;  // each step's first query row (batch-relative)
                    for (uint32_t g = 0; g < p.groupSize; ++g) {
                        for (int64_t q = b0; q < b1; ++q) {
                            const int64_t rows = std::min<int64_t>(p.blockQ, hi - (lo + q * p.blockQ));
                            steps.push_back(double(rows + STEP_SHARE) + (steps.empty() ? UNIT_SHARE : 0.0));
                            first.push_back(lo + q * p.blockQ);
                        }
                    }
                    units.push_back(steps);
                    if (stepRows != nullptr) {
                        stepRows->push_back(first);
                    }
                }
            }
        }
    }
    return units;
}

std::vector<double> UnitCosts(const std::vector<std::vector<double>> &units)
{
    std::vector<double> cost;
    for (const auto &steps : units) {
        double c = steps.empty() ? 32.0 : 0.0;
        for (double s : steps) c += s;
        cost.push_back(c);
    }
    return cost;
}

// Cut at step granularity: core c starts `offsets[c]` steps into unit `starts[c]` (the earlier
// core takes the steps before), each range about total/cores; returns the largest range. A
// unit cut there is shared by two cores (its dK/dV sums are added, BackwardStep::shared).
double CutSteps(const std::vector<std::vector<double>> &units, uint32_t cores, std::vector<uint64_t> &starts,
                std::vector<uint32_t> &offsets)
{
    double total = 0;
    uint64_t steps = 0;
    for (const auto &u : units) {
        for (double s : u) total += s;
        steps += u.size();
    }
    const uint64_t used = std::max<uint64_t>(1, std::min<uint64_t>(cores, steps));
    starts.assign(1, 0);
    offsets.assign(1, 0);
    std::vector<double> range(1, 0.0);
    double run = 0;
    for (uint64_t u = 0; u < units.size(); ++u) {
        for (uint32_t k = 0; k < units[u].size(); ++k) {
            const double next = run + units[u][k];
            // a new range starts at this step when that brings the boundary nearer its target
            const double target = total * double(starts.size()) / double(used);
            if (starts.size() < used && next > target && target - run < next - target && run > 0) {
                starts.push_back(u);
                offsets.push_back(k);
                range.push_back(0.0);
            }
            range.back() += units[u][k];
            run = next;
        }
    }
    starts.push_back(units.size());
    offsets.push_back(0);
    return *std::max_element(range.begin(), range.end());
}

// Fills ranges greedily, each up to `span`; the starts of the ranges, or empty when more
// than `cores` ranges would be needed.
std::vector<uint64_t> FillRanges(const std::vector<double> &cost, uint32_t cores, double span)
{
    std::vector<uint64_t> starts(1, 0);
    double run = 0;
    for (uint64_t u = 0; u < cost.size(); ++u) {
        if (run > 0 && run + cost[u] > span) {
            if (starts.size() == cores) return {};
            starts.push_back(u);
            run = 0;
        }
        run += cost[u];
    }
    starts.push_back(cost.size());
    return starts;
}

// Contiguous cut of `cost` into at most `cores` ranges with the smallest largest range (the
// linear partition: bisection on the span, greedy fill); returns that largest range.
double CutRanges(const std::vector<double> &cost, uint32_t cores, std::vector<uint64_t> &starts)
{
    cores = std::max<uint32_t>(1, std::min<uint64_t>(cores, std::max<size_t>(1, cost.size())));
    double total = 0, biggest = 0;
    for (double c : cost) {
        total += c;
        biggest = std::max(biggest, c);
    }
    double lo = std::max(biggest, total / cores), hi = total;
    starts = FillRanges(cost, cores, hi);
    for (int it = 0; it < 60 && hi - lo > 1e-6 * hi; ++it) {
        const double mid = 0.5 * (lo + hi);
        std::vector<uint64_t> s = FillRanges(cost, cores, mid);
        if (s.empty()) {
            lo = mid;
        } else {
            hi = mid;
            starts.swap(s);
        }
    }
    double span = 0;
    for (size_t c = 0; c + 1 < starts.size(); ++c) {
        double r = 0;
        for (uint64_t u = starts[c]; u < starts[c + 1]; ++u) r += cost[u];
        span = std::max(span, r);
    }
    return span;
}

// The steps whose S/dP the cube issues before the first barrier (earlySteps), and the slots.
// Before it each core's two vector cores read their share of dO and O (tq x N rows of D) for
// the row terms from HBM, and the cube would wait. Meanwhile it can stage and issue its first
// steps: Q and dO (blockQ rows each), and K and V at a unit's start, as Nd2Nz copies from HBM
// (the cost table's rates: cost_rates.h). earlySteps is the fewest steps a core
// stages within PASS_SHARE of the pass (the barrier waits for the last core), where that is more than the
// pipelined + 1 the loop issues before the barrier anyway, and at most BWD_MAX_EARLY_STEPS.
void PlanEarlySteps(const BackwardProblem &prob, AttentionCore::BackwardParams &p)
{
    // The share of the pass the cube stages in: a fit (2x2K N32 causal, modelled: 8 steps
    // 883.4 us, 939.6 with HBM shared over time; 10 steps 882.4 and 940.9; 9, 11 and 12 steps
    // 882.8, 883.0 and 884.5: more early steps leave the vector cores a longer backlog of
    // P/dS after the barrier, and with HBM shared over time the cube's reads slow the pass's).
    constexpr double PASS_SHARE = 0.9;
    const uint32_t used = std::max<uint32_t>(1, p.usedCores);
    const double pass = PASS_SHARE * double(prob.tq) * prob.numHeads * prob.headDim * prob.dtypeBytes * 2 / used /
                        (2 * HBM_READ_BYTES_PER_CYCLE);
    const auto copy = [&](double rows) {
        return DMA_HEAD_CYCLES + rows * ND2NZ_ROW_CYCLES +
               rows * prob.headDim * prob.dtypeBytes / HBM_READ_BYTES_PER_CYCLE;
    };
    const std::vector<std::vector<double>> units = UnitStepCosts(prob, p, p.qSplit);
    uint64_t early = AttentionCore::BWD_MAX_EARLY_STEPS;
    for (uint32_t c = 0; c < used; ++c) {  // core c's steps, unit by unit, while the pass lasts
        double t = 0;
        uint64_t n = 0;
        bool done = false;
        for (uint64_t u = p.coreUnitStart[c]; !done && u <= p.coreUnitStart[c + 1] && u < units.size(); ++u) {
            const uint64_t first = u == p.coreUnitStart[c] ? p.coreStepStart[c] : 0;
            const uint64_t end = u == p.coreUnitStart[c + 1] ? p.coreStepStart[c + 1] : units[u].size();
            t += 2 * copy(p.blockKv);  // K and V
            for (uint64_t k = first; !done && k < end; ++k) {
                t += 2 * copy(p.blockQ);  // Q and dO
                done = t > pass || n == early;
                n += done ? 0 : 1;
            }
        }
        if (done) {  // a core whose steps end within the pass leaves the barrier to the pass
            early = std::min(early, n);
        }
    }
    p.earlySteps = early > p.pipelined + 1 ? uint32_t(early) : 0;
    p.slots = std::max<uint32_t>({2, p.pipelined + 1, p.earlySteps});
}

// The first rows of the group after a core's owned ones (dqTailRows) that it casts in its main
// loop: with one query slice, from a group that starts in its range and that no core owns.
// A step-by-step copy of the vector cores' casts (BackwardVector::CastOwnedDq, CastTailDq):
// each vector core casts up to `pass` rows per step, its owned groups' halves first, each once
// pipelined + 1 steps after the group's last step; the tail group's rows in chunks of `pass`
// rows (chunk m on sub-block m % 2) up to the rows final after a unit, those below the next
// unit's visible rows, which no later core touches. The rows both vector cores have cast by
// the core's last step are its share: what is left after the loop would hold the final
// barrier back, while the rest is cast after it by all.
void PlanDqTailRows(const BackwardProblem &prob, AttentionCore::BackwardParams &p, uint64_t pass)
{
    if (p.qSplit != 1) {
        return;
    }
    std::vector<std::vector<int64_t>> rows;
    const std::vector<std::vector<double>> units = UnitStepCosts(prob, p, p.qSplit, &rows);
    std::vector<uint64_t> before(1, 0), unitGroup, groupUnit(1, 0), tokens;  // positions, groups
    for (const auto &u : units) before.push_back(before.back() + u.size());
    for (int64_t b = 0; b < int64_t(p.batch); ++b) {
        const int64_t sq = prob.cumQ[b] - (b == 0 ? 0 : prob.cumQ[b - 1]);
        const int64_t sk = prob.cumKv[b] - (b == 0 ? 0 : prob.cumKv[b - 1]);
        const uint64_t blocks = uint64_t((sk + p.blockKv - 1) / p.blockKv);
        for (uint32_t h = 0; h < p.numKvHeads; ++h) {
            unitGroup.insert(unitGroup.end(), blocks, tokens.size());
            tokens.push_back(uint64_t(sq));
            groupUnit.push_back(groupUnit.back() + blocks);
        }
    }
    // position -> (unit, step)
    auto unitAt = [&](uint64_t pos) {
        return uint64_t(std::upper_bound(before.begin(), before.end(), pos) - before.begin()) - 1;
    };
    const uint32_t used = p.usedCores;
    for (uint32_t c = 0; c < used; ++c) {
        const uint64_t g = p.dqCastHi[c];
        const bool last = c + 1 == used;
        if (g >= tokens.size() || (!last && g >= p.dqCastLo[c + 1]) || groupUnit[g] == groupUnit[g + 1]) {
            continue;
        }
        const uint64_t c0 = before[p.coreUnitStart[c]] + p.coreStepStart[c];
        const uint64_t c1 = before[p.coreUnitStart[c + 1]] + (last ? 0 : p.coreStepStart[c + 1]);
        const uint64_t gStart = before[groupUnit[g]], gEnd = before[groupUnit[g + 1]];
        if (gStart < c0 || gStart >= c1) {
            continue;
        }
        int64_t bound = int64_t(tokens[g]);  // the first row a later core touches
        for (uint64_t pos = c1; pos < gEnd; ++pos) {
            const uint64_t u = unitAt(pos);
            bound = std::min(bound, rows[u][pos - before[u]]);
        }
        // the casts of both vector cores, step by step
        uint64_t firstUncast[2] = {0, 0};
        for (uint32_t sub = 0; sub < 2; ++sub) {
            uint64_t readyUpto = 0, castGroup = p.dqCastLo[c], castTok = 0;
            uint64_t tailReady = 0, chunk = sub, done = 0;
            std::vector<std::pair<uint64_t, uint64_t>> groupsDone, tailDone;  // (upto, last step)
            size_t gHead = 0, tHead = 0;
            for (uint64_t pos = c0; pos < c1; ++pos) {
                const uint64_t i = pos - c0, u = unitAt(pos), gs = unitGroup[u];
                const bool more = pos + 1 < c1;
                const uint64_t un = more ? unitAt(pos + 1) : u, gn = unitGroup[un];
                if (i == 0) {
                    readyUpto = gs;
                }
                if (more && gn != gs) {
                    groupsDone.emplace_back(gn, i);
                }
                for (; gHead < groupsDone.size() && groupsDone[gHead].second + p.pipelined + 1 <= i; ++gHead) {
                    readyUpto = groupsDone[gHead].first;
                }
                uint64_t budget = pass;
                const uint64_t hi = std::min<uint64_t>(p.dqCastHi[c], readyUpto);
                while (budget != 0 && castGroup < hi) {
                    const uint64_t half = (tokens[castGroup] + 1) / 2;
                    const uint64_t mine = sub == 0 ? half : tokens[castGroup] - half;
                    if (castTok >= mine) {
                        ++castGroup;
                        castTok = 0;
                        continue;
                    }
                    const uint64_t n = std::min(mine - castTok, budget);
                    castTok += n;
                    budget -= n;
                }
                if (gs == g && (!more || un != u)) {
                    const uint64_t upto = more && gn == g ? std::min<uint64_t>(rows[un][0], bound) : bound;
                    tailDone.emplace_back(upto, i);
                }
                for (; tHead < tailDone.size() && tailDone[tHead].second + p.pipelined + 1 <= i; ++tHead) {
                    tailReady = tailDone[tHead].first;
                }
                while (castGroup >= p.dqCastHi[c] && budget != 0 && chunk * pass < uint64_t(bound)) {
                    const uint64_t end = std::min<uint64_t>((chunk + 1) * pass, bound);
                    const uint64_t from = chunk * pass + done, to = std::min(end, tailReady);
                    if (from >= to) {
                        break;
                    }
                    const uint64_t n = std::min(to - from, budget);
                    done += n;
                    budget -= n;
                    if (from + n >= end) {
                        chunk += 2;
                        done = 0;
                    }
                }
            }
            firstUncast[sub] = std::min<uint64_t>(chunk * pass + done, bound);
        }
        p.dqTailRows[c] = std::min(firstUncast[0], firstUncast[1]);
    }
}

// The dQ groups (batch, KV head) each core casts in its main loop: those whose units all lie
// in its range of (unit, step) positions; a group without units goes to the core whose range
// holds its position (the last core past the end). A core's last groups stay out where fewer
// of its steps follow them than their cast takes (a pass of half its tokens per step,
// BackwardVector::DqCastPass, after pipelined + 1 steps): cast after the loop they would hold
// the final barrier back, while the groups cut by a core boundary are cast after it by all.
// Only with accumKv (the cube adds every dQ partial itself: a group's rows are final once its
// last dQ Fixpipe is out) and where a pass of the cast holds two group rows (G x D floats).
void PlanDqGroupCast(const BackwardProblem &prob, AttentionCore::BackwardParams &p)
{
    const uint64_t width = (uint64_t(p.groupSize) * p.headDim + 7) / 8 * 8;
    const AttentionCore::BackwardVectorUb ub = AttentionCore::BackwardVectorUbLayout(
        p.rowsPerVec, p.tileKv, p.headDimAlign, prob.dtypeBytes, 256, p.prefetchRows);
    if (p.accumKv == 0 || p.ropeDim != 0 || 2 * width > ub.rowCells) {
        return;
    }
    p.dqGroupCast = 1;
    const uint64_t fit = width * prob.dtypeBytes % 32 == 0 ? ub.rowCells / width : 1;
    const uint64_t pass = std::max<uint64_t>(1, fit / 2);
    // steps before each unit: positions (unit, step) as step indices
    std::vector<uint64_t> before(1, 0);
    for (const auto &u : UnitStepCosts(prob, p, p.qSplit)) before.push_back(before.back() + u.size());
    const uint32_t used = p.usedCores;
    auto at = [&](uint64_t u, uint32_t s) { return before[u] + s; };
    std::vector<bool> any(used, false);
    std::vector<uint64_t> endStep, castSteps;  // per group: its end, the steps its cast takes
    uint64_t unit = 0;
    uint64_t group = 0;
    for (int64_t b = 0; b < int64_t(p.batch); ++b) {
        const int64_t sq = prob.cumQ[b] - (b == 0 ? 0 : prob.cumQ[b - 1]);
        const int64_t sk = prob.cumKv[b] - (b == 0 ? 0 : prob.cumKv[b - 1]);
        const uint64_t blocks = uint64_t((sk + p.blockKv - 1) / p.blockKv) * p.qSplit;
        for (uint32_t h = 0; h < p.numKvHeads; ++h, ++group, unit += blocks) {
            const uint64_t start = at(unit, 0), end = at(unit + blocks, 0);
            endStep.push_back(end);
            castSteps.push_back((uint64_t(sq) + 1) / 2 / pass + 1 + p.pipelined + 1);
            for (uint32_t c = 0; c < used; ++c) {
                const bool last = c + 1 == used;
                const uint64_t c0 = at(p.coreUnitStart[c], p.coreStepStart[c]);
                const uint64_t c1 = at(p.coreUnitStart[c + 1], last ? 0 : p.coreStepStart[c + 1]);
                const bool inside = blocks == 0 ? start >= c0 && (start < c1 || last) : start >= c0 && end <= c1;
                if (inside && (blocks != 0 || c1 > c0 || last)) {
                    if (!any[c]) {
                        p.dqCastLo[c] = group;
                        any[c] = true;
                    }
                    p.dqCastHi[c] = group + 1;
                    break;
                }
            }
        }
    }
    bool owns = false;
    for (uint32_t c = 0; c < used; ++c) {
        if (!any[c]) {  // an empty range, at the next core's start (the ranges stay in order)
            p.dqCastLo[c] = c == 0 ? 0 : p.dqCastHi[c - 1];
            p.dqCastHi[c] = p.dqCastLo[c];
            continue;
        }
        const uint64_t c1 = at(p.coreUnitStart[c + 1], c + 1 == used ? 0 : p.coreStepStart[c + 1]);
        while (p.dqCastHi[c] > p.dqCastLo[c] && endStep[p.dqCastHi[c] - 1] + castSteps[p.dqCastHi[c] - 1] > c1) {
            --p.dqCastHi[c];
        }
        owns = owns || p.dqCastHi[c] > p.dqCastLo[c];
    }
    p.dqGroupCast = owns ? 1 : 0;  // else the flat cast-out, evenly shared
    if (owns) {
        PlanDqTailRows(prob, p, pass);
    }
}

}  // namespace

// BackwardVector's UB (backward_layout.h) with the alibi row and the dsink row of the most heads
// (256) the operator takes.
uint64_t BackwardUbBytes(uint32_t r, uint32_t blockKv, uint32_t dp, uint32_t dtypeBytes, uint32_t prefetchRows)
{
    return AttentionCore::BackwardVectorUbLayout(r, blockKv, dp, dtypeBytes, 256, prefetchRows).Total();
}

// BackwardCube's L1 (backward_layout.h) with `sets` step tile sets (tileSets).
uint64_t BackwardL1Bytes(uint32_t bq, uint32_t bk, uint32_t dp, uint32_t drp, uint32_t dtypeBytes, uint32_t sets)
{
    return AttentionCore::BackwardCubeL1Layout(bq, bk, dp, drp, dtypeBytes, sets).Total();
}

bool PlanBackward(const BackwardProblem &prob, const CoreBudget &budget, AttentionCore::BackwardParams &p,
                  std::string &why)
{
    p = AttentionCore::BackwardParams{};
    const uint32_t dp = uint32_t((prob.headDim + 15) / 16 * 16);
    const uint32_t drp = uint32_t((prob.ropeDim + 15) / 16 * 16);
    // The largest query block that fits with the pipelined cube (down to 32 rows, rowsPerVec
    // 16), else the largest that fits without it; half-size key blocks only where no block of
    // 128 keys fits (FLOAT32 with a large D).
    uint32_t r = 0, bk = 0;
    bool pipelined = false;
    for (uint32_t kvCand : {BLOCK_KV, BLOCK_KV / 2}) {
        for (bool pipe : {true, false}) {
            for (uint32_t cand : {64u, 32u, 16u, 8u}) {
                if ((pipe && cand < 16) || r != 0) continue;
                if (BackwardUbBytes(cand, kvCand, dp, prob.dtypeBytes) + UB_API_RESERVE <= budget.ub &&
                    BackwardL1Bytes(2 * cand, kvCand, dp, drp, prob.dtypeBytes, pipe ? 2 : 1) <= budget.l1) {
                    r = cand;
                    bk = kvCand;
                    pipelined = pipe;
                }
            }
        }
    }
    if (r == 0) {
        why = "no query block fits UB/L1 for head dim " + std::to_string(prob.headDim);
        return false;
    }
    p.batch = uint32_t(prob.cumQ.size());
    p.numHeads = uint32_t(prob.numHeads);
    p.numKvHeads = uint32_t(prob.numKvHeads);
    p.groupSize = uint32_t(prob.numHeads / prob.numKvHeads);
    p.headDim = uint32_t(prob.headDim);
    p.headDimAlign = dp;
    p.ropeDim = uint32_t(prob.ropeDim);
    p.ropeDimAlign = drp;
    p.tq = uint64_t(prob.tq);
    p.tkv = uint64_t(prob.tkv);
    p.scaleValue = prob.scale;
    p.statsTnd = (prob.statsTnd ? 1u : 0u) | (prob.sumStatsTnd ? 2u : 0u);
    AttentionCore::SparseMaskParams &mask = p.mask;
    mask.sparseMode = uint32_t(prob.sparseMode);
    mask.hasMask = prob.hasMask ? 1 : 0;
    mask.preTokens = std::clamp(prob.preTokens, -BAND_LIMIT, BAND_LIMIT);
    mask.nextTokens = std::clamp(prob.nextTokens, -BAND_LIMIT, BAND_LIMIT);
    mask.strides = {prob.mask.b, prob.mask.n, prob.mask.s};
    mask.bandBatch = BandBatchIndex(prob);
    mask.hasPrefix = prob.prefix.empty() ? 0 : 1;
    mask.keyAlign = prob.hasDropMask ? 16 : 1;
    p.blockQ = 2 * r;
    p.blockKv = bk;
    p.tileKv = bk;
    p.rowsPerVec = r;
    p.pipelined = pipelined ? 1 : 0;  // deeper below, where L1 allows
    p.tileSets = pipelined ? 2 : 1;
    p.dChunk = D_CHUNK;
    {
        // Two copies of the cube's L0 tiles (backward_cube.h) where they fit.
        const uint64_t wide = std::max(p.blockQ, p.blockKv), deep = std::max<uint64_t>(p.dChunk, wide);
        const bool twoL0 =
            2 * wide * deep * prob.dtypeBytes <= budget.l0a && 2 * wide * p.dChunk * prob.dtypeBytes <= budget.l0b;
        p.l0Bufs = twoL0 && 2 * wide * deep * 4 <= budget.l0c ? 2 : 1;
        p.resElems = uint32_t(wide * deep);
        // dK/dV accumulated in L0C over a unit (docs/attention_core.md, "Backward"): per step
        // the Fixpipe then carries S, dP and the dQ partial only. It needs the two
        // accumulators (blockKv x D fp32 each) beside two result tiles of >= 32 rows, so the
        // key block shrinks to what fits (96 keys at D = 128); 16-bit inputs without a rope
        // part and D <= dChunk only (one depth pass per matmul).
        if (twoL0 && prob.dtypeBytes == 2 && prob.ropeDim == 0 && dp <= D_CHUNK) {
            for (uint32_t kv = bk; kv >= 32; kv -= 16) {
                const uint64_t acc = 2ull * kv * dp * 4;
                const uint64_t res = acc < budget.l0c ? (budget.l0c - acc) / 2 / 4 : 0;
                if (res >= 32ull * std::max<uint64_t>(dp, kv)) {
                    p.accumKv = 1;
                    p.blockKv = kv;
                    p.resElems = uint32_t(res / 256 * 256);  // whole 16 x 16 fp32 fractals
                    p.l0Bufs = 2;
                    break;
                }
            }
        }
    }

    // Deeper pipelining where L1 holds it, the deepest first: two steps ahead with the tiles
    // staged a step early (4 sets), else two steps ahead (3 sets).
    if (pipelined) {
        const uint32_t deeper[2][2] = {{2, 4}, {2, 3}};  // pipelined, tile sets
        for (const auto &c : deeper) {
            if (BackwardL1Bytes(p.blockQ, p.blockKv, dp, drp, prob.dtypeBytes, c[1]) <= budget.l1) {
                p.pipelined = c[0];
                p.tileSets = c[1];
                break;
            }
        }
    }
    // The K/V prefetch where its landing rows fit UB beside the rest.
    if (BackwardUbBytes(r, p.tileKv, dp, prob.dtypeBytes, p.blockKv) + UB_API_RESERVE <= budget.ub) {
        p.prefetchRows = p.blockKv;
    }

    // Unit costs: the query rows (all heads of the group) that see the kv block, plus a share
    // for streaming K/V of the block and for each query block.
    p.hasPse = prob.hasPse ? 1 : 0;
    p.pseType = uint32_t(prob.pseType);
    // The forward's ScoreMod<ScorePse> runs types 0/1 (type 0 scales before the pse: its scale
    // is 1 and the backward applies the scale first).
    p.score.scaleValue = prob.pseType == 0 ? 1.0f : prob.scale;
    p.score.hasPse = prob.hasPse && prob.pseType <= 1 ? 1 : 0;
    if (prob.hasPse && prob.pseType >= 2) {
        p.slopeStrideB = prob.pseBatch == 1 ? 0 : uint64_t(prob.numHeads);
        p.qStartCount = uint32_t(prob.qStartCount);
        p.kvStartCount = uint32_t(prob.kvStartCount);
    } else if (prob.hasPse) {
        p.score.pseRows = uint32_t(prob.pseRows);
        p.score.pseCols = uint32_t(prob.pseCols);
        p.score.pseStrideN = uint64_t(prob.pseRows) * uint64_t(prob.pseCols);
        p.score.pseStrideB = prob.pseBatch == 1 ? 0 : uint64_t(prob.numHeads) * p.score.pseStrideN;
    }
    p.softmax.hasDropMask = prob.hasDropMask ? 1 : 0;
    p.softmax.keepProbInv = prob.hasDropMask ? 1.0f / prob.keepProb : 1.0f;
    p.softmax.numHeads = p.numHeads;
    // Unit split: the qSplit (query slices per kv block) with the smallest planned makespan;
    // within 5 % the smaller one (fewer K/V reloads, and with 1 the dK/dV rows have one writer).
    const uint32_t cores = std::max<uint32_t>(1, std::min<uint32_t>(budget.aicNum, AttentionCore::MAX_CORES));
    double best = 0;
    for (uint32_t qSplit = 1; qSplit <= MAX_Q_SPLIT; qSplit *= 2) {
        const std::vector<double> cost = UnitCosts(UnitStepCosts(prob, p, qSplit));
        std::vector<uint64_t> starts;
        const double span = CutRanges(cost, cores, starts);
        if (qSplit == 1 || span < 0.95 * best) {
            best = span;
            p.qSplit = qSplit;
            p.unitCount = cost.size();
            p.usedCores = uint32_t(starts.size() - 1);
            for (size_t c = 0; c < starts.size(); ++c) {
                p.coreUnitStart[c] = starts[c];
                p.coreStepStart[c] = 0;
            }
        }
    }
    // Whole units can leave a core a large unit's worth above the mean (a causal head's first
    // kv blocks see every query row): cut inside units where that takes anything (0.1 %) off
    // the plan. A unit cut between two cores costs both an atomic fp32 flush and its dK/dV
    // cast after the final barrier, less than the steps a whole-unit cut leaves uneven (2x2K N32
    // causal: cores within 3.5 us of Fixpipe, were 11; with 2 % the whole-unit cut stayed,
    // modelled).
    {
        std::vector<uint64_t> starts;
        std::vector<uint32_t> offsets;
        const double span = CutSteps(UnitStepCosts(prob, p, p.qSplit), cores, starts, offsets);
        if (span < 0.999 * best) {
            p.usedCores = uint32_t(starts.size() - 1);
            for (size_t c = 0; c < starts.size(); ++c) {
                p.coreUnitStart[c] = starts[c];
                p.coreStepStart[c] = offsets[c];
            }
        }
    }

    PlanEarlySteps(prob, p);
    PlanDqGroupCast(prob, p);

    const uint64_t dqBytes = Align512(uint64_t(prob.tq) * prob.numHeads * prob.headDim * 4);
    const uint64_t kvBytes = Align512(uint64_t(prob.tkv) * prob.numKvHeads * prob.headDim * 4);
    const uint64_t drowBytes = Align512(uint64_t(prob.tq) * prob.numHeads * 8 * 4);
    const uint64_t dqRopeBytes = Align512(uint64_t(prob.tq) * prob.numHeads * prob.ropeDim * 4);
    const uint64_t dkRopeBytes = Align512(uint64_t(prob.tkv) * prob.numKvHeads * prob.ropeDim * 4);
    p.wsDq = 0;
    p.wsDk = dqBytes;
    p.wsDv = p.wsDk + kvBytes;
    p.wsDqRope = p.wsDv + kvBytes;
    p.wsDkRope = p.wsDqRope + dqRopeBytes;
    p.wsDrow = p.wsDkRope + dkRopeBytes;
    p.hasSink = prob.hasSink ? 1 : 0;
    p.dsinkPitch = uint64_t(prob.numHeads + 7) / 8 * 8;
    p.wsDsink = p.wsDrow + drowBytes;
    p.wsSlots = p.wsDsink + Align512(2ull * AttentionCore::MAX_CORES * p.dsinkPitch * 4);
    p.wsSlotF32 = uint64_t(p.blockQ) * p.blockKv * 4;
    p.wsSlotT = uint64_t(p.blockQ) * p.blockKv * prob.dtypeBytes;
    // dQ partials: the cube writes a step's dQ rows once, plain, into slot i % 2; the vector
    // cores add them into the dQ accumulator with atomic MTE3 copies (backward_step.h).
    p.dqPitch = (uint32_t(prob.headDim) + 7) / 8 * 8;
    p.wsDqSlot = p.accumKv != 0 ? 0 : uint64_t(p.blockQ) * p.dqPitch * 4;
    p.wsSlotBytesPerCore = Align512(p.slots * (2 * p.wsSlotF32 + 2 * p.wsSlotT) + 2 * p.wsDqSlot);
    return true;
}

uint64_t BackwardWorkspaceBytes(const AttentionCore::BackwardParams &p)
{
    return p.wsSlots + uint64_t(p.usedCores) * p.wsSlotBytesPerCore;
}

}  // namespace fa_host
