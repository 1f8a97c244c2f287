// emu::OpRunner and emu::LaunchKernelArgs: the CPU target's path from an aclnn call to the
// operator's tiling function and on to the emulated AI cores.
#include "emu/op_runner.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <set>

#include "emu/device_memory.h"
#include "emu/log.h"
#include "emu/op_registry.h"
#include "exe_graph/runtime/infer_shape_context.h"

// The executors GetWorkspaceSize handed out and nobody has run or destroyed yet. CANN forbids
// running an executor twice; a reused, freed or foreign pointer must give an error status, never
// memory corruption, so no pointer is dereferenced before it is found (and taken) here.
namespace {
std::mutex g_liveMu;
// The tiling data and key of the last aclnn launch (ascendc_emu_last_tiling), under g_liveMu.
std::vector<uint8_t> g_lastTiling;
uint64_t g_lastTilingKey = 0;
std::set<const aclOpExecutor *> g_liveExecutors;

void RegisterExecutor(const aclOpExecutor *e)
{
    std::lock_guard<std::mutex> lock(g_liveMu);
    g_liveExecutors.insert(e);
}

// True (and the executor is no longer live) when `e` was live: exactly one caller gets it.
bool TakeExecutor(const aclOpExecutor *e)
{
    std::lock_guard<std::mutex> lock(g_liveMu);
    return g_liveExecutors.erase(e) == 1;
}

// "PromptFlashAttention" -> "prompt_flash_attention": the kernel entry named after the op type.
std::string SnakeCase(const std::string &type)
{
    std::string out;
    for (char ch : type) {
        if (ch >= 'A' && ch <= 'Z') {
            if (!out.empty()) out += '_';
            out += static_cast<char>(ch - 'A' + 'a');
        } else {
            out += ch;
        }
    }
    return out;
}

// 0 and the executor taken when it is live and was built for the operator whose kernel is
// `kernelName`; otherwise a status and `why` (the executor stays as it was).
aclnnStatus TakeExecutorFor(aclOpExecutor *e, const char *kernelName, std::string &why)
{
    std::lock_guard<std::mutex> lock(g_liveMu);
    auto it = g_liveExecutors.find(e);
    if (it == g_liveExecutors.end()) {
        why = "is not live: an executor runs once (it was already run or destroyed) and must come from a "
              "GetWorkspaceSize call";
        return ACLNN_ERR_PARAM_INVALID;
    }
    const std::string &type = e->call->opType;
    if (SnakeCase(type) != kernelName) {
        why = "was created by the GetWorkspaceSize of operator " + type + ", not of this one";
        return ACLNN_ERR_PARAM_INVALID;
    }
    g_liveExecutors.erase(it);
    return ACLNN_SUCCESS;
}
}  // namespace

aclOpExecutor::~aclOpExecutor()
{
    TakeExecutor(this);
    for (void *p : ownedDeviceMemory) emu::DeviceFree(p, "aclOpExecutor");
}

extern "C" const uint8_t *ascendc_emu_last_tiling(uint64_t *bytes, uint64_t *key)
{
    static thread_local std::vector<uint8_t> copy;
    std::lock_guard<std::mutex> lock(g_liveMu);
    copy = g_lastTiling;
    if (bytes != nullptr) *bytes = copy.size();
    if (key != nullptr) *key = g_lastTilingKey;
    return copy.data();
}

extern "C" aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    if (executor == nullptr) return ACLNN_SUCCESS;
    if (!TakeExecutor(executor)) {
        emu::LogError("aclDestroyAclOpExecutor: executor %p is not live (already run or destroyed, or never created "
                      "by a GetWorkspaceSize)",
                      static_cast<void *>(executor));
        return ACLNN_ERR_PARAM_INVALID;
    }
    delete executor;
    return ACLNN_SUCCESS;
}

namespace emu {
namespace {

constexpr uint64_t kSystemWorkspaceBytes = 16ull * 1024 * 1024;  // PlatformAscendC::GetLibApiWorkSpaceSize

gert::Shape ToShape(const std::vector<int64_t> &dims)
{
    gert::Shape s;
    for (int64_t d : dims) s.AppendDim(d);
    return s;
}

// Bytes spanned by a strided view (0 for an empty one).
uint64_t ViewBytes(const aclTensor &t)
{
    if (t.IsEmpty()) return 0;
    int64_t last = 0;
    for (size_t i = 0; i < t.viewShape.size(); ++i) last += (t.viewShape[i] - 1) * t.strides[i];
    return static_cast<uint64_t>(last + 1) * aclDataTypeSize(t.dataType);
}

template <typename T> std::string ListText(const std::vector<T> &items, const char *(*name)(T))
{
    std::string s = "{";
    for (size_t i = 0; i < items.size(); ++i) s += std::string(i ? ", " : "") + name(items[i]);
    return s + "}";
}

// A contiguous staging buffer for the non-contiguous `tensor`, recorded in the executor; null
// when device memory cannot hold it (a broadcast view, e.g. zero strides, can describe far more
// elements than its storage holds).
void *Stage(aclOpExecutor &exe, const aclTensor &tensor, bool output)
{
    StagedView v;
    v.view = tensor.ViewData();
    v.shape = tensor.viewShape;
    v.strides = tensor.strides;
    v.elementBytes = aclDataTypeSize(tensor.dataType);
    v.output = output;
    const size_t bytes = static_cast<size_t>(tensor.Numel()) * v.elementBytes;
    v.staging = DeviceAlloc(bytes > 0 ? bytes : 1, "aclnn non-contiguous staging");
    if (v.staging == nullptr) return nullptr;
    exe.ownedDeviceMemory.push_back(v.staging);
    exe.staged.push_back(v);
    return v.staging;
}

// Element-wise copy between a strided view and its contiguous staging copy (row-major order).
void CopyStaged(const StagedView &v, bool toStaging)
{
    const size_t rank = v.shape.size();
    int64_t count = 1;
    for (int64_t d : v.shape) count *= d;
    if (count == 0) return;
    std::vector<int64_t> index(rank, 0);
    auto *view = static_cast<uint8_t *>(v.view);
    auto *flat = static_cast<uint8_t *>(v.staging);
    for (int64_t i = 0; i < count; ++i) {
        int64_t at = 0;
        for (size_t d = 0; d < rank; ++d) at += index[d] * v.strides[d];
        uint8_t *strided = view + at * static_cast<int64_t>(v.elementBytes);
        uint8_t *packed = flat + i * static_cast<int64_t>(v.elementBytes);
        if (toStaging) {
            std::memcpy(packed, strided, v.elementBytes);
        } else {
            std::memcpy(strided, packed, v.elementBytes);
        }
        for (size_t d = rank; d-- > 0;) {  // next row-major index
            if (++index[d] < v.shape[d]) break;
            index[d] = 0;
        }
    }
}

// The kernel-side view of a dynamic input (AscendC::ListTensorDesc), in device memory:
//   uint64 ptrOffset                       bytes from the start to the pointer array
//   per tensor: uint32 dim, uint32 index, uint64 shape[dim]
//   uint64 dataPtr[count]
// (layout of asc-devkit "如何开发动态输入算子" / ListTensorDesc).
void *BuildListTensorDesc(const OpCallParam &param)
{
    std::vector<uint64_t> words(1, 0);
    for (size_t i = 0; i < param.instances.size(); ++i) {
        const gert::Shape &s = param.instances[i].shape.GetStorageShape();
        words.push_back(static_cast<uint64_t>(s.GetDimNum()) | (static_cast<uint64_t>(i) << 32));
        for (size_t d = 0; d < s.GetDimNum(); ++d) words.push_back(static_cast<uint64_t>(s.GetDim(d)));
    }
    words[0] = words.size() * sizeof(uint64_t);
    for (const OpCallTensor &t : param.instances) words.push_back(reinterpret_cast<uintptr_t>(t.deviceAddr));
    void *dev = DeviceAlloc(words.size() * sizeof(uint64_t), "aclnn tensor-list input");
    std::memcpy(dev, words.data(), words.size() * sizeof(uint64_t));
    return dev;
}

}  // namespace

OpRunner::OpRunner(const char *opType) : call_(std::make_shared<OpCall>())
{
    call_->opType = opType;
    const ops::OpDef *def = FindOpDef(opType);
    if (def == nullptr) {
        Fail(ACLNN_ERR_INNER_FIND_KERNEL_ERROR, std::string("operator ") + opType + " is not registered (OP_ADD)");
        return;
    }
    def_ = def;
    call_->inputs.resize(def->GetInputs().size());
    call_->outputs.resize(def->GetOutputs().size());
    auto &values = call_->attrs.MutableValues();
    values.resize(def->GetAttrs().size());
    attrSet_.assign(def->GetAttrs().size(), false);
    using T = ops::OpAttrDef::Type;
    using K = gert::AttrValue::Kind;
    for (size_t i = 0; i < values.size(); ++i) {
        const ops::OpAttrDef &a = def->GetAttrs()[i];
        gert::AttrValue &v = values[i];
        switch (a.GetType()) {
            case T::INT:
                v.kind = K::INT;
                v.i = a.GetDefaultInt();
                break;
            case T::FLOAT:
                v.kind = K::FLOAT;
                v.f = a.GetDefaultFloat();
                break;
            case T::BOOL:
                v.kind = K::BOOL;
                v.b = a.GetDefaultBool();
                break;
            case T::STRING:
                v.kind = K::STRING;
                v.s = a.GetDefaultString();
                break;
            case T::LIST_INT:
                v.kind = K::LIST_INT;
                v.listInt = gert::TypedContinuousVector<int64_t>(a.GetDefaultListInt());
                break;
            case T::LIST_FLOAT:
                v.kind = K::LIST_FLOAT;
                v.listFloat = gert::TypedContinuousVector<float>(a.GetDefaultListFloat());
                break;
            default:
                break;
        }
    }
}

void OpRunner::Fail(aclnnStatus status, const std::string &message)
{
    if (firstError_ != ACLNN_SUCCESS) return;  // report the first problem only
    firstError_ = status;
    LogError("%s: %s", call_->opType.c_str(), message.c_str());
}

// CANN's aclnn layer makes a non-contiguous argument contiguous on the device first
// (l0op::Contiguous); when that allocation fails the API answers 561103 (inner null pointer).
aclnnStatus OpRunner::FailStaging(aclOpExecutor *exe, const std::string &name, const aclTensor &tensor)
{
    delete exe;  // unregisters it and frees the staging copies made so far
    Fail(ACLNN_ERR_INNER_NULLPTR, name + ": the contiguous copy of its non-contiguous view (" +
                                      std::to_string(tensor.Numel()) + " elements of " +
                                      std::to_string(aclDataTypeSize(tensor.dataType)) +
                                      " bytes) does not fit in device memory");
    return firstError_;
}

OpCallParam *OpRunner::NextParam(bool output)
{
    if (def_ == nullptr) return nullptr;
    size_t &next = output ? nextOutput_ : nextInput_;
    auto &params = output ? call_->outputs : call_->inputs;
    if (next >= params.size()) {
        Fail(ACLNN_ERR_INNER, std::string("more ") + (output ? "outputs" : "inputs") +
                                  " given than the OpDef declares (" + std::to_string(params.size()) + ")");
        return nullptr;
    }
    return &params[next++];
}

bool OpRunner::CheckTensor(const std::string &what, const aclTensor &tensor, bool allowStrided)
{
    for (int64_t st : tensor.strides) {
        if (st < 0) {
            Fail(ACLNN_ERR_PARAM_INVALID,
                 what + " has a negative stride (strides " + ShapeString(tensor.strides) + ")");
            return false;
        }
    }
    if (!allowStrided && !tensor.IsContiguous()) {
        Fail(ACLNN_ERR_PARAM_INVALID, what + " is not contiguous (strides " + ShapeString(tensor.strides) +
                                          " for shape " + ShapeString(tensor.viewShape) +
                                          "); the CPU target needs contiguous tensors");
        return false;
    }
    const uint64_t bytes = ViewBytes(tensor);
    if (bytes > 0 && !DeviceFind(tensor.ViewData(), bytes, nullptr)) {
        Fail(ACLNN_ERR_PARAM_INVALID, what + ": its " + std::to_string(bytes) +
                                          " bytes of data are not inside one device allocation (aclrtMalloc)");
        return false;
    }
    return true;
}

OpCallTensor OpRunner::MakeInstance(const aclTensor *tensor)
{
    OpCallTensor t;
    const gert::Shape shape = ToShape(tensor->viewShape);
    t.shape = gert::StorageShape(shape, shape);
    t.desc = gert::CompileTimeTensorDesc(tensor->GetDataType(), tensor->GetStorageFormat());
    t.tensor = gert::Tensor(t.shape, t.desc.GetDataType(), t.desc.GetStorageFormat(), nullptr);
    t.deviceAddr = tensor->ViewData();
    t.acl = tensor;
    return t;
}

OpRunner &OpRunner::Input(const aclTensor *tensor)
{
    const size_t index = nextInput_;
    OpCallParam *param = NextParam(false);
    if (param == nullptr) return *this;
    const ops::OpParamDef &pd = def_->GetInputs()[index];
    if (tensor == nullptr) {
        if (pd.GetParamType() == ops::REQUIRED)
            Fail(ACLNN_ERR_PARAM_NULLPTR, "required input " + pd.GetName() + " is null");
        return *this;
    }
    if (!CheckTensor("input " + pd.GetName(), *tensor, true)) return *this;
    param->present = true;
    param->instances.push_back(MakeInstance(tensor));
    return *this;
}

OpRunner &OpRunner::Input(const aclIntArray *values)
{
    const size_t index = nextInput_;
    OpCallParam *param = NextParam(false);
    if (param == nullptr) return *this;
    const ops::OpParamDef &pd = def_->GetInputs()[index];
    if (values == nullptr) {
        if (pd.GetParamType() == ops::REQUIRED)
            Fail(ACLNN_ERR_PARAM_NULLPTR, "required input " + pd.GetName() + " is null");
        return *this;
    }
    OpCallTensor t;
    t.hostValues = std::make_shared<std::vector<int64_t>>(values->values);
    const gert::Shape shape = ToShape({static_cast<int64_t>(values->values.size())});
    t.shape = gert::StorageShape(shape, shape);
    t.desc = gert::CompileTimeTensorDesc(ge::DT_INT64, ge::FORMAT_ND);
    t.tensor = gert::Tensor(t.shape, ge::DT_INT64, ge::FORMAT_ND, t.hostValues->data());
    param->present = true;
    param->instances.push_back(t);
    return *this;
}

OpRunner &OpRunner::Input(const aclTensorList *list)
{
    const size_t index = nextInput_;
    OpCallParam *param = NextParam(false);
    if (param == nullptr) return *this;
    const ops::OpParamDef &pd = def_->GetInputs()[index];
    if (list == nullptr) {
        if (pd.GetParamType() == ops::REQUIRED || pd.GetParamType() == ops::DYNAMIC)
            Fail(ACLNN_ERR_PARAM_NULLPTR, "required input " + pd.GetName() + " is null");
        return *this;
    }
    if (pd.GetParamType() != ops::DYNAMIC) {
        Fail(ACLNN_ERR_INNER, "input " + pd.GetName() + " is not DYNAMIC in the OpDef but was given a tensor list");
        return *this;
    }
    for (size_t i = 0; i < list->tensors.size(); ++i) {
        const aclTensor *tensor = list->tensors[i];
        const std::string name = pd.GetName() + "[" + std::to_string(i) + "]";
        if (tensor == nullptr) {
            Fail(ACLNN_ERR_PARAM_NULLPTR, "input " + name + " is null");
            return *this;
        }
        if (!CheckTensor("input " + name, *tensor)) return *this;
        param->instances.push_back(MakeInstance(tensor));
    }
    param->present = true;
    return *this;
}

OpRunner &OpRunner::Output(const aclTensor *tensor)
{
    const size_t index = nextOutput_;
    OpCallParam *param = NextParam(true);
    if (param == nullptr) return *this;
    const ops::OpParamDef &pd = def_->GetOutputs()[index];
    if (tensor == nullptr) {
        if (pd.GetParamType() == ops::REQUIRED)
            Fail(ACLNN_ERR_PARAM_NULLPTR, "required output " + pd.GetName() + " is null");
        return *this;
    }
    if (!CheckTensor("output " + pd.GetName(), *tensor, true)) return *this;
    param->present = true;
    param->instances.push_back(MakeInstance(tensor));
    return *this;
}

namespace {

// Index of attribute `name` in the OpDef, or -1.
int AttrIndex(const ops::OpDef &def, const char *name)
{
    for (size_t i = 0; i < def.GetAttrs().size(); ++i)
        if (def.GetAttrs()[i].GetName() == name) return static_cast<int>(i);
    return -1;
}

}  // namespace

gert::AttrValue *OpRunner::AttrSlot(const char *name)
{
    if (def_ == nullptr) return nullptr;
    const int idx = AttrIndex(*def_, name);
    if (idx < 0) {
        Fail(ACLNN_ERR_INNER, std::string("attribute ") + name + " is not declared by the OpDef");
        return nullptr;
    }
    attrSet_[idx] = true;
    return &call_->attrs.MutableValues()[idx];
}

void OpRunner::WrongAttrType(const char *name, const char *given)
{
    Fail(ACLNN_ERR_INNER,
         std::string("attribute ") + name + " was given a " + given + " value; the OpDef declares another type");
}

using AttrKind = gert::AttrValue::Kind;

OpRunner &OpRunner::Attr(const char *name, int64_t value)
{
    gert::AttrValue *v = AttrSlot(name);
    if (v == nullptr) return *this;
    if (v->kind == AttrKind::INT)
        v->i = value;
    else if (v->kind == AttrKind::FLOAT)
        v->f = static_cast<float>(value);
    else
        WrongAttrType(name, "int");
    return *this;
}

OpRunner &OpRunner::Attr(const char *name, double value)
{
    gert::AttrValue *v = AttrSlot(name);
    if (v == nullptr) return *this;
    if (v->kind == AttrKind::FLOAT)
        v->f = static_cast<float>(value);
    else
        WrongAttrType(name, "float");
    return *this;
}

OpRunner &OpRunner::Attr(const char *name, bool value)
{
    gert::AttrValue *v = AttrSlot(name);
    if (v == nullptr) return *this;
    if (v->kind == AttrKind::BOOL)
        v->b = value;
    else
        WrongAttrType(name, "bool");
    return *this;
}

OpRunner &OpRunner::Attr(const char *name, const char *value)
{
    gert::AttrValue *v = AttrSlot(name);
    if (v == nullptr) return *this;
    if (v->kind == AttrKind::STRING)
        v->s = value ? value : "";
    else
        WrongAttrType(name, "string");
    return *this;
}

OpRunner &OpRunner::Attr(const char *name, const std::vector<int64_t> &values)
{
    gert::AttrValue *v = AttrSlot(name);
    if (v == nullptr) return *this;
    if (v->kind == AttrKind::LIST_INT)
        v->listInt = gert::TypedContinuousVector<int64_t>(values);
    else
        WrongAttrType(name, "list_int");
    return *this;
}

std::vector<std::vector<int64_t>> OpRunner::InferOutputShapes()
{
    std::vector<std::vector<int64_t>> shapes;
    auto fn = FindInferShapeFunc(call_->opType);
    if (fn == nullptr || firstError_ != ACLNN_SUCCESS) return shapes;
    OpCall copy = *call_;  // infershape writes output shapes; keep the caller's intact
    gert::InferShapeContext ctx(&copy);
    if (fn(&ctx) != ge::GRAPH_SUCCESS) {
        if (LastErrorMessage().empty()) LogError("%s: infershape failed", call_->opType.c_str());
        return shapes;
    }
    for (const OpCallParam &p : copy.outputs) {
        std::vector<int64_t> dims;
        if (p.present && !p.instances.empty()) {
            const gert::Shape &s = p.instances[0].shape.GetOriginShape();
            for (size_t i = 0; i < s.GetDimNum(); ++i) dims.push_back(s.GetDim(i));
        }
        shapes.push_back(dims);
    }
    return shapes;
}

namespace {

// Does column `col` of the OpDef's dtype/format table accept the call?
bool ColumnMatches(const std::vector<ops::OpParamDef> &defs, const std::vector<OpCallParam> &params, size_t col)
{
    for (size_t i = 0; i < defs.size() && i < params.size(); ++i) {
        if (!params[i].present) continue;
        const auto &dts = defs[i].GetDataTypes();
        const auto &fmts = defs[i].GetFormats();
        for (const OpCallTensor &t : params[i].instances) {
            const bool dtOk = dts.empty() || (defs[i].IsDataTypeList()
                                                  ? std::find(dts.begin(), dts.end(), t.desc.GetDataType()) != dts.end()
                                                  : col < dts.size() && dts[col] == t.desc.GetDataType());
            const bool fmtOk =
                fmts.empty() ||
                (defs[i].IsFormatList() ? std::find(fmts.begin(), fmts.end(), t.desc.GetStorageFormat()) != fmts.end()
                                        : col < fmts.size() && fmts[col] == t.desc.GetStorageFormat());
            if (!dtOk || !fmtOk) return false;
        }
    }
    return true;
}

size_t ColumnCount(const ops::OpDef &def)
{
    size_t n = 0;
    for (const auto *list : {&def.GetInputs(), &def.GetOutputs()})
        for (const ops::OpParamDef &p : *list) {
            if (!p.IsDataTypeList()) n = std::max(n, p.GetDataTypes().size());
            if (!p.IsFormatList()) n = std::max(n, p.GetFormats().size());
        }
    return n;
}

}  // namespace

aclnnStatus OpRunner::Build(uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (workspaceSize == nullptr || executor == nullptr) {
        Fail(ACLNN_ERR_PARAM_NULLPTR, workspaceSize == nullptr ? "workspaceSize is null" : "executor is null");
    }
    if (firstError_ != ACLNN_SUCCESS) return firstError_;
    const ops::OpDef &def = *def_;
    for (size_t i = nextInput_; i < def.GetInputs().size(); ++i) {
        if (def.GetInputs()[i].GetParamType() == ops::REQUIRED) {
            Fail(ACLNN_ERR_INNER, "required input " + def.GetInputs()[i].GetName() + " was not given to the op runner");
            return firstError_;
        }
    }
    for (size_t i = nextOutput_; i < def.GetOutputs().size(); ++i) {
        if (def.GetOutputs()[i].GetParamType() == ops::REQUIRED) {
            Fail(ACLNN_ERR_INNER,
                 "required output " + def.GetOutputs()[i].GetName() + " was not given to the op runner");
            return firstError_;
        }
    }
    for (size_t i = 0; i < def.GetAttrs().size(); ++i) {
        if (def.GetAttrs()[i].IsRequired() && !attrSet_[i]) {
            Fail(ACLNN_ERR_INNER,
                 "required attribute " + def.GetAttrs()[i].GetName() + " was not given to the op runner");
            return firstError_;
        }
    }
    // Each parameter's dtype/format must be one the OpDef lists, and all of them one column.
    for (int side = 0; side < 2; ++side) {
        const auto &defs = side == 0 ? def.GetInputs() : def.GetOutputs();
        const auto &params = side == 0 ? call_->inputs : call_->outputs;
        for (size_t i = 0; i < defs.size(); ++i) {
            if (!params[i].present) continue;
            const auto &dts = defs[i].GetDataTypes();
            for (const OpCallTensor &t : params[i].instances) {
                if (!dts.empty() && std::find(dts.begin(), dts.end(), t.desc.GetDataType()) == dts.end()) {
                    Fail(ACLNN_ERR_PARAM_INVALID, std::string(side == 0 ? "input " : "output ") + defs[i].GetName() +
                                                      " has dtype " + ge::DataTypeName(t.desc.GetDataType()) +
                                                      "; supported: " + ListText(dts, ge::DataTypeName));
                    return firstError_;
                }
                const auto &fmts = defs[i].GetFormats();
                if (!fmts.empty() && std::find(fmts.begin(), fmts.end(), t.desc.GetStorageFormat()) == fmts.end()) {
                    Fail(ACLNN_ERR_PARAM_INVALID, std::string(side == 0 ? "input " : "output ") + defs[i].GetName() +
                                                      " has format " + ge::FormatName(t.desc.GetStorageFormat()) +
                                                      "; supported: " + ListText(fmts, ge::FormatName));
                    return firstError_;
                }
            }
        }
    }
    const size_t columns = ColumnCount(def);
    bool matched = columns == 0;
    for (size_t col = 0; col < columns && !matched; ++col)
        matched =
            ColumnMatches(def.GetInputs(), call_->inputs, col) && ColumnMatches(def.GetOutputs(), call_->outputs, col);
    if (!matched) {
        std::string got;
        for (int side = 0; side < 2; ++side) {
            const auto &defs = side == 0 ? def.GetInputs() : def.GetOutputs();
            const auto &params = side == 0 ? call_->inputs : call_->outputs;
            for (size_t i = 0; i < defs.size(); ++i)
                if (params[i].present)
                    got += (got.empty() ? "" : ", ") + defs[i].GetName() + "=" +
                           ge::DataTypeName(params[i].instances[0].desc.GetDataType());
        }
        Fail(ACLNN_ERR_PARAM_INVALID, "the dtype combination (" + got + ") is not one the OpDef supports");
        return firstError_;
    }

    auto tiling = FindTilingFunc(call_->opType);
    if (tiling == nullptr) {
        Fail(ACLNN_ERR_INNER_TILING_ERROR, "no tiling function registered (AICore().SetTiling or IMPL_OP_OPTILING)");
        return firstError_;
    }
    const std::string errorBefore = LastErrorMessage();
    gert::TilingContext ctx(call_.get());
    if (tiling(&ctx) != ge::GRAPH_SUCCESS) {
        // Keep the tiling function's own message as the last error when it logged one.
        if (LastErrorMessage() == errorBefore) LogError("%s: tiling failed", call_->opType.c_str());
        firstError_ = ACLNN_ERR_INNER_TILING_ERROR;
        return firstError_;
    }
    if (call_->blockDim == 0) {
        Fail(ACLNN_ERR_INNER_TILING_ERROR, "tiling set no block dim (SetBlockDim)");
        return firstError_;
    }

    auto *exe = new aclOpExecutor;
    RegisterExecutor(exe);
    exe->call = call_;
    for (size_t i = 0; i < call_->inputs.size(); ++i) {
        OpCallParam &p = call_->inputs[i];
        if (!p.present) {
            exe->args.push_back(nullptr);
            continue;
        }
        if (def.GetInputs()[i].GetParamType() == ops::DYNAMIC) {
            void *desc = BuildListTensorDesc(p);
            exe->ownedDeviceMemory.push_back(desc);
            exe->args.push_back(desc);
            continue;
        }
        OpCallTensor &t = p.instances[0];
        if (t.acl != nullptr && !t.acl->IsContiguous()) {
            t.deviceAddr = Stage(*exe, *t.acl, false);
            if (t.deviceAddr == nullptr) return FailStaging(exe, def.GetInputs()[i].GetName(), *t.acl);
        }
        if (t.hostValues) {  // value input: the kernel reads a device copy
            const size_t bytes = t.hostValues->size() * sizeof(int64_t);
            void *dev = DeviceAlloc(bytes > 0 ? bytes : sizeof(int64_t), "aclnn value input");
            if (bytes > 0) std::memcpy(dev, t.hostValues->data(), bytes);
            exe->ownedDeviceMemory.push_back(dev);
            t.deviceAddr = dev;
        }
        exe->args.push_back(t.deviceAddr);
    }
    for (size_t i = 0; i < call_->outputs.size(); ++i) {
        OpCallParam &p = call_->outputs[i];
        if (p.present && p.instances[0].acl != nullptr && !p.instances[0].acl->IsContiguous()) {
            p.instances[0].deviceAddr = Stage(*exe, *p.instances[0].acl, true);
            if (p.instances[0].deviceAddr == nullptr) {
                return FailStaging(exe, def.GetOutputs()[i].GetName(), *p.instances[0].acl);
            }
        }
        exe->args.push_back(p.present ? p.instances[0].deviceAddr : nullptr);
    }
    uint64_t total = 0;
    for (size_t s : call_->workspaceSizes) total += s;
    exe->workspaceSize = total;
    *workspaceSize = total;
    *executor = exe;
    return ACLNN_SUCCESS;
}

aclnnStatus LaunchKernelArgs(aclOpExecutor *executor, void *workspace, uint64_t workspaceSize, aclrtStream, CoreMix mix,
                             const char *kernelName, void (*invoke)(void *kernel, void *const *args), void *kernel,
                             size_t kernelArgc, uint64_t abiStamp)
{
    if (executor == nullptr) {
        LogError("%s: executor is null", kernelName);
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    std::string why;
    const aclnnStatus taken = TakeExecutorFor(executor, kernelName, why);
    if (taken != ACLNN_SUCCESS) {
        LogError("%s: executor %p %s", kernelName, static_cast<void *>(executor), why.c_str());
        return taken;
    }
    std::unique_ptr<aclOpExecutor> exe(executor);  // the second stage consumes the executor
    const OpCall &call = *exe->call;
    if (exe->workspaceSize > 0) {
        if (workspace == nullptr || workspaceSize < exe->workspaceSize) {
            LogError("%s: the workspace (%p, %llu bytes) is smaller than the %llu bytes GetWorkspaceSize asked for",
                     call.opType.c_str(), workspace, static_cast<unsigned long long>(workspaceSize),
                     static_cast<unsigned long long>(exe->workspaceSize));
            return ACLNN_ERR_PARAM_INVALID;
        }
        if (!DeviceFind(workspace, exe->workspaceSize, nullptr)) {
            LogError("%s: the workspace %p is not %llu bytes of device memory (aclrtMalloc)", call.opType.c_str(),
                     workspace, static_cast<unsigned long long>(exe->workspaceSize));
            return ACLNN_ERR_PARAM_INVALID;
        }
    }
    if (kernelArgc != exe->args.size() + 2) {
        LogError("%s: kernel %s takes %zu arguments but the OpDef gives %zu inputs/outputs + workspace + tiling",
                 call.opType.c_str(), kernelName, kernelArgc, exe->args.size());
        return ACLNN_ERR_INNER;
    }
    const size_t tilingBytes = call.tilingData.GetDataSize();
    void *tiling = DeviceAlloc(tilingBytes > 0 ? tilingBytes : 1, "aclnn tiling data");
    if (tiling == nullptr) return ACLNN_ERR_RUNTIME_ERROR;
    std::memcpy(tiling, call.tilingData.GetData(), tilingBytes);
    {
        std::lock_guard<std::mutex> lock(g_liveMu);
        const auto *data = static_cast<const uint8_t *>(call.tilingData.GetData());
        g_lastTiling.assign(data, data + tilingBytes);
        g_lastTilingKey = call.tilingKey;
    }
    std::vector<void *> args = exe->args;
    args.push_back(exe->workspaceSize > 0 ? workspace : nullptr);
    args.push_back(tiling);

    LaunchConfig cfg;
    cfg.name = kernelName;
    cfg.blockDim = call.blockDim;
    cfg.mix = mix;
    cfg.tilingKey = call.tilingKey;
    // As on the NPU, the aclnn workspace starts with the Ascend C system workspace
    // (GetLibApiWorkSpaceSize, which tiling adds to its size); GetUserWorkspace skips it.
    cfg.userWorkspaceOffset = kSystemWorkspaceBytes;
    // Outputs are gathered too: a kernel that writes only part of an output (zero-size batches,
    // absent heads) must leave the caller's values there, so the staging starts as the view.
    for (const StagedView &v : exe->staged) CopyStaged(v, true);
    try {
        Launch(cfg, [&] { invoke(kernel, args.data()); }, abiStamp);
    } catch (const LaunchFault &fault) {  // FaultMode kRaise or a cancel: the process goes on
        DeviceFree(tiling, "aclnn tiling data");
        LogError("%s: the kernel %s stopped: %s", call.opType.c_str(), kernelName, fault.what());
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    for (const StagedView &v : exe->staged) {
        if (v.output) CopyStaged(v, false);
    }
    DeviceFree(tiling, "aclnn tiling data");
    return ACLNN_SUCCESS;
}

// What op_api code built against headers older than the ABI stamp calls: its launch is refused.
aclnnStatus LaunchKernelArgs(aclOpExecutor *executor, void *workspace, uint64_t workspaceSize, aclrtStream stream,
                             CoreMix mix, const char *kernelName, void (*invoke)(void *kernel, void *const *args),
                             void *kernel, size_t kernelArgc);
aclnnStatus LaunchKernelArgs(aclOpExecutor *executor, void *workspace, uint64_t workspaceSize, aclrtStream stream,
                             CoreMix mix, const char *kernelName, void (*invoke)(void *kernel, void *const *args),
                             void *kernel, size_t kernelArgc)
{
    return LaunchKernelArgs(executor, workspace, workspaceSize, stream, mix, kernelName, invoke, kernel, kernelArgc, 0);
}

}  // namespace emu
