// Infershape of PromptFlashAttention: attention_out has query's shape, except for input layout
// BNSD_BSND where the BNSD query gives a BSND output.
#include <cstring>

#include "exe_graph/runtime/infer_shape_context.h"
#include "prompt_flash_attention_tiling.h"

namespace ge {

namespace {
constexpr size_t ATTR_INPUT_LAYOUT = 4;
}

ge::graphStatus InferShapePromptFlashAttention(gert::InferShapeContext *context)
{
    const gert::Shape *query = context->GetInputShape(0);
    gert::Shape *out = context->GetOutputShape(0);
    if (query == nullptr || out == nullptr) return ge::GRAPH_FAILED;
    *out = *query;
    const char *layout = context->GetAttrs()->GetAttrPointer<char>(ATTR_INPUT_LAYOUT);
    if (layout != nullptr && std::strcmp(layout, "BNSD_BSND") == 0 && query->GetDimNum() == 4) {
        out->SetDim(1, query->GetDim(2));
        out->SetDim(2, query->GetDim(1));
    }
    return ge::GRAPH_SUCCESS;
}

}  // namespace ge
