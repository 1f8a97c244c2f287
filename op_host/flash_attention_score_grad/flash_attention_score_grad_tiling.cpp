// Tiling of FlashAttentionScoreGrad (TND): reads shapes, attributes and the cumulative
// sequence lengths from the TilingContext, the core budget from PlatformAscendC, and plans the
// shared backward core (fa_host::PlanBackward).
#include <cstring>
#include <string>

#include "../common/tiling/backward_tiling.h"
#include "../common/tiling/varlen_forward_tiling.h"
#include "../common/op_log.h"
#include "../common/tiling/tiling_inputs.h"
#include "../../op_kernel/flash_attention_score_grad/flash_attention_score_grad_tiling_data.h"
#include "exe_graph/runtime/tiling_context.h"
#include "flash_attention_score_grad_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace {

enum InputIndex : size_t {
    QUERY = 0,
    KEY,
    VALUE,
    DY,
    PSE,
    DROP_MASK,
    ATTEN_MASK,
    SOFTMAX_MAX,
    SOFTMAX_SUM,
    ATTENTION_IN,
    SEQ_Q,
    SEQ_KV,
    PREFIX,
    Q_START,
    KV_START,
    SINK,
    QUERY_ROPE,
    KEY_ROPE
};
enum AttrIndex : size_t {
    SCALE = 0,
    KEEP_PROB,
    PRE_TOKENS,
    NEXT_TOKENS,
    HEAD_NUM,
    INPUT_LAYOUT,
    SPARSE_MODE,
    PSE_TYPE,
    STATS_LAYOUT
};

// (batch, head, row) strides of a [Sq,Skv] / [B,N or 1,Sq,Skv] mask; 0 = broadcast.
fa_host::Strides MaskStrides(const std::vector<int64_t> &m)
{
    const size_t r = m.size();
    const uint64_t rowsCols = uint64_t(m[r - 2] * m[r - 1]);
    fa_host::Strides st{0, 0, uint64_t(m[r - 1])};
    if (r == 4) {
        st.b = m[0] == 1 ? 0 : uint64_t(m[1]) * rowsCols;
        st.n = m[1] == 1 ? 0 : rowsCols;
    }
    return st;
}

uint64_t Align512(uint64_t x) { return (x + 511) / 512 * 512; }

// Without softmax_max/sum/attention_in the kernel first runs the varlen forward core: plan it
// with the same problem (rope, sink and pse types other than 1 are rejected before tiling).
bool PlanRecompute(const fa_host::BackwardProblem &prob, const fa_host::CoreBudget &budget,
                   FlashAttentionScoreGradTilingData &data, std::string &why)
{
    fa_host::VarLenProblem v;
    v.numHeads = prob.numHeads;
    v.numKvHeads = prob.numKvHeads;
    v.headDim = prob.headDim;
    v.dtypeBytes = prob.dtypeBytes;
    for (size_t b = 0; b < prob.cumQ.size(); ++b) {
        v.seqQ.push_back(prob.cumQ[b] - (b == 0 ? 0 : prob.cumQ[b - 1]));
        v.seqKv.push_back(prob.cumKv[b] - (b == 0 ? 0 : prob.cumKv[b - 1]));
    }
    v.prefix = prob.prefix;
    v.scale = prob.scale;
    v.hasMask = prob.hasMask;
    v.maskCols = int64_t(prob.mask.s);
    v.sparseMode = uint32_t(prob.sparseMode);
    v.preTokens = prob.preTokens;
    v.nextTokens = prob.nextTokens;
    v.hasPse = prob.hasPse;
    v.pseBatch = prob.pseBatch;
    v.pseRows = prob.pseRows;
    v.pseCols = prob.pseCols;
    v.hasDropMask = prob.hasDropMask;
    v.keepProb = prob.keepProb;
    if (!fa_host::PlanVarLenForward(v, budget, data.forward, why)) return false;
    data.forward.mask.strides.b = prob.mask.b;  // V5 also takes [B, N or 1, Sq, Skv] masks
    data.forward.mask.strides.n = prob.mask.n;
    const uint64_t stats = Align512(uint64_t(prob.tq) * prob.numHeads * 8 * 4);
    data.recompute = 1;
    data.statsMaxOffset = Align512(fa_host::WorkspaceBytes(data.forward.params));
    data.statsSumOffset = data.statsMaxOffset + stats;
    data.attentionOffset = data.statsSumOffset + stats;
    data.backwardOffset =
        data.attentionOffset + Align512(uint64_t(prob.tq) * prob.numHeads * prob.headDim * prob.dtypeBytes);
    return true;
}

}  // namespace

namespace optiling {

ge::graphStatus FlashAttentionScoreGradTiling(gert::TilingContext *context)
{
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    const float *scale = attrs->GetAttrPointer<float>(SCALE);
    const int64_t *pre = attrs->GetAttrPointer<int64_t>(PRE_TOKENS);
    const int64_t *next = attrs->GetAttrPointer<int64_t>(NEXT_TOKENS);
    const int64_t *heads = attrs->GetAttrPointer<int64_t>(HEAD_NUM);
    const char *layout = attrs->GetAttrPointer<char>(INPUT_LAYOUT);
    const int64_t *mode = attrs->GetAttrPointer<int64_t>(SPARSE_MODE);
    const char *stats = attrs->GetAttrPointer<char>(STATS_LAYOUT);
    if (heads == nullptr || *heads <= 0 || layout == nullptr || std::strcmp(layout, "TND") != 0) {
        FA_LOGE("FlashAttentionScoreGrad tiling: head_num / input_layout missing or not TND");
        return ge::GRAPH_FAILED;
    }
    const std::vector<int64_t> q = fa_host::Dims(context->GetInputShape(QUERY)->GetStorageShape());
    const std::vector<int64_t> k = fa_host::Dims(context->GetInputShape(KEY)->GetStorageShape());
    if (q.size() != 3 || k.size() != 3 || k[1] <= 0 || *heads % k[1] != 0) {
        FA_LOGE("FlashAttentionScoreGrad tiling: query/key are not TND with N a multiple of the kv heads");
        return ge::GRAPH_FAILED;
    }
    fa_host::BackwardProblem prob;
    prob.numHeads = *heads;
    prob.numKvHeads = k[1];
    prob.headDim = q[2];
    prob.tq = q[0];
    prob.tkv = k[0];
    const ge::DataType dtype = context->GetInputDesc(QUERY)->GetDataType();
    if (dtype != ge::DT_FLOAT16 && dtype != ge::DT_BF16 && dtype != ge::DT_FLOAT) {
        FA_LOGE("FlashAttentionScoreGrad tiling: query dtype %d is not FLOAT16, BF16 or FLOAT",
                static_cast<int>(dtype));
        return ge::GRAPH_FAILED;
    }
    prob.dtypeBytes = dtype == ge::DT_FLOAT ? 4 : 2;
    prob.scale = scale == nullptr ? 1.0f : *scale;
    prob.statsTnd = stats != nullptr && (std::strcmp(stats, "same_as_input") == 0 || std::strcmp(stats, "TND") == 0);
    prob.sparseMode = mode == nullptr ? 0 : *mode;
    prob.preTokens = pre == nullptr ? 2147483647 : *pre;
    prob.nextTokens = next == nullptr ? 2147483647 : *next;
    const gert::StorageShape *mask = context->GetOptionalInputShape(ATTEN_MASK);
    prob.hasMask = mask != nullptr;
    prob.hasSink = context->GetOptionalInputShape(SINK) != nullptr;
    const gert::StorageShape *pse = context->GetOptionalInputShape(PSE);
    prob.hasPse = pse != nullptr;
    const int64_t *pseType = attrs->GetAttrPointer<int64_t>(PSE_TYPE);
    prob.pseType = pseType == nullptr ? 1 : *pseType;
    if (prob.hasPse) {
        const std::vector<int64_t> ps = fa_host::Dims(pse->GetStorageShape());
        const bool alibi = prob.pseType >= 2;
        if (alibi ? (ps.size() != 1 && ps.size() != 2) : ps.size() != 4) {
            FA_LOGE("FlashAttentionScoreGrad tiling: pse_shift must be [B or 1, N, H, W] (types 0/1) or [N] / [B, N] "
                    "(types 2/3)");
            return ge::GRAPH_FAILED;
        }
        prob.pseBatch = alibi ? (ps.size() == 2 ? ps[0] : 1) : ps[0];
        prob.pseRows = alibi ? 0 : ps[2];
        prob.pseCols = alibi ? 0 : ps[3];
        const gert::StorageShape *qs = context->GetOptionalInputShape(Q_START);
        const gert::StorageShape *ks = context->GetOptionalInputShape(KV_START);
        prob.qStartCount = qs == nullptr ? 0 : qs->GetStorageShape().GetShapeSize();
        prob.kvStartCount = ks == nullptr ? 0 : ks->GetStorageShape().GetShapeSize();
    }
    const float *keepProb = attrs->GetAttrPointer<float>(KEEP_PROB);
    prob.keepProb = keepProb == nullptr ? 1.0f : *keepProb;
    prob.hasDropMask = context->GetOptionalInputShape(DROP_MASK) != nullptr && prob.keepProb < 1.0f;
    prob.prefix = fa_host::Int64Values(context, PREFIX);
    const gert::StorageShape *rope = context->GetOptionalInputShape(QUERY_ROPE);
    if (rope != nullptr) {
        const std::vector<int64_t> rs = fa_host::Dims(rope->GetStorageShape());
        prob.ropeDim = rs.size() == 3 ? rs[2] : 0;
    }
    if (prob.hasMask) prob.mask = MaskStrides(fa_host::Dims(mask->GetStorageShape()));
    // Absent and empty lengths both fail the emptiness check.
    prob.cumQ = fa_host::Int64Values(context, SEQ_Q);
    prob.cumKv = fa_host::Int64Values(context, SEQ_KV);
    if (prob.cumQ.size() != prob.cumKv.size() || prob.cumQ.empty()) {
        FA_LOGE("FlashAttentionScoreGrad tiling: actual_seq_qlen/kvlen missing or of different lengths");
        return ge::GRAPH_FAILED;
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    const fa_host::CoreBudget budget = fa_host::ReadCoreBudget(platform);

    FlashAttentionScoreGradTilingData *data = context->GetTilingData<FlashAttentionScoreGradTilingData>();
    *data = FlashAttentionScoreGradTilingData{};
    // Any of softmax_max / softmax_sum / attention_in absent: the kernel recomputes the forward and
    // takes the absent ones from it (the forward writes [T, N, 8]); given ones keep their layout.
    const bool noMax = context->GetOptionalInputShape(SOFTMAX_MAX) == nullptr;
    const bool noSum = context->GetOptionalInputShape(SOFTMAX_SUM) == nullptr;
    const bool recompute = noMax || noSum || context->GetOptionalInputShape(ATTENTION_IN) == nullptr;
    prob.sumStatsTnd = noSum || prob.statsTnd;
    if (noMax) prob.statsTnd = true;
    std::string why;
    if (!fa_host::PlanBackward(prob, budget, data->params, why) ||
        (recompute && !PlanRecompute(prob, budget, *data, why))) {
        FA_LOGE("FlashAttentionScoreGrad tiling: %s", why.c_str());
        return ge::GRAPH_FAILED;
    }
    const uint64_t dtypeKey = dtype == ge::DT_BF16    ? FAG_TILING_KEY_BF16
                              : dtype == ge::DT_FLOAT ? FAG_TILING_KEY_FP32
                                                      : FAG_TILING_KEY_FP16;
    const AttentionCore::ForwardParams &f = data->forward.params;
    context->SetTilingKey(
        AttentionCore::ForwardTilingKey(dtypeKey, recompute && f.lazyO != 0, false, recompute && f.kvNz != 0));
    const uint32_t cores = recompute && data->forward.params.usedCores > data->params.usedCores
                               ? data->forward.params.usedCores
                               : data->params.usedCores;
    context->SetBlockDim(cores);
    size_t *ws = context->GetWorkspaceSizes(1);
    ws[0] = data->backwardOffset + fa_host::BackwardWorkspaceBytes(data->params) + platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
