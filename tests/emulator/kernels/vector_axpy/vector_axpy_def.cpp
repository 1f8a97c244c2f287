// OpDef of the vector proof operator VectorAxpy: z = alpha * x + y (float or half).
#include "register/op_def_registry.h"

namespace optiling {
ge::graphStatus VectorAxpyTiling(gert::TilingContext *context);
}

namespace ops {

class VectorAxpy : public OpDef {
public:
    explicit VectorAxpy(const char *name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Output("z")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT, ge::DT_FLOAT16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("alpha").AttrType(REQUIRED).Float();
        // Elements per pipeline tile; 0 lets the tiling fill the UB (tests force small tiles).
        this->Attr("tile_length").AttrType(OPTIONAL).Int(0);
        this->AICore().SetTiling(optiling::VectorAxpyTiling);
        this->AICore().AddConfig("ascend910b");
    }
};

OP_ADD(VectorAxpy);

}  // namespace ops
