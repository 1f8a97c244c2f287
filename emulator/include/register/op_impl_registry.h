// Tiling / infershape registration of the CPU target (as CANN metadef register/op_impl_registry.h):
//   IMPL_OP_OPTILING(MyOp).Tiling(MyTilingFunc);
//   IMPL_OP_INFERSHAPE(MyOp).InferShape(MyInferShape).InferDataType(MyInferDataType);
#ifndef EMU_REGISTER_OP_IMPL_REGISTRY_H_
#define EMU_REGISTER_OP_IMPL_REGISTRY_H_

#include <cstdint>
#include <initializer_list>

#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/tiling_context.h"
#include "graph/types.h"

namespace gert {

class TilingParseContext;

class OpImplRegisterV2 {
public:
    using TilingKernelFunc = ge::graphStatus (*)(TilingContext *);
    using InferShapeKernelFunc = ge::graphStatus (*)(InferShapeContext *);
    using InferDataTypeKernelFunc = ge::graphStatus (*)(InferDataTypeContext *);
    using TilingParseFunc = ge::graphStatus (*)(TilingParseContext *);

    explicit OpImplRegisterV2(const char *opType) : opType_(opType) {}
    OpImplRegisterV2 &Tiling(TilingKernelFunc func);
    OpImplRegisterV2 &InferShape(InferShapeKernelFunc func);
    OpImplRegisterV2 &InferDataType(InferDataTypeKernelFunc func);
    // Accepted for source compatibility; the CPU target has no compile-info stage.
    template <typename CompileInfo> OpImplRegisterV2 &TilingParse(TilingParseFunc) { return *this; }
    OpImplRegisterV2 &TilingInputsDataDependency(std::initializer_list<int32_t>) { return *this; }
    OpImplRegisterV2 &InputsDataDependency(std::initializer_list<int32_t>) { return *this; }

private:
    const char *opType_;
};

}  // namespace gert

#define EMU_OP_IMPL_CONCAT_(a, b) a##b
#define EMU_OP_IMPL_CONCAT(a, b) EMU_OP_IMPL_CONCAT_(a, b)
// The registration happens in the chained calls; the static only gives them a place to run.
#define IMPL_OP(opType)                                                                                                \
    static gert::OpImplRegisterV2 EMU_OP_IMPL_CONCAT(g_emuOpImpl_##opType##_, __COUNTER__) __attribute__((unused)) =   \
        gert::OpImplRegisterV2(#opType)
#define IMPL_OP_OPTILING(opType) IMPL_OP(opType)
#define IMPL_OP_INFERSHAPE(opType) IMPL_OP(opType)

#endif
