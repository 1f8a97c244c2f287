// Infershape of IncreFlashAttention: attention_out has the query's shape.
#include "exe_graph/runtime/infer_shape_context.h"
#include "incre_flash_attention_tiling.h"

namespace ge {

ge::graphStatus InferShapeIncreFlashAttention(gert::InferShapeContext *context)
{
    const gert::Shape *query = context->GetInputShape(0);
    gert::Shape *out = context->GetOutputShape(0);
    if (query == nullptr || out == nullptr) return ge::GRAPH_FAILED;
    *out = *query;
    return ge::GRAPH_SUCCESS;
}

}  // namespace ge
