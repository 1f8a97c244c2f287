// Tiling of VectorAxpy: the flat array is split over the vector cores in 32-byte-aligned
// chunks; each core pipelines its chunk in tiles sized so that the three double-buffered
// queues (x, y, z) fit in the UB.
#include <algorithm>

#include "emu/log.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"
#include "vector_axpy_tiling_data.h"

namespace optiling {

namespace {
constexpr uint32_t kQueues = 3;  // x, y in; z out
constexpr uint32_t kBuffersPerQueue = 2;
constexpr uint32_t kAttrAlpha = 0;
constexpr uint32_t kAttrTileLength = 1;
}  // namespace

ge::graphStatus VectorAxpyTiling(gert::TilingContext *context)
{
    const ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
    const uint32_t elemBytes = dtype == ge::DT_FLOAT ? 4 : 2;
    const uint32_t align = 32 / elemBytes;  // elements per 32-byte block
    const int64_t total = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    if (context->GetInputShape(1)->GetStorageShape().GetShapeSize() != total ||
        context->GetOutputShape(0)->GetStorageShape().GetShapeSize() != total) {
        EMU_LOGE("VectorAxpy: x, y and z must have the same number of elements");
        return ge::GRAPH_FAILED;
    }
    if (total <= 0 || total > UINT32_MAX) {
        EMU_LOGE("VectorAxpy: %lld elements; supported 1 .. 2^32-1", static_cast<long long>(total));
        return ge::GRAPH_FAILED;
    }

    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    uint64_t ubBytes = 0;
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, ubBytes);
    const uint32_t aivCores = platform.GetCoreNumAiv();

    const uint32_t blocks = static_cast<uint32_t>((total + align - 1) / align);
    const uint32_t perCoreBlocks = (blocks + aivCores - 1) / aivCores;
    const uint32_t perCore = perCoreBlocks * align;
    const uint32_t maxTile = static_cast<uint32_t>(ubBytes / (kQueues * kBuffersPerQueue * elemBytes)) / align * align;
    const int64_t requestedTile = *context->GetAttrs()->GetInt(kAttrTileLength);
    uint32_t tile = std::min(perCore, maxTile);
    if (requestedTile > 0) tile = static_cast<uint32_t>((requestedTile + align - 1) / align * align);
    if (tile > maxTile) {
        EMU_LOGE("VectorAxpy: tile_length %lld exceeds the %u elements the UB holds",
                 static_cast<long long>(requestedTile), maxTile);
        return ge::GRAPH_FAILED;
    }

    VectorAxpyTilingData *data = context->GetTilingData<VectorAxpyTilingData>();
    data->totalLength = static_cast<uint32_t>(total);
    data->perCoreLength = perCore;
    data->tileLength = tile;
    data->alpha = *context->GetAttrs()->GetFloat(kAttrAlpha);
    context->SetBlockDim(static_cast<uint32_t>((total + perCore - 1) / perCore));
    context->SetTilingKey(dtype == ge::DT_FLOAT ? VECTOR_AXPY_KEY_FLOAT : VECTOR_AXPY_KEY_HALF);
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
