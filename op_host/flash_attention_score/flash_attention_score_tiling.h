// Host entry points of FlashAttentionScore, registered by its OpDef
// (flash_attention_score_def.cpp): the tiling and the infershape function.
#pragma once
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"

namespace optiling {
ge::graphStatus FlashAttentionScoreTiling(gert::TilingContext *context);
}

namespace ge {
ge::graphStatus InferShapeFlashAttentionScore(gert::InferShapeContext *context);
}
