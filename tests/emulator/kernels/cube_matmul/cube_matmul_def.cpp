// OpDef of the cube proof operator CubeMatmul: C = A * B (fp16 or bf16, fp32 accumulation).
// Its tiling registers through IMPL_OP_OPTILING (the other proof ops use AICore().SetTiling),
// so both registration paths are exercised.
#include "register/op_def_registry.h"

namespace ops {

class CubeMatmul : public OpDef {
public:
    explicit CubeMatmul(const char *name) : OpDef(name)
    {
        this->Input("a")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("b")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("c")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->AICore().AddConfig("ascend910b");
    }
};

OP_ADD(CubeMatmul);

}  // namespace ops
