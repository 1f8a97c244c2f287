// gert::InferShapeContext / InferDataTypeContext of the CPU target (as CANN metadef): the
// output shapes and dtypes an operator derives from its inputs and attributes.
#ifndef EMU_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H_
#define EMU_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H_

#include <cstddef>

#include "emu/op_call.h"
#include "exe_graph/runtime/runtime_attrs.h"
#include "exe_graph/runtime/shape.h"
#include "exe_graph/runtime/tensor.h"
#include "graph/types.h"

namespace gert {

class InferShapeContext {
public:
    explicit InferShapeContext(emu::OpCall *call) : call_(call) {}
    const char *GetNodeName() const { return call_->opType.c_str(); }
    const Shape *GetInputShape(size_t index) const;
    const Shape *GetOptionalInputShape(size_t irIndex) const;
    const Shape *GetDynamicInputShape(size_t irIndex, size_t relativeIndex) const;
    const Tensor *GetInputTensor(size_t index) const;
    const Tensor *GetOptionalInputTensor(size_t irIndex) const;
    // The inferred shape goes into the call's output (origin and storage shape).
    Shape *GetOutputShape(size_t index);
    const RuntimeAttrs *GetAttrs() const { return &call_->attrs; }

private:
    emu::OpCall *call_;
};

class InferDataTypeContext {
public:
    explicit InferDataTypeContext(emu::OpCall *call) : call_(call) {}
    const char *GetNodeName() const { return call_->opType.c_str(); }
    ge::DataType GetInputDataType(size_t index) const;
    ge::DataType GetOptionalInputDataType(size_t irIndex) const;
    ge::DataType GetDynamicInputDataType(size_t irIndex, size_t relativeIndex) const;
    ge::DataType GetOutputDataType(size_t index) const;
    ge::graphStatus SetOutputDataType(size_t index, ge::DataType dtype);
    const RuntimeAttrs *GetAttrs() const { return &call_->attrs; }

private:
    emu::OpCall *call_;
};

}  // namespace gert

#endif
