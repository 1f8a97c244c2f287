// The state of one aclnn call on the CPU target: the inputs/outputs/attributes of the operator
// (by IR index, as its OpDef declares them) and what the tiling function produced. The tiling
// and infershape contexts are views of it; emu/op_runner.h builds it. Not a CANN header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exe_graph/runtime/runtime_attrs.h"
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tensor.h"
#include "exe_graph/runtime/tiling_data.h"
#include "platform/platform_infos_def.h"

struct aclTensor;

namespace emu {

// One tensor instance of an input or output.
struct OpCallTensor {
    gert::StorageShape shape;
    gert::CompileTimeTensorDesc desc;
    gert::Tensor tensor;                               // shape/dtype/format (+ host data for value inputs)
    void *deviceAddr = nullptr;                        // GM address handed to the kernel
    const aclTensor *acl = nullptr;                    // the caller's tensor, when there is one
    std::shared_ptr<std::vector<int64_t>> hostValues;  // aclIntArray contents (value inputs)
};

// One IR parameter: absent (optional not given), one instance, or a list (dynamic).
struct OpCallParam {
    bool present = false;
    std::vector<OpCallTensor> instances;
};

struct OpCall {
    std::string opType;
    std::vector<OpCallParam> inputs;   // by IR index
    std::vector<OpCallParam> outputs;  // by IR index
    gert::RuntimeAttrs attrs;          // by attribute index
    fe::PlatFormInfos platform;

    // Tiling results.
    gert::TilingData tilingData;
    uint32_t blockDim = 0;
    uint64_t tilingKey = 0;
    uint32_t scheduleMode = 0;
    bool needAtomic = false;
    std::vector<size_t> workspaceSizes = std::vector<size_t>(1, 0);

    // Instance index (present tensors only, in IR order) -> (IR index, index within the list).
    const OpCallTensor *InputInstance(size_t index) const;
    const OpCallTensor *OutputInstance(size_t index) const;
};

}  // namespace emu
