// Host planning of the shared forward attention core: block sizes from the real UB/L1/L0
// sizes, the balanced work split over the AI cores, and the workspace. Pure functions of their
// arguments (unit-testable without a TilingContext); every forward operator's tiling fills a
// ForwardProblem and calls PlanForward.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "../../../op_kernel/attention_core/forward/forward_params.h"
#include "kv_staging_tiling.h"

namespace fa_host {

constexpr uint32_t FORWARD_BLOCK_KV = 128;  // keys per block: 2 fp32 vector repeats per row

// Strides in elements of one Q/K/V/O tensor: (batch, head, token).
struct Strides {
    uint64_t b = 0, n = 0, s = 0;
};

struct ForwardProblem {
    int64_t batch = 0, numHeads = 0, numKvHeads = 0, seqQ = 0, seqKv = 0, headDim = 0;
    uint32_t dtypeBytes = 2;
    Strides q, kv, out;
    float scale = 1.0f;
    bool hasMask = false;
    Strides mask;  // (batch, head, query row) strides of a 1-byte mask, 0 = broadcast
    bool bandActive = false;
    int64_t preTokens = 0, nextTokens = 0;
    std::vector<int64_t> actualSeqLengths;  // empty: every batch uses seqQ
};

// What the hardware offers one AI core (bytes) and how many AI cores there are.
struct CoreBudget {
    uint32_t aicNum = 1;
    uint64_t ub = 0, l1 = 0, l0a = 0, l0b = 0, l0c = 0;
};

// Block sizes that fit the budget; false (with the reason) when none does.
// stats: the softmax statistics are reported (their finish rows in UB, forward_layout.h);
// twoParts: q-blocks above AttentionCore::PV_WHOLE_MAX_ROWS rows (lazy P.V in two row parts).
bool ChooseBlocks(int64_t headDim, uint32_t dtypeBytes, const CoreBudget &budget, uint32_t &rowsPerVec,
                  uint32_t &blockKv, uint32_t &dChunk, std::string &why, bool stats = false, bool twoParts = false);

// 128 < D <= 256 (the caller: no mask): lazy P.V's blocks, 64 keys and one head-dim pass;
// false where the head dim is outside that range or nothing fits. stats: as for ChooseBlocks.
bool ChooseWideLazyBlocks(int64_t headDim, uint32_t dtypeBytes, const CoreBudget &budget, uint32_t &rowsPerVec,
                          uint32_t &blockKv, uint32_t &dChunk, bool stats = false);

// Completes the block geometry in `p` (blockQ, blockKv, headDimAlign, dChunk set): the cube's
// double buffering (l1Bufs / l0Bufs: two copies of each tile where they fit L1 / L0A / L0B /
// L0C, else one) and the workspace slots of the cube <-> vector hand-off.
void FinishForwardGeometry(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, const CoreBudget &budget);

// Fills `p` completely. The workspace the kernel needs is WorkspaceBytes(p). With `unitOrder`
// (room for at most maxOrder entries) the units may be dealt to the cores by cost instead of
// contiguous ranges of a fixed order (ForwardParams UNITS_TABLE, causal GQA: DealGroups in
// forward_tiling.cpp); `unitOrder` then holds the unit of each position (empty otherwise).
bool PlanForward(const ForwardProblem &prob, const CoreBudget &budget, AttentionCore::PrefillTiling &tiling,
                 std::string &why, std::vector<uint32_t> *unitOrder = nullptr, uint64_t maxOrder = 0);
// The per-core slots of every core and the staged K/V (rounded up to `align` bytes).
uint64_t WorkspaceBytes(const AttentionCore::ForwardParams &p, uint64_t align = 1);
// PFA: a mask plane shared by every (batch, head) of many gets a summary the vector cores build
// before the main loop where that pays off (MaskBandParams::maskSummary, mask_band.h); call after
// PlanForward (it places the summary after the per-core workspace).
void PlanMaskSummary(AttentionCore::PrefillTiling &tiling);
uint64_t PrefillWorkspaceBytes(const AttentionCore::PrefillTiling &tiling);

// Cuts `costs` into at most `cores` contiguous ranges minimising the largest range cost
// (binary search on that cost, greedy packing); writes the cores + 1 range starts to `starts`
// and returns that cost.
uint64_t SplitContiguous(const std::vector<uint64_t> &costs, uint32_t cores, uint64_t *starts);

// Bytes of UB / L1 / L0 the core's buffers take for these block sizes (docs/attention_core.md).
// Planned cost of one visible key for a q-block of `rows` query rows, in score elements: the
// busiest of the cube's MTE2 (K and V rows re-streamed per q-block, so small q-blocks cost more
// per score), its Mmads and the vector cores (docs/performance.md, "Planner costs").
// kvCached: the key's K and V rows are in the cube's K/V cache (only P streams).
uint64_t ForwardKeyCost(uint64_t rows, uint64_t headDim, bool kvCached = false);
// Planned fixed cost of one unit (q-block), in the same score elements.
uint64_t ForwardUnitCost(const AttentionCore::ForwardParams &p);

// UB the vector stage may plan with: all of it but the API's scratch.
uint64_t UsableUb(const CoreBudget &budget);

uint64_t VectorUbBytes(uint32_t rowsPerVec, uint32_t vecRows, uint32_t blockKv, uint32_t headDimAlign,
                       uint32_t dtypeBytes, uint32_t sBufs, bool stats = false);
// The vector cores' sub-block rows and S buffers (ForwardParams::vecRows / vecSBufs) for UB `ub`.
bool ChooseVecRows(uint32_t rowsPerVec, uint32_t blockKv, uint32_t headDimAlign, uint32_t dtypeBytes, uint64_t ub,
                   uint32_t &vecRows, uint32_t &sBufs, bool stats = false);
// Lazy P.V's rows per S chunk (ForwardParams::sChunk) where its L0 regions fit.
bool ChooseSChunk(uint32_t blockQ, uint32_t blockKv, uint32_t headDimAlign, uint32_t dChunk, uint32_t dtypeBytes,
                  const CoreBudget &budget, uint32_t &sChunk);
// The next smaller candidate of rows per vector core (0: none); q-block = 2 x rows.
uint32_t NextRowsPerVec(uint32_t rowsPerVec);
uint64_t CubeL1Bytes(uint32_t blockQ, uint32_t blockKv, uint32_t headDimAlign, uint32_t dtypeBytes);

// The q-block search of the forward planners: for rowsPerVec from maxRows down (NextRowsPerVec,
// each evened out over the head's rows),
// `split(t, cores)` sets t.unitCount and the core count for t's q-block geometry (rowsPerVec,
// blockQ, qBlocksPerHead set), cuts the units into t.coreUnitStart and returns the planned
// makespan. Keeps the q-block with the smallest makespan (within 5 %: the larger block, which
// re-reads K/V less) and stops once there are plenty of units (8 per core). `p` gets the
// chosen geometry, unit ranges and usedCores (the cores with work).
template <class Split> void ChooseQBlock(uint32_t maxRows, AttentionCore::ForwardParams &p, Split &&split)
{
    AttentionCore::ForwardParams best = p;
    uint64_t bestSpan = 0;
    for (uint32_t r = maxRows; r >= 8; r = NextRowsPerVec(r)) {
        AttentionCore::ForwardParams t = p;
        // As many q-blocks per head as 2 r rows need, evened out: the smallest multiple of 16
        // rows that needs no more (S1K in six q-blocks of 176 rows, not five of 192 and one of
        // 64): the same K/V loads, a shorter longest unit.
        const uint64_t count = std::max<uint64_t>(1, (uint64_t(t.seqQ) + 2 * r - 1) / (2 * r));
        const uint64_t even = (uint64_t(t.seqQ) + count - 1) / count;
        t.rowsPerVec =
            t.seqQ == 0 ? r : static_cast<uint32_t>(std::min<uint64_t>(r, std::max<uint64_t>(8, (even + 15) / 16 * 8)));
        t.blockQ = 2 * t.rowsPerVec;
        t.qBlocksPerHead = static_cast<uint32_t>((uint64_t(t.seqQ) + t.blockQ - 1) / t.blockQ);
        uint32_t cores = 1;
        const uint64_t span = split(t, cores);
        // Ranges are filled from the front: trailing cores may have nothing to do.
        t.usedCores = 1;
        while (t.usedCores < cores && t.coreUnitStart[t.usedCores] < t.unitCount) ++t.usedCores;
        t.coreUnitStart[t.usedCores] = t.unitCount;
        // A smaller q-block re-reads K/V more often: kept only where the makespan is 5 % shorter,
        // 2 % between lazy P.V's large q-blocks (176 against 192 rows adds ~0.24 B of L2 per
        // score to ~16).
        const uint64_t margin = t.rowsPerVec > 64 ? 98 : 95;
        if (r == maxRows || span * 100 < bestSpan * margin) {
            best = t;
            bestSpan = span;
        }
        // plenty of units (the split-KV tail's whole ones): smaller blocks cannot help
        const uint64_t units = t.tailSplits > 1 ? t.tailFirst + t.tailPieces / t.tailSplits : t.unitCount;
        if (units >= 8ull * cores) break;
    }
    p = best;
}

// Cores a split of `units` units uses: at most aicNum and MAX_CORES, at least one.
uint32_t SplitCores(uint32_t aicNum, uint64_t units);

}  // namespace fa_host
