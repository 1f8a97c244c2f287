// OpDef of FlashAttentionScoreGrad as aclnnFlashAttentionUnpaddingScoreGradV5 (spec 003) runs
// it on this project's kernel: TND query/key/value/dy/attention_in in FLOAT16 or BFLOAT16, an
// optional pse (types 0/1: input dtype; 2/3: FLOAT slopes) with start indices, UINT8 drop_mask, BOOL/UINT8 atten_mask, FLOAT
// softmax_max/sum, the cumulative INT64 sequence lengths and prefix (value-dependent), an
// optional FLOAT sink, the optional rope parts; dq/dk/dv (and dq_rope/dk_rope) in the input
// dtype and the FLOAT dsink. What the kernel does not implement yet (FLOAT32)
// is rejected by the aclnn API before this point.
#include <vector>

#include "flash_attention_score_grad_tiling.h"
#include "register/op_def_registry.h"

namespace ops {

namespace {

struct Columns {
    std::vector<ge::DataType> qkv, pse, mask, f32, lens, u8;
    std::vector<ge::Format> nd;
};

// One column per (dtype, mask dtype, pse dtype): pse is the input dtype (types 0/1) or FLOAT
// alibi slopes (types 2/3). FLOAT query/key/value are part of the spec's interface; the tiling
// rejects them until the kernel implements them (the aclnn API returns 161002 first).
Columns MakeColumns()
{
    Columns c;
    for (ge::DataType dt : {ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT}) {
        for (ge::DataType m : {ge::DT_BOOL, ge::DT_UINT8}) {
            for (ge::DataType pse : {dt, ge::DT_FLOAT}) {
                if (dt == ge::DT_FLOAT && pse != dt) continue;  // one FLOAT column per mask dtype
                c.qkv.push_back(dt);
                c.pse.push_back(pse);
                c.mask.push_back(m);
                c.f32.push_back(ge::DT_FLOAT);
                c.lens.push_back(ge::DT_INT64);
                c.u8.push_back(ge::DT_UINT8);
                c.nd.push_back(ge::FORMAT_ND);
            }
        }
    }
    return c;
}

}  // namespace

class FlashAttentionScoreGrad : public OpDef {
public:
    explicit FlashAttentionScoreGrad(const char *name) : OpDef(name)
    {
        const Columns c = MakeColumns();
        this->Input("query").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("key").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("value").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("dy").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("pse_shift").ParamType(OPTIONAL).DataType(c.pse).Format(c.nd);
        this->Input("drop_mask").ParamType(OPTIONAL).DataType(c.u8).Format(c.nd);
        this->Input("atten_mask").ParamType(OPTIONAL).DataType(c.mask).Format(c.nd);
        this->Input("softmax_max").ParamType(OPTIONAL).DataType(c.f32).Format(c.nd);
        this->Input("softmax_sum").ParamType(OPTIONAL).DataType(c.f32).Format(c.nd);
        this->Input("attention_in").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("actual_seq_qlen").ParamType(REQUIRED).DataType(c.lens).Format(c.nd).ValueDepend(REQUIRED);
        this->Input("actual_seq_kvlen").ParamType(REQUIRED).DataType(c.lens).Format(c.nd).ValueDepend(REQUIRED);
        this->Input("prefix").ParamType(OPTIONAL).DataType(c.lens).Format(c.nd).ValueDepend(OPTIONAL);
        this->Input("q_start_idx").ParamType(OPTIONAL).DataType(c.lens).Format(c.nd).ValueDepend(OPTIONAL);
        this->Input("kv_start_idx").ParamType(OPTIONAL).DataType(c.lens).Format(c.nd).ValueDepend(OPTIONAL);
        this->Input("sink").ParamType(OPTIONAL).DataType(c.f32).Format(c.nd);
        this->Input("query_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("key_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        // Reserved by the spec (paddingMask, softmaxIn, dpse): declared so the interface is the
        // spec's, never read or written by the kernel.
        this->Input("padding_mask").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("softmax_in").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Output("dq").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Output("dk").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Output("dv").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Output("dsink").ParamType(OPTIONAL).DataType(c.f32).Format(c.nd);
        this->Output("dq_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Output("dk_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Output("dpse").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Attr("scale_value").AttrType(OPTIONAL).Float(1.0f);
        this->Attr("keep_prob").AttrType(OPTIONAL).Float(1.0f);
        this->Attr("pre_tokens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("next_tokens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("head_num").AttrType(REQUIRED).Int();
        this->Attr("input_layout").AttrType(REQUIRED).String();
        this->Attr("sparse_mode").AttrType(OPTIONAL).Int(0);
        this->Attr("pse_type").AttrType(OPTIONAL).Int(1);
        this->Attr("softmax_in_layout").AttrType(OPTIONAL).String("");
        this->Attr("inner_precise").AttrType(OPTIONAL).Int(0);
        this->SetInferShape(ge::InferShapeFlashAttentionScoreGrad);
        this->AICore().SetTiling(optiling::FlashAttentionScoreGradTiling);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(FlashAttentionScoreGrad);

}  // namespace ops
