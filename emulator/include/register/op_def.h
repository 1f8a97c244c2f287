// Operator prototype definition of the CPU target (as CANN's register/op_def.h): a class derived
// from ops::OpDef declares inputs, outputs, attributes and the AI Core tiling function, and
// OP_ADD(ClassName) registers it. The registry is introspectable (emu/op_registry.h).
#ifndef EMU_REGISTER_OP_DEF_H_
#define EMU_REGISTER_OP_DEF_H_

#include <cstdint>
#include <string>
#include <vector>

#include "register/op_impl_registry.h"

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class DependScope : uint32_t { ALL = 0, TILING = 1, INVALID_SCOPE };
enum class FormatCheckOption : uint32_t { DEFAULT = 0, STRICT = 1, MAX };

class OpParamDef {
public:
    explicit OpParamDef(const char *name) : name_(name) {}
    OpParamDef &ParamType(Option type)
    {
        paramType_ = type;
        return *this;
    }
    OpParamDef &DataType(std::vector<ge::DataType> types)
    {
        dataTypes_ = std::move(types);
        return *this;
    }
    // One dtype valid with every combination of the other parameters.
    OpParamDef &DataTypeList(std::vector<ge::DataType> types)
    {
        dataTypes_ = std::move(types);
        dataTypeIsList_ = true;
        return *this;
    }
    OpParamDef &Format(std::vector<ge::Format> formats)
    {
        formats_ = std::move(formats);
        return *this;
    }
    OpParamDef &FormatList(std::vector<ge::Format> formats)
    {
        formats_ = std::move(formats);
        formatIsList_ = true;
        return *this;
    }
    OpParamDef &UnknownShapeFormat(std::vector<ge::Format> formats) { return Format(std::move(formats)); }
    OpParamDef &ValueDepend(Option option)
    {
        valueDepend_ = option;
        return *this;
    }
    OpParamDef &ValueDepend(Option option, DependScope) { return ValueDepend(option); }
    OpParamDef &AutoContiguous() { return *this; }
    OpParamDef &IgnoreContiguous() { return *this; }
    OpParamDef &Scalar() { return *this; }
    OpParamDef &ScalarList() { return *this; }
    OpParamDef &Version(uint32_t version)
    {
        version_ = version;
        return *this;
    }
    OpParamDef &Follow(const char *name)
    {
        follow_ = name;
        return *this;
    }
    OpParamDef &Comment(const char *) { return *this; }

    const std::string &GetName() const { return name_; }
    Option GetParamType() const { return paramType_; }
    const std::vector<ge::DataType> &GetDataTypes() const { return dataTypes_; }
    const std::vector<ge::Format> &GetFormats() const { return formats_; }
    bool IsDataTypeList() const { return dataTypeIsList_; }
    bool IsFormatList() const { return formatIsList_; }
    Option GetValueDepend() const { return valueDepend_; }
    const std::string &GetFollow() const { return follow_; }

private:
    std::string name_;
    Option paramType_ = REQUIRED;
    std::vector<ge::DataType> dataTypes_;
    std::vector<ge::Format> formats_;
    bool dataTypeIsList_ = false;
    bool formatIsList_ = false;
    Option valueDepend_ = IGNORE;
    uint32_t version_ = 0;
    std::string follow_;
};

class OpAttrDef {
public:
    enum class Type { UNSET, BOOL, FLOAT, INT, STRING, LIST_BOOL, LIST_FLOAT, LIST_INT, LIST_LIST_INT };

    explicit OpAttrDef(const char *name) : name_(name) {}
    OpAttrDef &AttrType(Option type)
    {
        required_ = (type == REQUIRED);
        return *this;
    }
    OpAttrDef &Bool() { return Set(Type::BOOL); }
    OpAttrDef &Bool(bool value)
    {
        defaultBool_ = value;
        return SetWithDefault(Type::BOOL);
    }
    OpAttrDef &Float() { return Set(Type::FLOAT); }
    OpAttrDef &Float(float value)
    {
        defaultFloat_ = value;
        return SetWithDefault(Type::FLOAT);
    }
    OpAttrDef &Int() { return Set(Type::INT); }
    OpAttrDef &Int(int64_t value)
    {
        defaultInt_ = value;
        return SetWithDefault(Type::INT);
    }
    OpAttrDef &String() { return Set(Type::STRING); }
    OpAttrDef &String(const char *value)
    {
        defaultString_ = value;
        return SetWithDefault(Type::STRING);
    }
    OpAttrDef &ListBool() { return Set(Type::LIST_BOOL); }
    OpAttrDef &ListBool(std::vector<bool> value)
    {
        defaultListBool_ = std::move(value);
        return SetWithDefault(Type::LIST_BOOL);
    }
    OpAttrDef &ListFloat() { return Set(Type::LIST_FLOAT); }
    OpAttrDef &ListFloat(std::vector<float> value)
    {
        defaultListFloat_ = std::move(value);
        return SetWithDefault(Type::LIST_FLOAT);
    }
    OpAttrDef &ListInt() { return Set(Type::LIST_INT); }
    OpAttrDef &ListInt(std::vector<int64_t> value)
    {
        defaultListInt_ = std::move(value);
        return SetWithDefault(Type::LIST_INT);
    }
    OpAttrDef &ListListInt() { return Set(Type::LIST_LIST_INT); }
    OpAttrDef &ListListInt(std::vector<std::vector<int64_t>>) { return SetWithDefault(Type::LIST_LIST_INT); }
    OpAttrDef &Version(uint32_t) { return *this; }
    OpAttrDef &Comment(const char *) { return *this; }

    const std::string &GetName() const { return name_; }
    bool IsRequired() const { return required_; }
    Type GetType() const { return type_; }
    bool HasDefault() const { return hasDefault_; }
    bool GetDefaultBool() const { return defaultBool_; }
    float GetDefaultFloat() const { return defaultFloat_; }
    int64_t GetDefaultInt() const { return defaultInt_; }
    const std::string &GetDefaultString() const { return defaultString_; }
    const std::vector<bool> &GetDefaultListBool() const { return defaultListBool_; }
    const std::vector<float> &GetDefaultListFloat() const { return defaultListFloat_; }
    const std::vector<int64_t> &GetDefaultListInt() const { return defaultListInt_; }

private:
    OpAttrDef &Set(Type type)
    {
        type_ = type;
        return *this;
    }
    OpAttrDef &SetWithDefault(Type type)
    {
        hasDefault_ = true;
        return Set(type);
    }
    std::string name_;
    bool required_ = true;
    Type type_ = Type::UNSET;
    bool hasDefault_ = false;
    bool defaultBool_ = false;
    float defaultFloat_ = 0.0f;
    int64_t defaultInt_ = 0;
    std::string defaultString_;
    std::vector<bool> defaultListBool_;
    std::vector<float> defaultListFloat_;
    std::vector<int64_t> defaultListInt_;
};

class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char *) {}
    OpParamDef &Input(const char *name);
    OpParamDef &Output(const char *name);
    OpAICoreConfig &DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig &DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig &DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig &DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig &NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig &PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig &ExtendCfgInfo(const char *, const char *) { return *this; }

private:
    // Per-SoC overrides are accepted but the CPU target uses the OpDef's own declarations.
    std::vector<OpParamDef> params_;
};

class OpAICoreDef {
public:
    OpAICoreDef &SetTiling(gert::OpImplRegisterV2::TilingKernelFunc func)
    {
        tiling_ = func;
        return *this;
    }
    OpAICoreDef &SetCheckSupport(void *) { return *this; }
    OpAICoreDef &SetOpSelectFormat(void *) { return *this; }
    void AddConfig(const char *soc) { socs_.push_back(soc); }
    void AddConfig(const char *soc, OpAICoreConfig &) { socs_.push_back(soc); }
    gert::OpImplRegisterV2::TilingKernelFunc GetTiling() const { return tiling_; }
    const std::vector<std::string> &GetSocs() const { return socs_; }

private:
    gert::OpImplRegisterV2::TilingKernelFunc tiling_ = nullptr;
    std::vector<std::string> socs_;
};

class OpDef {
public:
    explicit OpDef(const char *type) : type_(type) {}
    OpParamDef &Input(const char *name) { return FindOrAdd(inputs_, name); }
    OpParamDef &Output(const char *name) { return FindOrAdd(outputs_, name); }
    OpAttrDef &Attr(const char *name);
    OpDef &SetInferShape(gert::OpImplRegisterV2::InferShapeKernelFunc func)
    {
        inferShape_ = func;
        return *this;
    }
    OpDef &SetInferDataType(gert::OpImplRegisterV2::InferDataTypeKernelFunc func)
    {
        inferDataType_ = func;
        return *this;
    }
    OpAICoreDef &AICore() { return aicore_; }
    OpDef &FormatMatchMode(FormatCheckOption) { return *this; }
    OpDef &EnableFallBack() { return *this; }
    OpDef &Comment(int, const char *) { return *this; }

    const std::string &GetOpType() const { return type_; }
    const std::vector<OpParamDef> &GetInputs() const { return inputs_; }
    const std::vector<OpParamDef> &GetOutputs() const { return outputs_; }
    const std::vector<OpAttrDef> &GetAttrs() const { return attrs_; }
    gert::OpImplRegisterV2::InferShapeKernelFunc GetInferShape() const { return inferShape_; }
    gert::OpImplRegisterV2::InferDataTypeKernelFunc GetInferDataType() const { return inferDataType_; }
    const OpAICoreDef &GetAICore() const { return aicore_; }

private:
    static OpParamDef &FindOrAdd(std::vector<OpParamDef> &params, const char *name);
    std::string type_;
    std::vector<OpParamDef> inputs_;
    std::vector<OpParamDef> outputs_;
    std::vector<OpAttrDef> attrs_;
    gert::OpImplRegisterV2::InferShapeKernelFunc inferShape_ = nullptr;
    gert::OpImplRegisterV2::InferDataTypeKernelFunc inferDataType_ = nullptr;
    OpAICoreDef aicore_;
};

// OP_ADD support: constructs one instance of the class at load time and keeps it.
class OpDefRegisterer {
public:
    explicit OpDefRegisterer(OpDef *def);
};

}  // namespace ops

#define OP_ADD(opType) static ::ops::OpDefRegisterer g_emuOpDefRegisterer_##opType(new opType(#opType))

#endif
