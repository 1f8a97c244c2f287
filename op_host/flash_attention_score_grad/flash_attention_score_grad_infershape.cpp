// Infershape of FlashAttentionScoreGrad: dq has query's shape, dk key's, dv value's.
#include "exe_graph/runtime/infer_shape_context.h"
#include "flash_attention_score_grad_tiling.h"

namespace ge {

ge::graphStatus InferShapeFlashAttentionScoreGrad(gert::InferShapeContext *context)
{
    for (size_t i = 0; i < 3; ++i) {
        const gert::Shape *in = context->GetInputShape(i);
        gert::Shape *out = context->GetOutputShape(i);
        if (in == nullptr || out == nullptr) return ge::GRAPH_FAILED;
        *out = *in;
    }
    return ge::GRAPH_SUCCESS;
}

}  // namespace ge
