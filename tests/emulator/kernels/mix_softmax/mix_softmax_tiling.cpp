// Tiling of MixSoftmax: row blocks of 32 rows go round-robin to the AI cores; S rows are padded
// to 16 columns in the fp32 workspace (two slots per core). 32 rows x 512 columns of fp32 is
// 64 KiB per slot: half of it (16 rows) per vector core fits the UB with room for the output.
#include <algorithm>

#include "emu/log.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "mix_softmax_tiling_data.h"

namespace optiling {

namespace {
constexpr uint32_t kBaseM = 32;
constexpr uint32_t kMaxN = 512;
constexpr uint32_t kSlots = 2;
constexpr uint32_t kAttrMaxCores = 0;
}  // namespace

ge::graphStatus MixSoftmaxTiling(gert::TilingContext *context)
{
    const gert::Shape &a = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape &b = context->GetInputShape(1)->GetStorageShape();
    const gert::Shape &y = context->GetOutputShape(0)->GetStorageShape();
    if (a.GetDimNum() != 2 || b.GetDimNum() != 2 || y.GetDimNum() != 2) {
        EMU_LOGE("MixSoftmax: a, b and y must be 2-D");
        return ge::GRAPH_FAILED;
    }
    const int64_t m = a.GetDim(0), k = a.GetDim(1), n = b.GetDim(0);
    if (b.GetDim(1) != k || y.GetDim(0) != m || y.GetDim(1) != n) {
        EMU_LOGE("MixSoftmax: shapes a [%lld, %lld], b [%lld, %lld], y [%lld, %lld] do not form Y = softmax(A * B^T)",
                 (long long)m, (long long)k, (long long)n, (long long)b.GetDim(1), (long long)y.GetDim(0),
                 (long long)y.GetDim(1));
        return ge::GRAPH_FAILED;
    }
    if (m <= 0 || k <= 0 || n <= 0 || n > kMaxN) {
        EMU_LOGE("MixSoftmax: need m, k >= 1 and 1 <= n <= %u (got m=%lld, n=%lld, k=%lld)", kMaxN, (long long)m,
                 (long long)n, (long long)k);
        return ge::GRAPH_FAILED;
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    MixSoftmaxTilingData *data = context->GetTilingData<MixSoftmaxTilingData>();
    data->m = static_cast<uint32_t>(m);
    data->n = static_cast<uint32_t>(n);
    data->k = static_cast<uint32_t>(k);
    data->baseM = kBaseM;
    data->nAlign = static_cast<uint32_t>((n + 15) / 16 * 16);
    data->rowBlocks = static_cast<uint32_t>((m + kBaseM - 1) / kBaseM);

    uint32_t cores = platform.GetCoreNumAic();
    const int64_t maxCores = *context->GetAttrs()->GetInt(kAttrMaxCores);
    if (maxCores > 0) cores = std::min<uint32_t>(cores, static_cast<uint32_t>(maxCores));
    const uint32_t blockDim = std::min(cores, data->rowBlocks);
    context->SetBlockDim(blockDim);
    context->SetScheduleMode(1);  // cube and vector cores of a block must run together
    const uint64_t user = static_cast<uint64_t>(blockDim) * kSlots * kBaseM * data->nAlign * sizeof(float);
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize() + user;
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
