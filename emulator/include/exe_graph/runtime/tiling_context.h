// gert::TilingContext of the CPU target: what an operator's tiling function reads (shapes,
// dtypes, attributes, platform) and writes (tiling data, block dim, tiling key, workspace).
// Method names and semantics as CANN metadef exe_graph/runtime/tiling_context.h:
// GetInputShape/GetInputDesc/GetInputTensor take the index among the inputs actually given
// (absent optional inputs are skipped); the Optional/Dynamic variants take the IR index.
#ifndef EMU_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H_
#define EMU_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H_

#include <cstddef>
#include <cstdint>

#include "emu/op_call.h"
#include "exe_graph/runtime/runtime_attrs.h"
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tensor.h"
#include "exe_graph/runtime/tiling_data.h"
#include "graph/types.h"
#include "platform/platform_infos_def.h"

namespace gert {

class TilingContext {
public:
    explicit TilingContext(emu::OpCall *call) : call_(call) {}

    const char *GetNodeName() const { return call_->opType.c_str(); }
    const char *GetNodeType() const { return call_->opType.c_str(); }

    const StorageShape *GetInputShape(size_t index) const;
    const StorageShape *GetOptionalInputShape(size_t irIndex) const;
    const StorageShape *GetDynamicInputShape(size_t irIndex, size_t relativeIndex) const;
    const StorageShape *GetOutputShape(size_t index) const;
    const CompileTimeTensorDesc *GetInputDesc(size_t index) const;
    const CompileTimeTensorDesc *GetOptionalInputDesc(size_t irIndex) const;
    const CompileTimeTensorDesc *GetDynamicInputDesc(size_t irIndex, size_t relativeIndex) const;
    const CompileTimeTensorDesc *GetOutputDesc(size_t index) const;
    const Tensor *GetInputTensor(size_t index) const;
    const Tensor *GetOptionalInputTensor(size_t irIndex) const;
    const Tensor *GetDynamicInputTensor(size_t irIndex, size_t relativeIndex) const;
    size_t GetComputeNodeInputNum() const;

    const RuntimeAttrs *GetAttrs() const { return &call_->attrs; }

    TilingData *GetRawTilingData() { return &call_->tilingData; }
    // Typed view of the tiling buffer; sets the data size to sizeof(T).
    template <typename T> T *GetTilingData()
    {
        static_assert(sizeof(T) <= TilingData::kCapacity, "tiling struct larger than the tiling buffer");
        call_->tilingData.SetDataSize(sizeof(T));
        return static_cast<T *>(call_->tilingData.GetData());
    }

    ge::graphStatus SetBlockDim(uint32_t blockDim)
    {
        call_->blockDim = blockDim;
        return ge::GRAPH_SUCCESS;
    }
    ge::graphStatus SetSimdNumBlocks(uint32_t blockDim) { return SetBlockDim(blockDim); }
    uint32_t GetBlockDim() const { return call_->blockDim; }
    ge::graphStatus SetTilingKey(uint64_t key)
    {
        call_->tilingKey = key;
        return ge::GRAPH_SUCCESS;
    }
    uint64_t GetTilingKey() const { return call_->tilingKey; }
    ge::graphStatus SetScheduleMode(uint32_t mode)
    {
        call_->scheduleMode = mode;
        return ge::GRAPH_SUCCESS;
    }
    ge::graphStatus SetNeedAtomic(bool atomic)
    {
        call_->needAtomic = atomic;
        return ge::GRAPH_SUCCESS;
    }
    // Room for `count` workspace sizes; the run stage allocates their sum.
    size_t *GetWorkspaceSizes(size_t count)
    {
        if (call_->workspaceSizes.size() < count) call_->workspaceSizes.resize(count, 0);
        return call_->workspaceSizes.data();
    }
    size_t GetWorkspaceNum() const { return call_->workspaceSizes.size(); }
    fe::PlatFormInfos *GetPlatformInfo() { return &call_->platform; }
    int32_t GetDeterministic() const { return 0; }
    // The CPU target has no compile-info stage: operators get nullptr and must not need it.
    template <typename T> const T *GetCompileInfo() const { return nullptr; }

private:
    emu::OpCall *call_;
};

}  // namespace gert

#endif
