// OpDef methods, the OP_ADD / IMPL_OP registries and the JSON export of the prototypes.
#include "emu/op_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

namespace {

struct ImplFuncs {
    gert::OpImplRegisterV2::TilingKernelFunc tiling = nullptr;
    gert::OpImplRegisterV2::InferShapeKernelFunc inferShape = nullptr;
    gert::OpImplRegisterV2::InferDataTypeKernelFunc inferDataType = nullptr;
};

// Function-local statics: registration runs from static initialisers of other files.
std::map<std::string, std::unique_ptr<ops::OpDef>> &Defs()
{
    static std::map<std::string, std::unique_ptr<ops::OpDef>> defs;
    return defs;
}
// The shared object (or executable) each OpDef was registered from.
std::map<std::string, std::string> &Origins()
{
    static std::map<std::string, std::string> origins;
    return origins;
}
std::string ObjectOf(const void *address)
{
    Dl_info info;
    return dladdr(address, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "";
}
std::map<std::string, ImplFuncs> &Impls()
{
    static std::map<std::string, ImplFuncs> impls;
    return impls;
}

const char *ParamTypeName(ops::Option option)
{
    switch (option) {
        case ops::OPTIONAL:
            return "optional";
        case ops::DYNAMIC:
            return "dynamic";
        default:
            return "required";
    }
}

std::string Quote(const std::string &s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string FloatText(float f)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(f));
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // keep it a JSON float
    return s;
}

template <typename T, typename F> std::string JsonList(const std::vector<T> &items, F toText)
{
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + toText(items[i]);
    return out + "]";
}

std::string ParamsJson(const std::vector<ops::OpParamDef> &params)
{
    return JsonList(params, [](const ops::OpParamDef &p) {
        return "{\"name\":" + Quote(p.GetName()) + ",\"param_type\":" + Quote(ParamTypeName(p.GetParamType())) +
               ",\"dtypes\":" + JsonList(p.GetDataTypes(), [](ge::DataType t) { return Quote(ge::DataTypeName(t)); }) +
               ",\"formats\":" + JsonList(p.GetFormats(), [](ge::Format f) { return Quote(ge::FormatName(f)); }) + "}";
    });
}

const char *AttrTypeName(ops::OpAttrDef::Type type)
{
    using T = ops::OpAttrDef::Type;
    switch (type) {
        case T::BOOL:
            return "bool";
        case T::FLOAT:
            return "float";
        case T::INT:
            return "int";
        case T::STRING:
            return "string";
        case T::LIST_BOOL:
            return "list_bool";
        case T::LIST_FLOAT:
            return "list_float";
        case T::LIST_INT:
            return "list_int";
        case T::LIST_LIST_INT:
            return "list_list_int";
        default:
            return "unset";
    }
}

std::string AttrDefaultJson(const ops::OpAttrDef &a)
{
    using T = ops::OpAttrDef::Type;
    if (!a.HasDefault()) return "null";
    switch (a.GetType()) {
        case T::BOOL:
            return a.GetDefaultBool() ? "true" : "false";
        case T::FLOAT:
            return FloatText(a.GetDefaultFloat());
        case T::INT:
            return std::to_string(a.GetDefaultInt());
        case T::STRING:
            return Quote(a.GetDefaultString());
        case T::LIST_BOOL:
            return JsonList(a.GetDefaultListBool(), [](bool b) { return std::string(b ? "true" : "false"); });
        case T::LIST_FLOAT:
            return JsonList(a.GetDefaultListFloat(), FloatText);
        case T::LIST_INT:
            return JsonList(a.GetDefaultListInt(), [](int64_t v) { return std::to_string(v); });
        default:
            return "null";
    }
}

}  // namespace

namespace ops {

OpParamDef &OpDef::FindOrAdd(std::vector<OpParamDef> &params, const char *name)
{
    for (auto &p : params)
        if (p.GetName() == name) return p;
    params.emplace_back(name);
    return params.back();
}

OpAttrDef &OpDef::Attr(const char *name)
{
    for (auto &a : attrs_)
        if (a.GetName() == name) return a;
    attrs_.emplace_back(name);
    return attrs_.back();
}

OpParamDef &OpAICoreConfig::Input(const char *name)
{
    params_.emplace_back(name);
    return params_.back();
}

OpParamDef &OpAICoreConfig::Output(const char *name)
{
    params_.emplace_back(name);
    return params_.back();
}

OpDefRegisterer::OpDefRegisterer(OpDef *def)
{
    auto &defs = Defs();
    if (defs.count(def->GetOpType())) {
        std::fprintf(stderr, "[ascendc-emu] OP_ADD(%s): the operator is registered twice\n", def->GetOpType().c_str());
    }
    defs[def->GetOpType()].reset(def);
    Origins()[def->GetOpType()] = ObjectOf(this);  // `this` is a static of the registering binary
}

}  // namespace ops

namespace gert {

OpImplRegisterV2 &OpImplRegisterV2::Tiling(TilingKernelFunc func)
{
    Impls()[opType_].tiling = func;
    return *this;
}

OpImplRegisterV2 &OpImplRegisterV2::InferShape(InferShapeKernelFunc func)
{
    Impls()[opType_].inferShape = func;
    return *this;
}

OpImplRegisterV2 &OpImplRegisterV2::InferDataType(InferDataTypeKernelFunc func)
{
    Impls()[opType_].inferDataType = func;
    return *this;
}

}  // namespace gert

namespace emu {

const ops::OpDef *FindOpDef(const std::string &opType)
{
    auto it = Defs().find(opType);
    return it == Defs().end() ? nullptr : it->second.get();
}

std::vector<const ops::OpDef *> AllOpDefs()
{
    std::vector<const ops::OpDef *> out;
    for (auto &kv : Defs()) out.push_back(kv.second.get());  // std::map: sorted by type
    return out;
}

gert::OpImplRegisterV2::TilingKernelFunc FindTilingFunc(const std::string &opType)
{
    auto it = Impls().find(opType);
    if (it != Impls().end() && it->second.tiling) return it->second.tiling;
    const ops::OpDef *def = FindOpDef(opType);
    return def ? def->GetAICore().GetTiling() : nullptr;
}

gert::OpImplRegisterV2::InferShapeKernelFunc FindInferShapeFunc(const std::string &opType)
{
    auto it = Impls().find(opType);
    if (it != Impls().end() && it->second.inferShape) return it->second.inferShape;
    const ops::OpDef *def = FindOpDef(opType);
    return def ? def->GetInferShape() : nullptr;
}

gert::OpImplRegisterV2::InferDataTypeKernelFunc FindInferDataTypeFunc(const std::string &opType)
{
    auto it = Impls().find(opType);
    if (it != Impls().end() && it->second.inferDataType) return it->second.inferDataType;
    const ops::OpDef *def = FindOpDef(opType);
    return def ? def->GetInferDataType() : nullptr;
}

std::string OpDefsJson(bool ownObjectOnly)
{
    const std::string own = ObjectOf(reinterpret_cast<const void *>(&FindOpDef));
    std::string out = "{\"ops\":[";
    bool first = true;
    for (const ops::OpDef *def : AllOpDefs()) {
        if (ownObjectOnly && Origins()[def->GetOpType()] != own) continue;
        out += first ? "" : ",";
        first = false;
        out += "{\"op_type\":" + Quote(def->GetOpType()) + ",\"inputs\":" + ParamsJson(def->GetInputs()) +
               ",\"outputs\":" + ParamsJson(def->GetOutputs()) + ",\"attrs\":" +
               JsonList(def->GetAttrs(),
                        [](const ops::OpAttrDef &a) {
                            return "{\"name\":" + Quote(a.GetName()) + ",\"type\":" + Quote(AttrTypeName(a.GetType())) +
                                   ",\"required\":" + (a.IsRequired() ? "true" : "false") +
                                   ",\"default\":" + AttrDefaultJson(a) + "}";
                        }) +
               "}";
    }
    return out + "]}";
}

}  // namespace emu

extern "C" const char *ascendc_emu_opdefs_json(void)
{
    static std::string json;  // rebuilt per call; the registry is complete after load
    json = emu::OpDefsJson(true);
    return json.c_str();
}

extern "C" const char *ascendc_emu_opdefs_json_all(void)
{
    static std::string json;
    json = emu::OpDefsJson(false);
    return json.c_str();
}
