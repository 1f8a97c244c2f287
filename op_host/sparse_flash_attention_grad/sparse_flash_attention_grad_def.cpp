// OpDef of SparseFlashAttentionGrad as aclnnSparseFlashAttentionGrad (spec 004) runs it:
// query/key/value/d_out/out (+ rope) in FLOAT16 or BFLOAT16, sparse_indices INT32 or INT64
// (the spec's table says INT64, its example passes INT32), the optional actual sequence
// lengths INT32 or INT64 (table INT32, example INT64), FLOAT softmax_max/sum, gradients in the
// input dtype. The kernel reads the lengths on the device, so they are not value-dependent.
#include <vector>

#include "register/op_def_registry.h"
#include "sparse_flash_attention_grad_tiling.h"

namespace ops {

namespace {

struct Columns {
    std::vector<ge::DataType> qkv, idx, lens, f32;
    std::vector<ge::Format> nd;
};

Columns MakeColumns()
{
    Columns c;
    for (ge::DataType dt : {ge::DT_FLOAT16, ge::DT_BF16}) {
        for (ge::DataType ix : {ge::DT_INT32, ge::DT_INT64}) {
            for (ge::DataType len : {ge::DT_INT32, ge::DT_INT64}) {
                c.qkv.push_back(dt);
                c.idx.push_back(ix);
                c.lens.push_back(len);
                c.f32.push_back(ge::DT_FLOAT);
                c.nd.push_back(ge::FORMAT_ND);
            }
        }
    }
    return c;
}

}  // namespace

class SparseFlashAttentionGrad : public OpDef {
public:
    explicit SparseFlashAttentionGrad(const char *name) : OpDef(name)
    {
        const Columns c = MakeColumns();
        this->Input("query").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("key").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("value").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("sparse_indices").ParamType(REQUIRED).DataType(c.idx).Format(c.nd);
        this->Input("d_out").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("out").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Input("softmax_max").ParamType(REQUIRED).DataType(c.f32).Format(c.nd);
        this->Input("softmax_sum").ParamType(REQUIRED).DataType(c.f32).Format(c.nd);
        this->Input("actual_seq_qlen").ParamType(OPTIONAL).DataType(c.lens).Format(c.nd);
        this->Input("actual_seq_kvlen").ParamType(OPTIONAL).DataType(c.lens).Format(c.nd);
        this->Input("query_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Input("key_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Output("d_query").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Output("d_key").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Output("d_value").ParamType(REQUIRED).DataType(c.qkv).Format(c.nd);
        this->Output("d_query_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Output("d_key_rope").ParamType(OPTIONAL).DataType(c.qkv).Format(c.nd);
        this->Attr("scale_value").AttrType(REQUIRED).Float();
        this->Attr("sparse_block_size").AttrType(OPTIONAL).Int(1);
        this->Attr("layout").AttrType(OPTIONAL).String("BSND");
        this->Attr("sparse_mode").AttrType(OPTIONAL).Int(0);
        this->Attr("pre_tokens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("next_tokens").AttrType(OPTIONAL).Int(2147483647);
        this->Attr("deterministic").AttrType(OPTIONAL).Bool(false);
        this->SetInferShape(ge::InferShapeSparseFlashAttentionGrad);
        this->AICore().SetTiling(optiling::SparseFlashAttentionGradTiling);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(SparseFlashAttentionGrad);

}  // namespace ops
