// Infershape of FlashAttentionScoreGrad: dq has query's shape, dk key's, dv value's.
#include "../common/infer_shape.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "flash_attention_score_grad_tiling.h"

namespace ge {

ge::graphStatus InferShapeFlashAttentionScoreGrad(gert::InferShapeContext *context)
{
    return fa_host::CopyInputShapes(context, 3);
}

}  // namespace ge
