// Host entry points of SparseFlashAttentionGrad, registered by its OpDef
// (sparse_flash_attention_grad_def.cpp): the tiling and the infershape function.
#pragma once
#include <cstdint>
#include <string>

#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"
#include "../../op_kernel/attention_core/sparse_backward/sparse_backward_params.h"
#include "../common/tiling/forward_tiling.h"

namespace optiling {
ge::graphStatus SparseFlashAttentionGradTiling(gert::TilingContext *context);
}

namespace ge {
ge::graphStatus InferShapeSparseFlashAttentionGrad(gert::InferShapeContext *context);
}

namespace fa_host {

// What the sparse backward plan needs from the call (dims flattened to tokens).
struct SparseBackwardProblem {
    uint32_t batch = 0, heads = 0, headDim = 0, ropeDim = 0;
    uint64_t t1 = 0, t2 = 0, s1 = 0, s2 = 0;
    bool tnd = false, hasSeqQ = false, hasSeqKv = false, seq64 = false, index64 = false;
    uint32_t topK = 0, blockSize = 1, sparseMode = 0, dtypeBytes = 2;
    float scale = 1.0f;
    bool deterministic = false;
    // Pair items (SparseBackwardParams::pairTokens) allowed where they serve; the plan of a
    // pair item sees heads, topK doubled and t1, s1 halved, with pairHalfK the caller's K.
    bool allowPairs = true;
    uint32_t pairHalfK = 0;
};

// The same core budget the dense plans use (fa_host::ReadCoreBudget fills it).
using SparseCoreBudget = CoreBudget;

// Fills `out` (blocks, token split over the cores, workspace slots); false with `why` when the
// shapes do not fit the core's buffers. Pure: unit-testable without a launch.
bool PlanSparseBackward(const SparseBackwardProblem &prob, const SparseCoreBudget &budget,
                        AttentionCore::SparseBackwardParams &out, std::string &why);
uint64_t SparseBackwardWorkspaceBytes(const AttentionCore::SparseBackwardParams &p);

}  // namespace fa_host
