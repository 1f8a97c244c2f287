// OpDef of the MIX proof operator MixSoftmax: Y = softmax_rows(A * B^T), A/B fp16, Y fp32.
#include "register/op_def_registry.h"

namespace optiling {
ge::graphStatus MixSoftmaxTiling(gert::TilingContext *context);
}

namespace ops {

class MixSoftmax : public OpDef {
public:
    explicit MixSoftmax(const char *name) : OpDef(name)
    {
        this->Input("a").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Input("b").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        // Upper bound on the AI cores used; 0 = all. Fewer cores make each core loop over
        // several row blocks, ping-ponging its two workspace slots.
        this->Attr("max_cores").AttrType(OPTIONAL).Int(0);
        this->AICore().SetTiling(optiling::MixSoftmaxTiling);
        this->AICore().AddConfig("ascend910b");
    }
};

OP_ADD(MixSoftmax);

}  // namespace ops
