// OpDef of FlashAttentionScore as aclnnFlashAttentionVarLenScore (spec 001) uses it: inputs,
// outputs and attributes of the spec's prototype with their dtypes and formats. Each column of
// the DataType lists is one supported combination: query/key/value/real_shift/padding_mask/
// softmax_out/attention_out in FLOAT16, BFLOAT16 or FLOAT32, atten_mask BOOL or UINT8,
// drop_mask UINT8, prefix and the sequence lengths INT64, softmax_max/sum FLOAT32.
#include <vector>

#include "flash_attention_score_tiling.h"
#include "register/op_def_registry.h"

namespace ops {

namespace {

struct Columns {
    std::vector<ge::DataType> qkv, mask, u8, i64, f32;
    std::vector<ge::Format> nd;
};

Columns MakeColumns()
{
    Columns c;
    for (ge::DataType dt : {ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT}) {
        for (ge::DataType m : {ge::DT_BOOL, ge::DT_UINT8}) {
            c.qkv.push_back(dt);
            c.mask.push_back(m);
            c.u8.push_back(ge::DT_UINT8);
            c.i64.push_back(ge::DT_INT64);
            c.f32.push_back(ge::DT_FLOAT);
            c.nd.push_back(ge::FORMAT_ND);
        }
    }
    return c;
}

}  // namespace

class FlashAttentionScore : public OpDef {
public:
    explicit FlashAttentionScore(const char *name) : OpDef(name)
    {
        const Columns c = MakeColumns();
        this->Input("query").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("key").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("value").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("real_shift").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("drop_mask").ParamType(OPTIONAL).DataType(c.u8).Format(c.nd);
        this->Input("padding_mask").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("atten_mask").ParamType(OPTIONAL).DataType(c.mask).Format(c.nd);
        this->Input("prefix").ParamType(OPTIONAL).DataType(c.i64).Format(c.nd).ValueDepend(OPTIONAL);
        this->Input("actual_seq_qlen").ParamType(OPTIONAL).DataType(c.i64).Format(c.nd).ValueDepend(OPTIONAL);
        this->Input("actual_seq_kvlen").ParamType(OPTIONAL).DataType(c.i64).Format(c.nd).ValueDepend(OPTIONAL);
        this->Output("softmax_max").ParamType(REQUIRED).DataType(c.f32).Format(c.nd);
        this->Output("softmax_sum").ParamType(REQUIRED).DataType(c.f32).Format(c.nd);
        this->Output("softmax_out").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Output("attention_out").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Attr("scale_value").AttrType(OPTIONAL).Float(1.0f);
        this->Attr("keep_prob").AttrType(OPTIONAL).Float(1.0f);
        this->Attr("pre_tockens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("next_tockens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("head_num").AttrType(REQUIRED).Int();
        this->Attr("input_layout").AttrType(REQUIRED).String();
        this->Attr("inner_precise").AttrType(OPTIONAL).Int(0);
        this->Attr("sparse_mode").AttrType(OPTIONAL).Int(0);
        this->SetInferShape(ge::InferShapeFlashAttentionScore);
        this->AICore().SetTiling(optiling::FlashAttentionScoreTiling);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(FlashAttentionScore);

}  // namespace ops
