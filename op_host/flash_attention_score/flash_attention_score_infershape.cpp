// Infershape of FlashAttentionScore for the TND layout: attention_out has query's shape
// [T, N, D]; softmax_max and softmax_sum are [T, N, 8]; softmax_out (reserved) is empty.
#include "exe_graph/runtime/infer_shape_context.h"
#include "flash_attention_score_tiling.h"

namespace ge {

namespace {
enum OutputIndex : size_t { SOFTMAX_MAX = 0, SOFTMAX_SUM = 1, SOFTMAX_OUT = 2, ATTENTION_OUT = 3 };
constexpr int64_t STAT_REPLICAS = 8;
}

ge::graphStatus InferShapeFlashAttentionScore(gert::InferShapeContext *context)
{
    const gert::Shape *query = context->GetInputShape(0);
    if (query == nullptr || query->GetDimNum() != 3) return ge::GRAPH_FAILED;
    for (size_t i : {SOFTMAX_MAX, SOFTMAX_SUM}) {
        gert::Shape *stat = context->GetOutputShape(i);
        if (stat == nullptr) return ge::GRAPH_FAILED;
        *stat = *query;
        stat->SetDim(2, STAT_REPLICAS);
    }
    gert::Shape *out = context->GetOutputShape(ATTENTION_OUT);
    if (out == nullptr) return ge::GRAPH_FAILED;
    *out = *query;
    gert::Shape *softmaxOut = context->GetOutputShape(SOFTMAX_OUT);
    if (softmaxOut != nullptr) {
        softmaxOut->SetDimNum(1);
        softmaxOut->SetDim(0, 0);
    }
    return ge::GRAPH_SUCCESS;
}

}  // namespace ge
