#include "infer_shape.h"

namespace fa_host {

ge::graphStatus CopyInputShapes(gert::InferShapeContext *context, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        const gert::Shape *in = context->GetInputShape(i);
        gert::Shape *out = context->GetOutputShape(i);
        if (in == nullptr || out == nullptr) return ge::GRAPH_FAILED;
        *out = *in;
    }
    return ge::GRAPH_SUCCESS;
}

}  // namespace fa_host
