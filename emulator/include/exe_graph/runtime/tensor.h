// gert::Tensor and gert::CompileTimeTensorDesc as tiling code sees an input: shape, dtype,
// format and (for value-dependent host inputs such as actual sequence lengths) the data.
#ifndef EMU_EXE_GRAPH_RUNTIME_TENSOR_H_
#define EMU_EXE_GRAPH_RUNTIME_TENSOR_H_

#include <cstdint>

#include "exe_graph/runtime/storage_shape.h"
#include "graph/types.h"

namespace gert {

class CompileTimeTensorDesc {
public:
    CompileTimeTensorDesc() = default;
    CompileTimeTensorDesc(ge::DataType dtype, ge::Format format) : dtype_(dtype), format_(format) {}
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetStorageFormat() const { return format_; }
    ge::Format GetOriginFormat() const { return format_; }
    void SetDataType(ge::DataType dtype) { dtype_ = dtype; }

private:
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    ge::Format format_ = ge::FORMAT_ND;
};

class Tensor {
public:
    Tensor() = default;
    Tensor(const StorageShape &shape, ge::DataType dtype, ge::Format format, const void *addr)
        : shape_(shape), dtype_(dtype), format_(format), addr_(addr)
    {
    }
    const Shape &GetOriginShape() const { return shape_.GetOriginShape(); }
    const Shape &GetStorageShape() const { return shape_.GetStorageShape(); }
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetStorageFormat() const { return format_; }
    ge::Format GetOriginFormat() const { return format_; }
    const void *GetAddr() const { return addr_; }
    // Host-readable data: set for value-dependent inputs (aclIntArray arguments); nullptr for
    // device tensors, whose contents tiling must not read.
    template <typename T> const T *GetData() const { return static_cast<const T *>(addr_); }

private:
    StorageShape shape_;
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    ge::Format format_ = ge::FORMAT_ND;
    const void *addr_ = nullptr;
};

}  // namespace gert

#endif
