// Host planning of the shared backward attention core (docs/attention_core.md, "Backward"):
// block sizes from the real UB/L1 sizes, the units (batch, kv head, kv block) priced with the
// kernel's own geometry and cut into contiguous per-core ranges, and the workspace layout.
// Pure functions of their arguments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../../op_kernel/attention_core/backward/backward_params.h"
#include "forward_tiling.h"

namespace fa_host {

struct BackwardProblem {
    int64_t numHeads = 0, numKvHeads = 0, headDim = 0, tq = 0, tkv = 0;
    int64_t ropeDim = 0;  // D of query_rope/key_rope, 0 without a rope part
    uint32_t dtypeBytes = 2;
    float scale = 1.0f;
    bool statsTnd = true;     // softmax_max is [T, N, 8] (else [N, T, 8])
    bool sumStatsTnd = true;  // softmax_sum likewise (differs when only one of them is recomputed)
    int64_t sparseMode = 0;
    bool hasMask = false;
    bool hasSink = false;
    Strides mask;
    int64_t preTokens = 0, nextTokens = 0;
    std::vector<int64_t> cumQ, cumKv;  // cumulative actual_seq_qlen / actual_seq_kvlen
    std::vector<int64_t> prefix;       // per batch (sparse mode 6 with a mask) or empty
    bool hasPse = false;               // types 0/1: tensor [pseBatch, N, pseRows, pseCols]
    int64_t pseType = 1;               // types 2/3: slopes [pseBatch, N] (pseBatch 1 for [N])
    int64_t pseBatch = 0, pseRows = 0, pseCols = 0;
    int64_t qStartCount = 0, kvStartCount = 0;  // q_start_idx / kv_start_idx values (0: none)
    bool hasDropMask = false;                   // dropout active (a mask and keepProb < 1)
    float keepProb = 1.0f;
};

// Bytes of UB (per vector core) and L1 the backward core's buffers take for these blocks.
uint64_t BackwardUbBytes(uint32_t rowsPerVec, uint32_t blockKv, uint32_t headDimAlign, uint32_t dtypeBytes,
                         uint32_t prefetchRows = 0);
uint64_t BackwardL1Bytes(uint32_t blockQ, uint32_t blockKv, uint32_t headDimAlign, uint32_t ropeDimAlign,
                         uint32_t dtypeBytes, uint32_t tileSets);

bool PlanBackward(const BackwardProblem &prob, const CoreBudget &budget, AttentionCore::BackwardParams &p,
                  std::string &why);
uint64_t BackwardWorkspaceBytes(const AttentionCore::BackwardParams &p);

}  // namespace fa_host
