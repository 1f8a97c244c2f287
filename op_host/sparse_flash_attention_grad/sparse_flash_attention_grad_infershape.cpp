// Infershape of SparseFlashAttentionGrad: d_query/d_key/d_value have the shapes of
// query/key/value, d_query_rope/d_key_rope those of query_rope/key_rope.
#include "../common/infer_shape.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "sparse_flash_attention_grad_tiling.h"

namespace ge {

ge::graphStatus InferShapeSparseFlashAttentionGrad(gert::InferShapeContext *context)
{
    return fa_host::CopyInputShapes(context, 3);
}

}  // namespace ge
