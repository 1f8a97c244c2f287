// Host planning of the varlen (TND) forward: the shared core's block sizes, units
// (batch, head, q-block) over per-batch query lengths priced with the sparse-mode geometry
// (op_kernel/attention_core/common/sparse_mode.h), the balanced contiguous split and the workspace.
// Pure functions of their arguments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "forward_tiling.h"

namespace fa_host {

struct VarLenProblem {
    int64_t numHeads = 0, numKvHeads = 0, headDim = 0;
    uint32_t dtypeBytes = 2;
    std::vector<int64_t> seqQ, seqKv;  // per batch
    std::vector<int64_t> prefix;       // per batch (mode 6) or empty
    float scale = 1.0f;
    bool hasMask = false;
    int64_t maskCols = 0;  // row pitch of the [maxSq, maxSkv] mask
    uint32_t sparseMode = 0;
    int64_t preTokens = 0, nextTokens = 0;
    bool hasPse = false;
    int64_t pseBatch = 0, pseRows = 0, pseCols = 0;  // [Bp, N, H, W]
    bool hasDropMask = false;                        // dropout active (a mask and keep_prob < 1)
    float keepProb = 1.0f;
};

// The batch carrying the band of sparse modes 7 (last non-empty) and 8 (first non-empty); -1.
int64_t BandBatch(uint32_t sparseMode, const std::vector<int64_t> &seqQ, const std::vector<int64_t> &seqKv);

// With `unitOrder` (room for at most maxOrder entries) the units may instead be dealt to the
// cores by cost (ForwardParams UNITS_TABLE), where that plans shorter than contiguous ranges:
// `unitOrder` then holds the unit of each position (empty otherwise).
bool PlanVarLenForward(const VarLenProblem &prob, const CoreBudget &budget, AttentionCore::VarLenTiling &tiling,
                       std::string &why, std::vector<uint32_t> *unitOrder = nullptr, uint64_t maxOrder = 0);

}  // namespace fa_host
