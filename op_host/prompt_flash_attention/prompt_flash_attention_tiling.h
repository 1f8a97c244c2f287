// Host entry points of PromptFlashAttention, registered by its OpDef
// (prompt_flash_attention_def.cpp): the tiling and the infershape function.
#pragma once
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"

namespace optiling {
ge::graphStatus PromptFlashAttentionTiling(gert::TilingContext *context);
}

namespace ge {
ge::graphStatus InferShapePromptFlashAttention(gert::InferShapeContext *context);
}
