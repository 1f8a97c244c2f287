// Tiling of PromptFlashAttention: reads shapes/attributes from the TilingContext and the core
// budget from PlatformAscendC, plans the shared forward core (block sizes, balanced split over
// all AI cores, workspace) and selects the kernel by element type.
#include <cstring>
#include <string>
#include <vector>

#include "../common/attention_layout.h"
#include "../common/tiling/forward_tiling.h"
#include "../common/tiling/forward_work_split.h"
#include "../common/op_log.h"
#include "../common/tiling/tiling_inputs.h"
#include "../../op_kernel/prompt_flash_attention/prompt_flash_attention_tiling_data.h"
#include "exe_graph/runtime/tiling_context.h"
#include "prompt_flash_attention_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace {

enum InputIndex : size_t { QUERY = 0, KEY = 1, VALUE = 2, PSE_SHIFT = 3, ATTEN_MASK = 4, ACTUAL_SEQ_LENGTHS = 5 };
enum AttrIndex : size_t { NUM_HEADS = 0, SCALE_VALUE, PRE_TOKENS, NEXT_TOKENS, INPUT_LAYOUT, NUM_KV_HEADS };

fa_host::Strides StridesOf(fa_host::Layout layout, int64_t n, int64_t s, int64_t d)
{
    if (layout == fa_host::Layout::BNSD || layout == fa_host::Layout::BNSD_BSND) {
        return {uint64_t(n * s * d), uint64_t(s * d), uint64_t(d)};
    }
    return {uint64_t(s * n * d), uint64_t(d), uint64_t(n * d)};  // BSH, BSND
}

fa_host::Strides MaskStrides(const std::vector<int64_t> &m)
{
    const size_t r = m.size();
    const uint64_t rowsCols = uint64_t(m[r - 2] * m[r - 1]);
    fa_host::Strides st{0, 0, uint64_t(m[r - 1])};
    if (r == 3 && m[0] != 1) st.b = rowsCols;
    if (r == 4) {
        st.b = m[0] == 1 ? 0 : uint64_t(m[1]) * rowsCols;
        st.n = m[1] == 1 ? 0 : rowsCols;
    }
    return st;
}

}  // namespace

namespace optiling {

ge::graphStatus PromptFlashAttentionTiling(gert::TilingContext *context)
{
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    const int64_t *numHeads = attrs->GetAttrPointer<int64_t>(NUM_HEADS);
    const float *scale = attrs->GetAttrPointer<float>(SCALE_VALUE);
    const int64_t *pre = attrs->GetAttrPointer<int64_t>(PRE_TOKENS);
    const int64_t *next = attrs->GetAttrPointer<int64_t>(NEXT_TOKENS);
    const char *layoutText = attrs->GetAttrPointer<char>(INPUT_LAYOUT);
    const int64_t *kvHeadsAttr = attrs->GetAttrPointer<int64_t>(NUM_KV_HEADS);
    const fa_host::Layout layout = fa_host::ParseLayout(layoutText);
    if (numHeads == nullptr || *numHeads <= 0 || layout == fa_host::Layout::INVALID || layout == fa_host::Layout::TND) {
        FA_LOGE("PromptFlashAttention tiling: num_heads / input_layout missing or invalid");
        return ge::GRAPH_FAILED;
    }
    const int64_t kvHeads = (kvHeadsAttr == nullptr || *kvHeadsAttr == 0) ? *numHeads : *kvHeadsAttr;

    fa_host::TensorDesc q, k;
    q.shape = fa_host::Dims(context->GetInputShape(QUERY)->GetStorageShape());
    k.shape = fa_host::Dims(context->GetInputShape(KEY)->GetStorageShape());
    fa_host::BnsdDims qd, kd;
    if (!fa_host::DimsOf(q, layout, *numHeads, qd) || !fa_host::DimsOf(k, layout, kvHeads, kd)) {
        FA_LOGE("PromptFlashAttention tiling: query/key rank does not match input_layout %s", layoutText);
        return ge::GRAPH_FAILED;
    }

    fa_host::ForwardProblem prob;
    prob.batch = qd.b;
    prob.numHeads = *numHeads;
    prob.numKvHeads = kvHeads;
    prob.seqQ = qd.s;
    prob.seqKv = kd.s;
    prob.headDim = qd.d;
    const ge::DataType dtype = context->GetInputDesc(QUERY)->GetDataType();
    prob.dtypeBytes = 2;
    prob.q = StridesOf(layout, qd.n, qd.s, qd.d);
    prob.kv = StridesOf(layout, kd.n, kd.s, kd.d);
    prob.out = layout == fa_host::Layout::BNSD_BSND ? StridesOf(fa_host::Layout::BSND, qd.n, qd.s, qd.d) : prob.q;
    prob.scale = scale == nullptr ? 1.0f : *scale;
    const gert::StorageShape *mask = context->GetOptionalInputShape(ATTEN_MASK);
    prob.hasMask = mask != nullptr;
    if (prob.hasMask) prob.mask = MaskStrides(fa_host::Dims(mask->GetStorageShape()));
    prob.bandActive = prob.hasMask;  // sparse mode 0: without a mask pre/next tokens are ignored
    prob.preTokens = pre == nullptr ? 2147483647 : *pre;
    prob.nextTokens = next == nullptr ? 0 : *next;
    const gert::Tensor *lens = context->GetOptionalInputTensor(ACTUAL_SEQ_LENGTHS);
    if (lens != nullptr && lens->GetData<int64_t>() != nullptr) {
        const int64_t *v = lens->GetData<int64_t>();
        prob.actualSeqLengths.assign(v, v + lens->GetShapeSize());
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    const fa_host::CoreBudget budget = fa_host::ReadCoreBudget(platform);

    PromptFlashAttentionTilingData *data = context->GetTilingData<PromptFlashAttentionTilingData>();
    std::string why;
    gert::TilingData *raw = context->GetRawTilingData();
    const uint64_t room = raw->GetCapacity() > PFA_UNIT_ORDER_OFFSET ? raw->GetCapacity() - PFA_UNIT_ORDER_OFFSET : 0;
    std::vector<uint32_t> order;
    if (!fa_host::PlanForward(prob, budget, *data, why, &order, room / sizeof(uint32_t))) {
        FA_LOGE("PromptFlashAttention tiling: %s", why.c_str());
        return ge::GRAPH_FAILED;
    }
    fa_host::PlanMaskSummary(*data);
    const bool scaleInKey = fa_host::ScaleInKeyExact(prob.scale, dtype == ge::DT_FLOAT16, data->params);
    const AttentionCore::ForwardParams &p = data->params;
    const uint64_t keyBlocks = p.unitCount * ((uint64_t(p.seqKv) + p.blockKv - 1) / p.blockKv);
    fa_host::PlanKvNzValueOnly(data->params, uint64_t(p.batch) * p.numHeads, keyBlocks, prob.hasMask, scaleInKey);
    fa_host::PlanKvNzChunk(data->params, prob.dtypeBytes);
    fa_host::PlanVAbsMax(data->params, dtype == ge::DT_FLOAT16, p.batch, p.seqKv, fa_host::UsableUb(budget));
    if (order.empty()) {  // each core's range reordered for the max|V| pass and the K/V cache
        fa_host::OrderRangesForVPass(prob, data->params, data->mask, room / sizeof(uint32_t), order);
    }
    if (!order.empty()) {  // the unit order after the struct (UNITS_TABLE)
        std::memcpy(static_cast<uint8_t *>(raw->GetData()) + PFA_UNIT_ORDER_OFFSET, order.data(),
                    order.size() * sizeof(uint32_t));
        raw->SetDataSize(PFA_UNIT_ORDER_OFFSET + order.size() * sizeof(uint32_t));
    }
    data->score.scaleInKey = scaleInKey ? 1 : 0;
    context->SetTilingKey(
        AttentionCore::ForwardTilingKey(dtype == ge::DT_BF16 ? PFA_TILING_KEY_BF16 : PFA_TILING_KEY_FP16,
                                        data->params.lazyO != 0, data->mask.maskSummary != 0, data->params.kvNz != 0));
    context->SetBlockDim(data->params.usedCores);
    size_t *ws = context->GetWorkspaceSizes(1);
    ws[0] = fa_host::PrefillWorkspaceBytes(*data) + platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
