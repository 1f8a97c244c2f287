// Tiling of IncreFlashAttention: reads shapes/attributes from the TilingContext (the aclnn API
// validated them) and the core budget from PlatformAscendC, plans the decode variant of the
// forward core (op_host/common/tiling/decode_tiling) and selects the kernel by element type.
#include <algorithm>
#include <string>

#include "../common/attention_layout.h"
#include "../common/tiling/decode_tiling.h"
#include "../common/op_log.h"
#include "../common/tiling/tiling_inputs.h"
#include "../../op_kernel/incre_flash_attention/incre_flash_attention_tiling_data.h"
#include "exe_graph/runtime/tiling_context.h"
#include "incre_flash_attention_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace {

enum InputIndex : size_t {
    QUERY = 0,
    KEY,
    VALUE,
    PSE_SHIFT,
    ATTEN_MASK,
    ACTUAL_SEQ_LENGTHS,
    DEQUANT_SCALE1,
    QUANT_SCALE1,
    DEQUANT_SCALE2,
    QUANT_SCALE2,
    QUANT_OFFSET2,
    ANTIQUANT_SCALE,
    ANTIQUANT_OFFSET,
    BLOCK_TABLE,
    KV_PADDING_SIZE
};
enum AttrIndex : size_t { NUM_HEADS = 0, SCALE_VALUE, INPUT_LAYOUT, NUM_KV_HEADS, BLOCK_SIZE, INNER_PRECISE };

constexpr const char *TAG = "IncreFlashAttention tiling";

}  // namespace

namespace optiling {

ge::graphStatus IncreFlashAttentionTiling(gert::TilingContext *context)
{
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    const int64_t *numHeads = attrs->GetAttrPointer<int64_t>(NUM_HEADS);
    const float *scale = attrs->GetAttrPointer<float>(SCALE_VALUE);
    const char *layoutText = attrs->GetAttrPointer<char>(INPUT_LAYOUT);
    const int64_t *kvHeadsAttr = attrs->GetAttrPointer<int64_t>(NUM_KV_HEADS);
    const int64_t *blockSize = attrs->GetAttrPointer<int64_t>(BLOCK_SIZE);
    const fa_host::Layout layout = fa_host::ParseLayout(layoutText);
    if (numHeads == nullptr || *numHeads <= 0 ||
        (layout != fa_host::Layout::BSH && layout != fa_host::Layout::BSND && layout != fa_host::Layout::BNSD)) {
        FA_LOGE("%s: num_heads / input_layout missing or invalid", TAG);
        return ge::GRAPH_FAILED;
    }
    const int64_t kvHeads = (kvHeadsAttr == nullptr || *kvHeadsAttr == 0) ? *numHeads : *kvHeadsAttr;
    fa_host::TensorDesc q;
    q.shape = fa_host::Dims(context->GetInputShape(QUERY)->GetStorageShape());
    fa_host::BnsdDims qd;
    if (!fa_host::DimsOf(q, layout, *numHeads, qd) || kvHeads <= 0 || *numHeads % kvHeads != 0) {
        FA_LOGE("%s: query rank / heads do not match input_layout %s", TAG, layoutText);
        return ge::GRAPH_FAILED;
    }
    const std::vector<int64_t> k = fa_host::Dims(context->GetDynamicInputShape(KEY, 0)->GetStorageShape());
    std::vector<int64_t> listSeq;

    fa_host::DecodeProblem prob;
    prob.batch = qd.b;
    prob.numHeads = *numHeads;
    prob.numKvHeads = kvHeads;
    prob.headDim = qd.d;
    const int64_t n = qd.n, d = qd.d;
    prob.q = {uint64_t(n * d), uint64_t(d), uint64_t(n * d)};  // S = 1: (B, N, D) in every layout
    prob.scale = scale == nullptr ? 1.0f : *scale;
    const ge::DataType dtype = context->GetInputDesc(QUERY)->GetDataType();

    const gert::StorageShape *table = context->GetOptionalInputShape(BLOCK_TABLE);
    if (table != nullptr) {
        const std::vector<int64_t> tb = fa_host::Dims(table->GetStorageShape());
        prob.paged = true;
        prob.blockSize = blockSize == nullptr ? 0 : *blockSize;
        prob.maxBlocks = tb[1];
        prob.cacheBlocks = k[0];
        if (k.size() == 3) {  // (blocknum, blocksize, H)
            prob.kv = {0, uint64_t(d), uint64_t(k[2])};
            prob.pageStride = uint64_t(k[1] * k[2]);
            prob.pageHeadStride = uint64_t(d);
        } else {  // (blocknum, KV_N, blocksize, D)
            prob.kv = {0, uint64_t(k[2] * k[3]), uint64_t(k[3])};
            prob.pageStride = uint64_t(k[1] * k[2] * k[3]);
            prob.pageHeadStride = uint64_t(k[2] * k[3]);
        }
        prob.seqKv = prob.maxBlocks * prob.blockSize;
    } else {
        // one tensor of B batches, or (tensor list) B tensors of batch 1 with their own S
        for (size_t i = 0; context->GetDynamicInputShape(KEY, i) != nullptr; ++i) {
            fa_host::TensorDesc kt;
            kt.shape = fa_host::Dims(context->GetDynamicInputShape(KEY, i)->GetStorageShape());
            fa_host::BnsdDims kd;
            if (!fa_host::DimsOf(kt, layout, kvHeads, kd)) {
                FA_LOGE("%s: key rank does not match input_layout %s", TAG, layoutText);
                return ge::GRAPH_FAILED;
            }
            listSeq.push_back(kd.s);
            prob.seqKv = std::max(prob.seqKv, kd.s);
            if (layout == fa_host::Layout::BNSD) {
                prob.kv = {uint64_t(kd.n * kd.s * d), uint64_t(kd.s * d), uint64_t(d)};
            } else {
                prob.kv = {uint64_t(kd.s * kd.n * d), uint64_t(d), uint64_t(kd.n * d)};
            }
        }
    }
    const gert::Tensor *lens = context->GetOptionalInputTensor(ACTUAL_SEQ_LENGTHS);
    if (lens != nullptr && lens->GetData<int64_t>() != nullptr) {
        const int64_t *v = lens->GetData<int64_t>();
        prob.kvLengths.assign(v, v + lens->GetShapeSize());
    }
    const size_t lengthsCount = prob.kvLengths.size();
    const bool list = listSeq.size() > 1;
    if (list) {  // planned as one batch: the kernel runs the batches one after the other
        if (listSeq.size() > AttentionCore::MAX_KV_LIST) {
            FA_LOGE("%s: %zu key tensors exceed %u", TAG, listSeq.size(), AttentionCore::MAX_KV_LIST);
            return ge::GRAPH_FAILED;
        }
        prob.batch = 1;
        if (!prob.kvLengths.empty()) {
            prob.kvLengths = {*std::max_element(prob.kvLengths.begin(), prob.kvLengths.end())};
        }
    }
    prob.leftPadding = context->GetOptionalInputShape(KV_PADDING_SIZE) != nullptr;
    const gert::StorageShape *mask = context->GetOptionalInputShape(ATTEN_MASK);
    if (mask != nullptr) {
        const std::vector<int64_t> m = fa_host::Dims(mask->GetStorageShape());
        prob.hasMask = true;
        prob.maskStrideB = uint64_t(m.back());  // (B, S), (B, 1, S), (B, 1, 1, S): one row per batch
    }
    const gert::StorageShape *pse = context->GetOptionalInputShape(PSE_SHIFT);
    if (pse != nullptr) {
        const std::vector<int64_t> ps = fa_host::Dims(pse->GetStorageShape());  // (B or 1, N, 1, S)
        prob.hasPse = true;
        prob.pseBf16 = dtype == ge::DT_BF16;
        prob.pseStrideN = uint64_t(ps[3]);
        prob.pseStrideB = ps[0] == 1 ? 0 : uint64_t(ps[1] * ps[3]);
    }

    const gert::StorageShape *antiScale = context->GetOptionalInputShape(ANTIQUANT_SCALE);
    if (antiScale != nullptr) {  // int8 key/value, dequantised inside the kernel
        prob.antiquant = true;
        prob.antiPerChannel = antiScale->GetStorageShape().GetShapeSize() != 2;
        prob.dtypeBf16 = dtype == ge::DT_BF16;
        prob.int8Digits = true;  // the int8 x int8 core where the shape qualifies and pays (decode_tiling.cpp)
    }
    const gert::StorageShape *quantScale = context->GetOptionalInputShape(QUANT_SCALE2);
    if (quantScale != nullptr) {
        prob.quantOut = true;
        prob.quantPerChannel = quantScale->GetStorageShape().GetShapeSize() != 1;
        prob.hasQuantOffset = context->GetOptionalInputShape(QUANT_OFFSET2) != nullptr;
        prob.quantBf16 = context->GetOptionalInputDesc(QUANT_SCALE2)->GetDataType() == ge::DT_BF16;
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    const fa_host::CoreBudget budget = fa_host::ReadCoreBudget(platform);

    IncreFlashAttentionTilingData *data = context->GetTilingData<IncreFlashAttentionTilingData>();
    std::string why;
    if (!fa_host::PlanDecode(prob, budget, *data, why)) {
        FA_LOGE("%s: %s", TAG, why.c_str());
        return ge::GRAPH_FAILED;
    }
    if (list) {
        AttentionCore::DecodeParams &dp = data->decode;
        data->mask.kvLengthsCount = static_cast<uint32_t>(lengthsCount);
        dp.kvListBatches = static_cast<uint32_t>(listSeq.size());
        dp.kvListBnsd = layout == fa_host::Layout::BNSD ? 1 : 0;
        for (size_t i = 0; i < listSeq.size(); ++i) dp.kvListSeq[i] = static_cast<uint32_t>(listSeq[i]);
    }
    if (data->decode.digits.enabled != 0) {  // the int8 x int8 core: eager P.V of its own
        context->SetTilingKey(dtype == ge::DT_BF16 ? IFA_TILING_KEY_BF16_DIGITS : IFA_TILING_KEY_FP16_DIGITS);
    } else {
        context->SetTilingKey(AttentionCore::ForwardTilingKey(
            dtype == ge::DT_BF16 ? IFA_TILING_KEY_BF16 : IFA_TILING_KEY_FP16, data->params.lazyO != 0));
    }
    context->SetBlockDim(data->params.usedCores);
    size_t *ws = context->GetWorkspaceSizes(1);
    ws[0] = fa_host::DecodeWorkspaceBytes(*data) + platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
