// Tiling of CubeMatmul: C is cut into baseM x baseN tiles spread over the cube cores; K is
// walked in baseK steps. 128 x 128 x 64 keeps an A and a B step (16 KiB each in fp16) double-
// buffered inside L0A/L0B (64 KiB) and a C tile (64 KiB fp32) double-buffered in L0C (128 KiB);
// small matrices shrink the tile to their 16-aligned size.
#include <algorithm>

#include "emu/log.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "cube_matmul_tiling_data.h"

namespace optiling {

namespace {
constexpr uint32_t kBaseM = 128;
constexpr uint32_t kBaseN = 128;
constexpr uint32_t kBaseK = 64;
uint32_t Align16(int64_t v) { return static_cast<uint32_t>((v + 15) / 16 * 16); }
}  // namespace

ge::graphStatus CubeMatmulTiling(gert::TilingContext *context)
{
    const gert::Shape &a = context->GetInputShape(0)->GetStorageShape();
    const gert::Shape &b = context->GetInputShape(1)->GetStorageShape();
    const gert::Shape &c = context->GetOutputShape(0)->GetStorageShape();
    if (a.GetDimNum() != 2 || b.GetDimNum() != 2 || c.GetDimNum() != 2) {
        EMU_LOGE("CubeMatmul: a, b and c must be 2-D (got %zu, %zu, %zu dims)", a.GetDimNum(), b.GetDimNum(),
                 c.GetDimNum());
        return ge::GRAPH_FAILED;
    }
    const int64_t m = a.GetDim(0), k = a.GetDim(1), n = b.GetDim(1);
    if (b.GetDim(0) != k || c.GetDim(0) != m || c.GetDim(1) != n) {
        EMU_LOGE("CubeMatmul: shapes a [%lld, %lld], b [%lld, %lld], c [%lld, %lld] do not form C = A * B",
                 (long long)m, (long long)k, (long long)b.GetDim(0), (long long)n, (long long)c.GetDim(0),
                 (long long)c.GetDim(1));
        return ge::GRAPH_FAILED;
    }
    if (m <= 0 || n <= 0 || k <= 0) {
        EMU_LOGE("CubeMatmul: empty matrices are not supported (m=%lld, n=%lld, k=%lld)", (long long)m, (long long)n,
                 (long long)k);
        return ge::GRAPH_FAILED;
    }
    const ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
    if (context->GetInputDesc(1)->GetDataType() != dtype || context->GetOutputDesc(0)->GetDataType() != dtype) {
        EMU_LOGE("CubeMatmul: a, b and c must share one dtype");
        return ge::GRAPH_FAILED;
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    CubeMatmulTilingData *data = context->GetTilingData<CubeMatmulTilingData>();
    data->m = static_cast<uint32_t>(m);
    data->n = static_cast<uint32_t>(n);
    data->k = static_cast<uint32_t>(k);
    data->baseM = std::min(kBaseM, Align16(m));
    data->baseN = std::min(kBaseN, Align16(n));
    data->baseK = std::min(kBaseK, Align16(k));
    data->mTiles = static_cast<uint32_t>((m + data->baseM - 1) / data->baseM);
    data->nTiles = static_cast<uint32_t>((n + data->baseN - 1) / data->baseN);
    context->SetBlockDim(std::min(platform.GetCoreNumAic(), data->mTiles * data->nTiles));
    context->SetTilingKey(dtype == ge::DT_BF16 ? CUBE_MATMUL_KEY_BF16 : CUBE_MATMUL_KEY_HALF);
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_OPTILING(CubeMatmul).Tiling(CubeMatmulTiling);

}  // namespace optiling
