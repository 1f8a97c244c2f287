// Tiling of EmuFault: one AI core; the attributes go to the kernel unchanged.
#include "emu/log.h"
#include "emu_fault_tiling_data.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {

ge::graphStatus EmuFaultTiling(gert::TilingContext *context)
{
    const int64_t length = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    const int64_t mode = *context->GetAttrs()->GetInt(0);
    const int64_t iterations = *context->GetAttrs()->GetInt(1);
    if (length <= 0 || length % 8 != 0 || length > 8192) {
        EMU_LOGE("EmuFault: x has %lld elements; supported a multiple of 8 up to 8192", static_cast<long long>(length));
        return ge::GRAPH_FAILED;
    }
    if (mode < 0 || mode >= EMU_FAULT_MODES || iterations < 0 || iterations > UINT32_MAX) {
        EMU_LOGE("EmuFault: mode %lld or iterations %lld out of range", static_cast<long long>(mode),
                 static_cast<long long>(iterations));
        return ge::GRAPH_FAILED;
    }
    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    EmuFaultTilingData *data = context->GetTilingData<EmuFaultTilingData>();
    data->length = static_cast<uint32_t>(length);
    data->mode = static_cast<uint32_t>(mode);
    data->iterations = static_cast<uint32_t>(iterations);
    context->SetBlockDim(1);
    context->SetTilingKey(0);
    context->GetWorkspaceSizes(1)[0] = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

}  // namespace optiling
