// Infershape shared by the operators whose outputs have the shapes of their inputs.
#pragma once
#include <cstddef>

#include "exe_graph/runtime/infer_shape_context.h"

namespace fa_host {

// Output i gets the shape of input i for every i < count; GRAPH_FAILED when one is missing.
ge::graphStatus CopyInputShapes(gert::InferShapeContext *context, size_t count);

}  // namespace fa_host
