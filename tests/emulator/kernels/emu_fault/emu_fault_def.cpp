// OpDef of the fault proof operator EmuFault (emu_fault_tiling_data.h): y = x (float).
#include "register/op_def_registry.h"

namespace optiling {
ge::graphStatus EmuFaultTiling(gert::TilingContext *context);
}

namespace ops {

class EmuFault : public OpDef {
public:
    explicit EmuFault(const char *name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Attr("mode").AttrType(OPTIONAL).Int(0);
        this->Attr("iterations").AttrType(OPTIONAL).Int(0);
        this->AICore().SetTiling(optiling::EmuFaultTiling);
        this->AICore().AddConfig("ascend910b");
    }
};

OP_ADD(EmuFault);

}  // namespace ops
