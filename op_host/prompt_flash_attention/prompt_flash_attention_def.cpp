// OpDef of PromptFlashAttention: the inputs, output and attributes of spec 000
// (aclnnPromptFlashAttention) with their dtypes and formats. Each column of the DataType lists
// is one supported combination: query/key/value/pse_shift/attention_out in FLOAT16 or
// BFLOAT16 (attention_out INT8 is listed by the spec but needs quant inputs V1 lacks; the
// aclnn API rejects it), atten_mask BOOL/INT8/UINT8, actual_seq_lengths INT64.
#include <vector>

#include "prompt_flash_attention_tiling.h"
#include "register/op_def_registry.h"

namespace ops {

namespace {

struct Columns {
    std::vector<ge::DataType> qkv, mask, lens, out;
    std::vector<ge::Format> nd;
};

Columns MakeColumns()
{
    Columns c;
    for (ge::DataType dt : {ge::DT_FLOAT16, ge::DT_BF16}) {
        for (ge::DataType m : {ge::DT_BOOL, ge::DT_INT8, ge::DT_UINT8}) {
            for (ge::DataType o : {dt, ge::DT_INT8}) {
                c.qkv.push_back(dt);
                c.mask.push_back(m);
                c.lens.push_back(ge::DT_INT64);
                c.out.push_back(o);
                c.nd.push_back(ge::FORMAT_ND);
            }
        }
    }
    return c;
}

}  // namespace

class PromptFlashAttention : public OpDef {
public:
    explicit PromptFlashAttention(const char *name) : OpDef(name)
    {
        const Columns c = MakeColumns();
        this->Input("query").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("key").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("value").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("pse_shift").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("atten_mask").ParamType(OPTIONAL).DataType(c.mask).Format(c.nd);
        this->Input("actual_seq_lengths").ParamType(OPTIONAL).DataType(c.lens).Format(c.nd).ValueDepend(OPTIONAL);
        this->Output("attention_out").ParamType(REQUIRED).DataType(c.out).Format(c.nd);
        this->Attr("num_heads").AttrType(REQUIRED).Int();
        this->Attr("scale_value").AttrType(OPTIONAL).Float(1.0f);
        this->Attr("pre_tokens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("next_tokens").AttrType(OPTIONAL).Int(0);
        this->Attr("input_layout").AttrType(OPTIONAL).String("BSH");
        this->Attr("num_key_value_heads").AttrType(OPTIONAL).Int(0);
        this->SetInferShape(ge::InferShapePromptFlashAttention);
        this->AICore().SetTiling(optiling::PromptFlashAttentionTiling);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(PromptFlashAttention);

}  // namespace ops
