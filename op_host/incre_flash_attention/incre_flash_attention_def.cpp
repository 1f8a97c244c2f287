// OpDef of IncreFlashAttention (aclnnIncreFlashAttentionV4, spec 002): inputs, output and
// attributes with their dtypes. Each column of the DataType lists is one combination: query,
// pse_shift and the antiquant parameters in FLOAT16 or BFLOAT16, key/value (dynamic: the
// aclTensorList) in the query dtype or INT8, attention_out in the query dtype or INT8, mask
// BOOL/INT8/UINT8, quant_scale2/quant_offset2 FLOAT32 (or BFLOAT16 with a BFLOAT16 query).
// The aclnn API checks the documented rules before the OpDef is consulted.
#include <vector>

#include "incre_flash_attention_tiling.h"
#include "register/op_def_registry.h"

namespace ops {

namespace {

struct Columns {
    std::vector<ge::DataType> q, kv, mask, i64, i32, u64, f32, anti, quant, out;
    std::vector<ge::Format> nd;
};

// The dtypes of the parameters that only an int8 query uses (dequantScale1, quantScale1,
// dequantScale2: rejected by the API on Atlas A2) and of the antiquant parameters.
struct Extra {
    ge::DataType dequant = ge::DT_UINT64, quant1 = ge::DT_FLOAT, anti = ge::DT_UNDEFINED;
};

void AddColumn(Columns &c, ge::DataType dt, ge::DataType mask, ge::DataType kv, ge::DataType out, ge::DataType quant,
               const Extra &extra = Extra())
{
    c.q.push_back(dt);
    c.kv.push_back(kv);
    c.mask.push_back(mask);
    c.i64.push_back(ge::DT_INT64);
    c.i32.push_back(ge::DT_INT32);
    c.u64.push_back(extra.dequant);
    c.f32.push_back(extra.quant1);
    c.anti.push_back(extra.anti == ge::DT_UNDEFINED ? dt : extra.anti);
    c.quant.push_back(quant);
    c.out.push_back(out);
    c.nd.push_back(ge::FORMAT_ND);
}

Columns MakeColumns()
{
    Columns c;
    for (ge::DataType dt : {ge::DT_FLOAT16, ge::DT_BF16}) {
        for (ge::DataType m : {ge::DT_BOOL, ge::DT_INT8, ge::DT_UINT8}) {
            for (ge::DataType kv : {dt, ge::DT_INT8}) {
                for (ge::DataType o : {dt, ge::DT_INT8}) {
                    AddColumn(c, dt, m, kv, o, ge::DT_FLOAT);
                    // quantScale2/quantOffset2 may also be BFLOAT16 with a BFLOAT16 query
                    if (dt == ge::DT_BF16 && o == ge::DT_INT8) AddColumn(c, dt, m, kv, o, ge::DT_BF16);
                }
            }
        }
        // The spec's other dtypes of the int8-query parameters and FLOAT32 antiquant
        // parameters (the API rejects them on Atlas A2; listed so the OpDef matches the spec).
        Extra extra;
        extra.dequant = ge::DT_FLOAT;
        extra.quant1 = dt == ge::DT_BF16 ? ge::DT_BF16 : ge::DT_FLOAT;
        extra.anti = ge::DT_FLOAT;
        AddColumn(c, dt, ge::DT_BOOL, ge::DT_INT8, dt, ge::DT_FLOAT, extra);
    }
    return c;
}

}  // namespace

class IncreFlashAttention : public OpDef {
public:
    explicit IncreFlashAttention(const char *name) : OpDef(name)
    {
        const Columns c = MakeColumns();
        this->Input("query").ParamType(REQUIRED).DataType(c.q).Format(c.nd);
        this->Input("key").ParamType(DYNAMIC).DataType(c.kv).Format(c.nd);
        this->Input("value").ParamType(DYNAMIC).DataType(c.kv).Format(c.nd);
        this->Input("pse_shift").ParamType(OPTIONAL).DataType(c.q).Format(c.nd);
        this->Input("atten_mask").ParamType(OPTIONAL).DataType(c.mask).Format(c.nd);
        this->Input("actual_seq_lengths").ParamType(OPTIONAL).DataType(c.i64).Format(c.nd).ValueDepend(OPTIONAL);
        this->Input("dequant_scale1").ParamType(OPTIONAL).DataType(c.u64).Format(c.nd);
        this->Input("quant_scale1").ParamType(OPTIONAL).DataType(c.f32).Format(c.nd);
        this->Input("dequant_scale2").ParamType(OPTIONAL).DataType(c.u64).Format(c.nd);
        this->Input("quant_scale2").ParamType(OPTIONAL).DataType(c.quant).Format(c.nd);
        this->Input("quant_offset2").ParamType(OPTIONAL).DataType(c.quant).Format(c.nd);
        this->Input("antiquant_scale").ParamType(OPTIONAL).DataType(c.anti).Format(c.nd);
        this->Input("antiquant_offset").ParamType(OPTIONAL).DataType(c.anti).Format(c.nd);
        this->Input("block_table").ParamType(OPTIONAL).DataType(c.i32).Format(c.nd);
        this->Input("kv_padding_size").ParamType(OPTIONAL).DataType(c.i64).Format(c.nd);
        this->Output("attention_out").ParamType(REQUIRED).DataType(c.out).Format(c.nd);
        this->Attr("num_heads").AttrType(REQUIRED).Int();
        this->Attr("scale_value").AttrType(OPTIONAL).Float(1.0f);
        this->Attr("input_layout").AttrType(OPTIONAL).String("BSH");
        this->Attr("num_key_value_heads").AttrType(OPTIONAL).Int(0);
        this->Attr("block_size").AttrType(OPTIONAL).Int(0);
        this->Attr("inner_precise").AttrType(OPTIONAL).Int(1);
        this->SetInferShape(ge::InferShapeIncreFlashAttention);
        this->AICore().SetTiling(optiling::IncreFlashAttentionTiling);
        this->AICore().AddConfig("ascend910b");
        this->AICore().AddConfig("ascend910_93");
    }
};

OP_ADD(IncreFlashAttention);

}  // namespace ops
