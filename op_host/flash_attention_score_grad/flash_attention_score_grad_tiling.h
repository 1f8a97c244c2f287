// Host entry points of FlashAttentionScoreGrad, registered by its OpDef
// (flash_attention_score_grad_def.cpp): the tiling and the infershape function.
#pragma once
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"

namespace optiling {
ge::graphStatus FlashAttentionScoreGradTiling(gert::TilingContext *context);
}

namespace ge {
ge::graphStatus InferShapeFlashAttentionScoreGrad(gert::InferShapeContext *context);
}
