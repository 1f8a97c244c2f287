// gert::TilingContext / InferShapeContext / InferDataTypeContext over an emu::OpCall.
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"

namespace emu {
namespace {

// The index-th present tensor over all parameters, in IR order.
const OpCallTensor *Instance(const std::vector<OpCallParam> &params, size_t index)
{
    for (const OpCallParam &p : params) {
        if (!p.present) continue;
        if (index < p.instances.size()) return &p.instances[index];
        index -= p.instances.size();
    }
    return nullptr;
}

const OpCallTensor *IrInstance(const std::vector<OpCallParam> &params, size_t irIndex, size_t relative)
{
    if (irIndex >= params.size() || !params[irIndex].present) return nullptr;
    const OpCallParam &p = params[irIndex];
    return relative < p.instances.size() ? &p.instances[relative] : nullptr;
}

}  // namespace

const OpCallTensor *OpCall::InputInstance(size_t index) const { return Instance(inputs, index); }
const OpCallTensor *OpCall::OutputInstance(size_t index) const { return Instance(outputs, index); }

}  // namespace emu

namespace gert {

using emu::IrInstance;

const StorageShape *TilingContext::GetInputShape(size_t index) const
{
    const emu::OpCallTensor *t = call_->InputInstance(index);
    return t ? &t->shape : nullptr;
}
const StorageShape *TilingContext::GetOptionalInputShape(size_t irIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, 0);
    return t ? &t->shape : nullptr;
}
const StorageShape *TilingContext::GetDynamicInputShape(size_t irIndex, size_t relativeIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, relativeIndex);
    return t ? &t->shape : nullptr;
}
const StorageShape *TilingContext::GetOutputShape(size_t index) const
{
    const emu::OpCallTensor *t = call_->OutputInstance(index);
    return t ? &t->shape : nullptr;
}
const CompileTimeTensorDesc *TilingContext::GetInputDesc(size_t index) const
{
    const emu::OpCallTensor *t = call_->InputInstance(index);
    return t ? &t->desc : nullptr;
}
const CompileTimeTensorDesc *TilingContext::GetOptionalInputDesc(size_t irIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, 0);
    return t ? &t->desc : nullptr;
}
const CompileTimeTensorDesc *TilingContext::GetDynamicInputDesc(size_t irIndex, size_t relativeIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, relativeIndex);
    return t ? &t->desc : nullptr;
}
const CompileTimeTensorDesc *TilingContext::GetOutputDesc(size_t index) const
{
    const emu::OpCallTensor *t = call_->OutputInstance(index);
    return t ? &t->desc : nullptr;
}
const Tensor *TilingContext::GetInputTensor(size_t index) const
{
    const emu::OpCallTensor *t = call_->InputInstance(index);
    return t ? &t->tensor : nullptr;
}
const Tensor *TilingContext::GetOptionalInputTensor(size_t irIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, 0);
    return t ? &t->tensor : nullptr;
}
const Tensor *TilingContext::GetDynamicInputTensor(size_t irIndex, size_t relativeIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, relativeIndex);
    return t ? &t->tensor : nullptr;
}
size_t TilingContext::GetComputeNodeInputNum() const
{
    size_t n = 0;
    for (const emu::OpCallParam &p : call_->inputs)
        if (p.present) n += p.instances.size();
    return n;
}

const Shape *InferShapeContext::GetInputShape(size_t index) const
{
    const emu::OpCallTensor *t = call_->InputInstance(index);
    return t ? &t->shape.GetOriginShape() : nullptr;
}
const Shape *InferShapeContext::GetOptionalInputShape(size_t irIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, 0);
    return t ? &t->shape.GetOriginShape() : nullptr;
}
const Shape *InferShapeContext::GetDynamicInputShape(size_t irIndex, size_t relativeIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, relativeIndex);
    return t ? &t->shape.GetOriginShape() : nullptr;
}
const Tensor *InferShapeContext::GetInputTensor(size_t index) const
{
    const emu::OpCallTensor *t = call_->InputInstance(index);
    return t ? &t->tensor : nullptr;
}
const Tensor *InferShapeContext::GetOptionalInputTensor(size_t irIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, 0);
    return t ? &t->tensor : nullptr;
}
Shape *InferShapeContext::GetOutputShape(size_t index)
{
    auto *t = const_cast<emu::OpCallTensor *>(call_->OutputInstance(index));
    return t ? &t->shape.MutableOriginShape() : nullptr;
}

ge::DataType InferDataTypeContext::GetInputDataType(size_t index) const
{
    const emu::OpCallTensor *t = call_->InputInstance(index);
    return t ? t->desc.GetDataType() : ge::DT_UNDEFINED;
}
ge::DataType InferDataTypeContext::GetOptionalInputDataType(size_t irIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, 0);
    return t ? t->desc.GetDataType() : ge::DT_UNDEFINED;
}
ge::DataType InferDataTypeContext::GetDynamicInputDataType(size_t irIndex, size_t relativeIndex) const
{
    const emu::OpCallTensor *t = IrInstance(call_->inputs, irIndex, relativeIndex);
    return t ? t->desc.GetDataType() : ge::DT_UNDEFINED;
}
ge::DataType InferDataTypeContext::GetOutputDataType(size_t index) const
{
    const emu::OpCallTensor *t = call_->OutputInstance(index);
    return t ? t->desc.GetDataType() : ge::DT_UNDEFINED;
}
ge::graphStatus InferDataTypeContext::SetOutputDataType(size_t index, ge::DataType dtype)
{
    auto *t = const_cast<emu::OpCallTensor *>(call_->OutputInstance(index));
    if (t == nullptr) return ge::GRAPH_FAILED;
    t->desc.SetDataType(dtype);
    return ge::GRAPH_SUCCESS;
}

}  // namespace gert
