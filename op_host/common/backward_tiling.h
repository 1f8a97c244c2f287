// Host planning of the shared backward attention core (docs/attention_core.md, "Backward"):
// block sizes from the real UB/L1 sizes, the units (batch, kv head, kv block) priced with the
// kernel's own geometry and cut into contiguous per-core ranges, and the workspace layout.
// Pure functions of their arguments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../op_kernel/attention_core/backward_params.h"
#include "forward_tiling.h"

namespace fa_host {

struct BackwardProblem {
    int64_t numHeads = 0, numKvHeads = 0, headDim = 0, tq = 0, tkv = 0;
    uint32_t dtypeBytes = 2;
    float scale = 1.0f;
    bool statsTnd = true;
    int64_t sparseMode = 0;
    bool hasMask = false;
    bool hasSink = false;
    Strides mask;
    int64_t preTokens = 0, nextTokens = 0;
    std::vector<int64_t> cumQ, cumKv;  // cumulative actual_seq_qlen / actual_seq_kvlen
};

// The batch's visible band in left-up form (row - pre <= key <= row + next); false: no band.
bool BatchBand(const BackwardProblem &prob, int64_t b, int64_t bandBatch, int64_t &pre, int64_t &next);

bool PlanBackward(const BackwardProblem &prob, const CoreBudget &budget, AttentionCore::BackwardParams &p,
                  std::string &why);
uint64_t BackwardWorkspaceBytes(const AttentionCore::BackwardParams &p);

}  // namespace fa_host
