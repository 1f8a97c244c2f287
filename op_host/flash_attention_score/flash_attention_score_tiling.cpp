// Tiling of FlashAttentionScore (TND, aclnnFlashAttentionVarLenScore): reads shapes,
// attributes and the value-dependent lengths/prefix from the TilingContext and the core budget
// from PlatformAscendC, plans the shared forward core over the varlen units and selects the
// kernel by element type.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "../common/tiling/forward_tiling.h"
#include "../common/op_log.h"
#include "../common/tiling/tiling_inputs.h"
#include "../common/tiling/varlen_forward_tiling.h"
#include "../../op_kernel/flash_attention_score/flash_attention_score_tiling_data.h"
#include "exe_graph/runtime/tiling_context.h"
#include "flash_attention_score_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace {

enum InputIndex : size_t {
    QUERY = 0,
    KEY = 1,
    VALUE = 2,
    REAL_SHIFT = 3,
    DROP_MASK = 4,
    PADDING_MASK = 5,
    ATTEN_MASK = 6,
    PREFIX = 7,
    ACTUAL_SEQ_QLEN = 8,
    ACTUAL_SEQ_KVLEN = 9
};
enum AttrIndex : size_t {
    SCALE_VALUE = 0,
    KEEP_PROB,
    PRE_TOKENS,
    NEXT_TOKENS,
    HEAD_NUM,
    INPUT_LAYOUT,
    INNER_PRECISE,
    SPARSE_MODE
};

}  // namespace

namespace optiling {

ge::graphStatus FlashAttentionScoreTiling(gert::TilingContext *context)
{
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    const float *scale = attrs->GetAttrPointer<float>(SCALE_VALUE);
    const float *keepProb = attrs->GetAttrPointer<float>(KEEP_PROB);
    const int64_t *pre = attrs->GetAttrPointer<int64_t>(PRE_TOKENS);
    const int64_t *next = attrs->GetAttrPointer<int64_t>(NEXT_TOKENS);
    const int64_t *headNum = attrs->GetAttrPointer<int64_t>(HEAD_NUM);
    const char *layout = attrs->GetAttrPointer<char>(INPUT_LAYOUT);
    const int64_t *sparseMode = attrs->GetAttrPointer<int64_t>(SPARSE_MODE);
    const std::vector<int64_t> q = fa_host::Dims(context->GetInputShape(QUERY)->GetStorageShape());
    const std::vector<int64_t> k = fa_host::Dims(context->GetInputShape(KEY)->GetStorageShape());
    const std::vector<int64_t> cumQ = fa_host::Int64Values(context, ACTUAL_SEQ_QLEN);
    const std::vector<int64_t> cumKv = fa_host::Int64Values(context, ACTUAL_SEQ_KVLEN);
    if (headNum == nullptr || layout == nullptr || std::string(layout) != "TND" || q.size() != 3 || k.size() != 3 ||
        cumQ.empty() || cumQ.size() != cumKv.size()) {
        FA_LOGE("FlashAttentionScore tiling: needs input_layout TND, 3-D query/key and actual_seq_qlen/kvlen of "
                "equal length");
        return ge::GRAPH_FAILED;
    }

    fa_host::VarLenProblem prob;
    prob.numHeads = q[1];
    prob.numKvHeads = k[1];
    prob.headDim = q[2];
    const ge::DataType dtype = context->GetInputDesc(QUERY)->GetDataType();
    if (dtype != ge::DT_FLOAT16 && dtype != ge::DT_BF16 && dtype != ge::DT_FLOAT) {
        FA_LOGE("FlashAttentionScore tiling: query dtype %d is not FLOAT16, BF16 or FLOAT", static_cast<int>(dtype));
        return ge::GRAPH_FAILED;
    }
    prob.dtypeBytes = dtype == ge::DT_FLOAT ? 4 : 2;
    prob.seqQ = fa_host::Lengths(cumQ);
    prob.seqKv = fa_host::Lengths(cumKv);
    prob.prefix = fa_host::Int64Values(context, PREFIX);
    prob.scale = scale == nullptr ? 1.0f : *scale;
    const gert::StorageShape *mask = context->GetOptionalInputShape(ATTEN_MASK);
    prob.hasMask = mask != nullptr;
    if (prob.hasMask) {
        const std::vector<int64_t> m = fa_host::Dims(mask->GetStorageShape());
        prob.maskCols = m.back();
    }
    prob.sparseMode = sparseMode == nullptr ? 0 : static_cast<uint32_t>(*sparseMode);
    prob.preTokens = pre == nullptr ? 2147483647 : *pre;
    prob.nextTokens = next == nullptr ? 2147483647 : *next;
    if (prob.prefix.size() != prob.seqQ.size()) prob.prefix.clear();
    const gert::StorageShape *pse = context->GetOptionalInputShape(REAL_SHIFT);
    prob.hasPse = pse != nullptr;
    if (prob.hasPse) {
        const std::vector<int64_t> ps = fa_host::Dims(pse->GetStorageShape());
        prob.pseBatch = ps[0];
        prob.pseRows = ps[2];
        prob.pseCols = ps[3];
    }

    // keep_prob == 1 disables dropout: the mask is then not read.
    prob.keepProb = keepProb == nullptr ? 1.0f : *keepProb;
    prob.hasDropMask = context->GetOptionalInputShape(DROP_MASK) != nullptr && prob.keepProb < 1.0f;

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    const fa_host::CoreBudget budget = fa_host::ReadCoreBudget(platform);

    FlashAttentionScoreTilingData *data = context->GetTilingData<FlashAttentionScoreTilingData>();
    std::string why;
    gert::TilingData *raw = context->GetRawTilingData();
    const uint64_t room = raw->GetCapacity() > FA_UNIT_ORDER_OFFSET ? raw->GetCapacity() - FA_UNIT_ORDER_OFFSET : 0;
    std::vector<uint32_t> order;
    if (!fa_host::PlanVarLenForward(prob, budget, *data, why, &order, room / sizeof(uint32_t))) {
        FA_LOGE("FlashAttentionScore tiling: %s", why.c_str());
        return ge::GRAPH_FAILED;
    }
    if (!order.empty()) {  // the unit order after the struct (UNITS_TABLE)
        std::memcpy(static_cast<uint8_t *>(raw->GetData()) + FA_UNIT_ORDER_OFFSET, order.data(),
                    order.size() * sizeof(uint32_t));
        raw->SetDataSize(FA_UNIT_ORDER_OFFSET + order.size() * sizeof(uint32_t));
    }
    // Without pse the scale may ride on the staged K (forward_tiling.h); FAG's recompute of
    // this forward (its own tiling) keeps the vector scale pass.
    const bool scaleInKey = !prob.hasPse && fa_host::ScaleInKeyExact(prob.scale, dtype == ge::DT_FLOAT16, data->params);
    uint64_t headRuns = 0, keyBlocks = 0;  // over the (batch, head) pairs with units
    const AttentionCore::ForwardParams &p = data->params;
    for (size_t b = 0; b < prob.seqQ.size(); ++b) {
        const uint64_t q = uint64_t(std::max<int64_t>(0, prob.seqQ[b]));
        const uint64_t kv = b < prob.seqKv.size() ? uint64_t(std::max<int64_t>(0, prob.seqKv[b])) : 0;
        if (q == 0 || kv == 0) continue;
        headRuns += uint64_t(p.numHeads);
        keyBlocks += uint64_t(p.numHeads) * ((q + p.blockQ - 1) / p.blockQ) * ((kv + p.blockKv - 1) / p.blockKv);
    }
    fa_host::PlanKvNzValueOnly(data->params, headRuns, keyBlocks, prob.hasMask || prob.sparseMode != 0, scaleInKey);
    // K/V staged per core: regions per (batch, KV head), each core's first before the barrier.
    fa_host::PlanKvNzOwnTnd(data->params, prob.dtypeBytes, fa_host::UsableUb(budget), prob.seqQ, prob.seqKv);
    fa_host::PlanKvNzChunk(data->params, prob.dtypeBytes);
    uint64_t tokens = 0;  // the TND token axis: one batch of every key row
    for (const int64_t len : prob.seqKv) tokens += uint64_t(std::max<int64_t>(0, len));
    fa_host::PlanVAbsMax(data->params, dtype == ge::DT_FLOAT16, 1, tokens, fa_host::UsableUb(budget), scaleInKey);
    data->score.scaleInKey = scaleInKey ? 1 : 0;
    const uint64_t dtypeKey = dtype == ge::DT_BF16    ? FA_TILING_KEY_BF16
                              : dtype == ge::DT_FLOAT ? FA_TILING_KEY_FP32
                                                      : FA_TILING_KEY_FP16;
    context->SetTilingKey(
        AttentionCore::ForwardTilingKey(dtypeKey, data->params.lazyO != 0, false, data->params.kvNz != 0));
    context->SetBlockDim(data->params.usedCores);
    size_t *ws = context->GetWorkspaceSizes(1);
    ws[0] = fa_host::WorkspaceBytes(data->params) + platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
