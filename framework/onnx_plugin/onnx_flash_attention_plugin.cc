// ONNX graph entry for the package's operators (GE parser plugin, built by cmake/npu.cmake into
// libcust_onnx_parsers.so, installed to vendors/<vendor>/framework/onnx).
//
// ONNX has no such standard ops, so a model carries them as custom-domain nodes
// "ascend_fa::<opset>::<OpType>" (the domain of the PyTorch ops in framework/pytorch). The GE
// ONNX parser hands a node's attributes over as JSON under the "attribute" key; each attribute
// is copied to the OpDef attribute of the same name.
#include <cstdint>
#include <string>
#include <vector>

#include "graph/operator.h"
#include "json.hpp"
#include "register/register.h"

namespace domi {
namespace {

// onnx::AttributeProto::AttributeType values
constexpr int kOnnxFloat = 1;
constexpr int kOnnxInt = 2;
constexpr int kOnnxString = 3;
constexpr int kOnnxInts = 7;

// protobuf's JSON form writes int64 as a string, float as a number and bytes as base64.
int64_t AsInt(const nlohmann::json &v) { return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>(); }

float AsFloat(const nlohmann::json &v) { return v.is_string() ? std::stof(v.get<std::string>()) : v.get<float>(); }

std::string FromBase64(const std::string &in)
{
    static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    uint32_t bits = 0;
    int count = 0;
    for (char c : in) {
        const size_t pos = kAlphabet.find(c);
        if (pos == std::string::npos) {
            break;  // '=' padding ends the data
        }
        bits = (bits << 6) | static_cast<uint32_t>(pos);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out.push_back(static_cast<char>((bits >> count) & 0xFF));
        }
    }
    return out;
}

Status CopyOnnxAttributes(const ge::Operator &src, ge::Operator &dst)
{
    ge::AscendString text;
    if (src.GetAttr("attribute", text) != ge::GRAPH_SUCCESS) {
        return SUCCESS;  // a node without attributes keeps the OpDef defaults
    }
    const nlohmann::json attrs = nlohmann::json::parse(text.GetString(), nullptr, false);
    if (attrs.is_discarded() || !attrs.contains("attribute")) {
        return FAILED;
    }
    for (const auto &attr : attrs["attribute"]) {
        const std::string name = attr.value("name", "");
        const int type = attr.value("type", 0);
        if (type == kOnnxInt) {
            dst.SetAttr(name.c_str(), AsInt(attr["i"]));
        } else if (type == kOnnxFloat) {
            dst.SetAttr(name.c_str(), AsFloat(attr["f"]));
        } else if (type == kOnnxString) {
            dst.SetAttr(name.c_str(), ge::AscendString(FromBase64(attr["s"].get<std::string>()).c_str()));
        } else if (type == kOnnxInts) {
            std::vector<int64_t> values;
            for (const auto &v : attr["ints"]) {
                values.push_back(AsInt(v));
            }
            dst.SetAttr(name.c_str(), values);
        } else {
            return FAILED;  // no OpDef attribute of these operators has another type
        }
    }
    return SUCCESS;
}

}  // namespace

#define FA_ONNX_OP(OP_TYPE)                                                                                            \
    REGISTER_CUSTOM_OP(OP_TYPE)                                                                                        \
        .FrameworkType(ONNX)                                                                                           \
        .OriginOpType({ge::AscendString("ascend_fa::1::" OP_TYPE), ge::AscendString("ascend_fa::11::" OP_TYPE)})       \
        .ParseParamsByOperatorFn(CopyOnnxAttributes)                                                                   \
        .ImplyType(ImplyType::TVM)

FA_ONNX_OP("PromptFlashAttention");
FA_ONNX_OP("IncreFlashAttention");
FA_ONNX_OP("FlashAttentionScore");
FA_ONNX_OP("FlashAttentionScoreGrad");
FA_ONNX_OP("SparseFlashAttentionGrad");

}  // namespace domi
