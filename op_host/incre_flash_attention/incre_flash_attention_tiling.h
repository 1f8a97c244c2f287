// Host entry points of IncreFlashAttention, registered by its OpDef
// (incre_flash_attention_def.cpp): the tiling and the infershape function.
#pragma once
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"

namespace optiling {
ge::graphStatus IncreFlashAttentionTiling(gert::TilingContext *context);
}

namespace ge {
ge::graphStatus InferShapeIncreFlashAttention(gert::InferShapeContext *context);
}
