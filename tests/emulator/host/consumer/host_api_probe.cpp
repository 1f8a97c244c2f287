// Probe of the CPU target's host-side APIs, built by an external CMake project that consumes
// emulator/ through add_subdirectory. Registers a test operator (OpDef + tiling), drives it
// through emu::OpRunner and checks what the tiling function saw in gert::TilingContext.
//   host_api_probe tiling    -> "ok <n> checks" (exit 0) or the failed checks (exit 1)
//   host_api_probe platform  -> PlatformAscendC numbers of the current SoC as JSON
//   host_api_probe optiling  -> IMPL_OP_OPTILING(X).Tiling(f) registers f for X: "ok <n> checks"
//   host_api_probe malloc    -> aclrtMalloc's page rounding is the only slack: "ok <n> checks"
//   host_api_probe fp16      -> op::fp16_t arithmetic rounds each result to half: "ok <n> checks"
// CANN's CPU-debug samples test this before including tikicpulib.h: linking ascendc_emu must define it.
#if !defined(ASCENDC_CPU_DEBUG) || ASCENDC_CPU_DEBUG != 1
#error "the ascendc_emu target must define ASCENDC_CPU_DEBUG=1 for its consumers"
#endif
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/fp16_t.h"
#include "emu/device_memory.h"
#include "emu/log.h"
#include "emu/op_registry.h"
#include "emu/op_runner.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace {

int g_checks = 0;
int g_failures = 0;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        ++g_checks;                                                                                                    \
        if (!(cond)) {                                                                                                 \
            ++g_failures;                                                                                              \
            std::printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);                                              \
        }                                                                                                              \
    } while (0)

// What the probe's tiling function observed.
struct Seen {
    int calls = 0;
    size_t inputNum = 0;
    int64_t xDim0 = -1, xDim1 = -1;
    bool optionalAbsent = false;
    int64_t seqLenCount = -1, seqLen1 = -1;
    int64_t secondInstanceDim0 = -1;  // GetInputShape(1): the next present input
    ge::DataType xDtype = ge::DT_UNDEFINED;
    ge::Format xFormat = ge::FORMAT_NCHW;
    int64_t heads = -1;
    float scale = 0.0f;
    bool flag = true;
    std::string layout;
    std::vector<int64_t> dims;
    uint32_t aic = 0, aiv = 0;
} g_seen;

bool g_failTiling = false;

ge::graphStatus ProbeTiling(gert::TilingContext *context)
{
    ++g_seen.calls;
    if (g_failTiling) {
        EMU_LOGE("ProbeOp tiling: rejected on purpose");
        return ge::GRAPH_FAILED;
    }
    g_seen.inputNum = context->GetComputeNodeInputNum();
    const gert::Shape &x = context->GetInputShape(0)->GetStorageShape();
    g_seen.xDim0 = x.GetDim(0);
    g_seen.xDim1 = x.GetDim(1);
    g_seen.xDtype = context->GetInputDesc(0)->GetDataType();
    g_seen.xFormat = context->GetInputDesc(0)->GetStorageFormat();
    g_seen.optionalAbsent = context->GetOptionalInputShape(1) == nullptr;
    const gert::Tensor *seq = context->GetOptionalInputTensor(2);
    if (seq != nullptr) {
        g_seen.seqLenCount = seq->GetShapeSize();
        g_seen.seqLen1 = seq->GetData<int64_t>()[1];
    }
    const gert::StorageShape *second = context->GetInputShape(1);
    g_seen.secondInstanceDim0 = second ? second->GetStorageShape().GetDim(0) : -1;
    const gert::RuntimeAttrs *attrs = context->GetAttrs();
    g_seen.heads = *attrs->GetInt(0);
    g_seen.scale = *attrs->GetFloat(1);
    g_seen.flag = *attrs->GetBool(2);
    g_seen.layout = attrs->GetStr(3);
    const gert::TypedContinuousVector<int64_t> *dims = attrs->GetListInt(4);
    g_seen.dims.assign(dims->GetData(), dims->GetData() + dims->GetSize());
    platform_ascendc::PlatformAscendC platform(context->GetPlatformInfo());
    g_seen.aic = platform.GetCoreNumAic();
    g_seen.aiv = platform.GetCoreNumAiv();

    uint32_t *tiling = context->GetTilingData<uint32_t>();
    *tiling = 0xC0FFEE;
    context->SetBlockDim(3);
    context->SetTilingKey(42);
    context->GetWorkspaceSizes(1)[0] = 1024;
    return ge::GRAPH_SUCCESS;
}

// y: x with its last dimension doubled (registered with IMPL_OP_INFERSHAPE below).
ge::graphStatus ProbeInferShape(gert::InferShapeContext *context)
{
    const gert::Shape *x = context->GetInputShape(0);
    gert::Shape *y = context->GetOutputShape(0);
    *y = *x;
    y->SetDim(x->GetDimNum() - 1, 2 * x->GetDim(x->GetDimNum() - 1));
    return ge::GRAPH_SUCCESS;
}

struct SeenList {
    int64_t secondListDim1 = -1;
    int64_t plainDim0 = -1;  // GetInputShape(2): the input after the two list entries
    bool pastEndIsNull = false;
} g_seenList;

ge::graphStatus ProbeListTiling(gert::TilingContext *context)
{
    g_seenList.secondListDim1 = context->GetDynamicInputShape(0, 1)->GetStorageShape().GetDim(1);
    g_seenList.plainDim0 = context->GetInputShape(2)->GetStorageShape().GetDim(0);
    g_seenList.pastEndIsNull = context->GetDynamicInputShape(0, 2) == nullptr;
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}

}  // namespace

namespace ops {
class ProbeOp : public OpDef {
public:
    explicit ProbeOp(const char *name) : OpDef(name)
    {
        this->Input("x")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("bias")
            .ParamType(OPTIONAL)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Input("seq_lens")
            .ParamType(OPTIONAL)
            .ValueDepend(OPTIONAL)
            .DataTypeList({ge::DT_INT64})
            .FormatList({ge::FORMAT_ND});
        this->Output("y")
            .ParamType(REQUIRED)
            .DataType({ge::DT_FLOAT16, ge::DT_BF16})
            .Format({ge::FORMAT_ND, ge::FORMAT_ND});
        this->Attr("heads").AttrType(REQUIRED).Int();
        this->Attr("scale").AttrType(OPTIONAL).Float(0.5f);
        this->Attr("flag").AttrType(OPTIONAL).Bool(false);
        this->Attr("layout").AttrType(OPTIONAL).String("BSH");
        this->Attr("dims").AttrType(OPTIONAL).ListInt({1, 2, 3});
        this->AICore().SetTiling(ProbeTiling);
        this->AICore().AddConfig("ascend910b");
    }
};
OP_ADD(ProbeOp);
IMPL_OP_INFERSHAPE(ProbeOp).InferShape(ProbeInferShape);

// A dynamic (tensor-list) input followed by a plain one.
class ProbeListOp : public OpDef {
public:
    explicit ProbeListOp(const char *name) : OpDef(name)
    {
        this->Input("xs").ParamType(DYNAMIC).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("w").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().SetTiling(ProbeListTiling);
    }
};
OP_ADD(ProbeListOp);
}  // namespace ops

// Tiling registered the CANN way, without an OpDef: IMPL_OP_OPTILING(...).Tiling(fn), also
// followed by the TilingParse<CompileInfo>(fn) step ops-transformer chains after it.
namespace optiling {
struct ProbeCompileInfo {};
ge::graphStatus ProbeOnlyTiling(gert::TilingContext *) { return ge::GRAPH_SUCCESS; }
ge::graphStatus ProbeOtherTiling(gert::TilingContext *) { return ge::GRAPH_SUCCESS; }
ge::graphStatus ProbeTilingParse(gert::TilingParseContext *) { return ge::GRAPH_SUCCESS; }
IMPL_OP_OPTILING(ProbeOptilingOnly).Tiling(ProbeOnlyTiling);
IMPL_OP_OPTILING(ProbeOptilingParsed).Tiling(ProbeOtherTiling).TilingParse<ProbeCompileInfo>(ProbeTilingParse);
}  // namespace optiling

namespace {

aclTensor *DeviceTensor(std::vector<int64_t> shape, aclDataType dtype, void **dev)
{
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    aclrtMalloc(dev, static_cast<size_t>(n) * aclDataTypeSize(dtype), ACL_MEM_MALLOC_HUGE_FIRST);
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    return aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, ACL_FORMAT_ND, shape.data(),
                           shape.size(), *dev);
}

int ProbeTilingContext()
{
    void *xDev = nullptr, *yDev = nullptr, *f32Dev = nullptr;
    aclTensor *x = DeviceTensor({4, 8}, ACL_FLOAT16, &xDev);
    aclTensor *y = DeviceTensor({4, 8}, ACL_FLOAT16, &yDev);
    aclTensor *f32 = DeviceTensor({4, 8}, ACL_FLOAT, &f32Dev);
    std::vector<int64_t> lens = {5, 7, 9};
    aclIntArray *seq = aclCreateIntArray(lens.data(), lens.size());

    // A full call: absent optional input, a value input, attributes by name and defaults.
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Input(static_cast<const aclTensor *>(nullptr)).Input(seq).Output(y);
        runner.Attr("heads", int64_t(8)).Attr("layout", "BNSD").Attr("dims", std::vector<int64_t>{4, 5});
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        const std::vector<std::vector<int64_t>> inferred = runner.InferOutputShapes();
        CHECK(inferred.size() == 1 && (inferred[0] == std::vector<int64_t>{4, 16}));
        CHECK(runner.Build(&ws, &exe) == ACLNN_SUCCESS);
        CHECK(g_seen.calls == 1);
        CHECK(exe != nullptr && exe->call->outputs[0].instances[0].shape.GetOriginShape().GetDim(1) == 8);
        CHECK(g_seen.inputNum == 2);
        CHECK(g_seen.xDim0 == 4 && g_seen.xDim1 == 8);
        CHECK(g_seen.xDtype == ge::DT_FLOAT16);
        CHECK(g_seen.xFormat == ge::FORMAT_ND);
        CHECK(g_seen.optionalAbsent);
        CHECK(g_seen.seqLenCount == 3 && g_seen.seqLen1 == 7);
        CHECK(g_seen.secondInstanceDim0 == 3);  // instance index 1 = seq_lens, bias absent
        CHECK(g_seen.heads == 8);
        CHECK(g_seen.scale == 0.5f);  // default
        CHECK(!g_seen.flag);          // default
        CHECK(g_seen.layout == "BNSD");
        CHECK((g_seen.dims == std::vector<int64_t>{4, 5}));
        CHECK(g_seen.aic > 0 && g_seen.aiv == 2 * g_seen.aic);
        CHECK(ws == 1024);
        CHECK(exe != nullptr);
        if (exe != nullptr) {
            CHECK(exe->call->blockDim == 3);
            CHECK(exe->call->tilingKey == 42);
            CHECK(exe->call->tilingData.GetDataSize() == sizeof(uint32_t));
            CHECK(*static_cast<const uint32_t *>(exe->call->tilingData.GetData()) == 0xC0FFEE);
            CHECK(exe->args.size() == 4);  // x, bias (null), seq_lens (device copy), y
            CHECK(exe->args[0] == xDev && exe->args[1] == nullptr && exe->args[3] == yDev);
            emu::DeviceAllocation seqCopy;
            CHECK(exe->args[2] != nullptr && emu::DeviceFind(exe->args[2], 3 * sizeof(int64_t), &seqCopy));
            if (exe->args[2] != nullptr) CHECK(static_cast<int64_t *>(exe->args[2])[2] == 9);
            aclDestroyAclOpExecutor(exe);
        }
    }
    // A float attribute given a double, a float default overridden.
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Input(x).Input(static_cast<const aclIntArray *>(nullptr)).Output(y);
        runner.Attr("heads", int64_t(1)).Attr("scale", 0.125).Attr("flag", true);
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_SUCCESS);
        CHECK(g_seen.scale == 0.125f && g_seen.flag && !g_seen.optionalAbsent && g_seen.seqLenCount == 3);
        aclDestroyAclOpExecutor(exe);
    }
    // Errors: null required input -> 161001; dtype not in the OpDef -> 161002; missing required
    // attribute -> inner error; failing tiling -> 561002 keeping the tiling's message.
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(static_cast<const aclTensor *>(nullptr)).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_PARAM_NULLPTR);
        CHECK(emu::LastErrorMessage().find("required input x is null") != std::string::npos);
    }
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(f32).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_PARAM_INVALID);
        CHECK(emu::LastErrorMessage().find("input x has dtype DT_FLOAT") != std::string::npos);
    }
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Output(f32).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_PARAM_INVALID);
    }
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Output(y);
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_INNER);
        CHECK(emu::LastErrorMessage().find("required attribute heads") != std::string::npos);
    }
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Output(y).Attr("heads", "eight");
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_INNER);
        CHECK(emu::LastErrorMessage().find("attribute heads was given a string value") != std::string::npos);
    }
    {
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Output(y).Attr("heads", int64_t(1)).Attr("no_such_attr", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_INNER);
        CHECK(emu::LastErrorMessage().find("no_such_attr is not declared") != std::string::npos);
    }
    {
        g_failTiling = true;
        emu::OpRunner runner("ProbeOp");
        runner.Input(x).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_INNER_TILING_ERROR);
        CHECK(emu::LastErrorMessage().find("rejected on purpose") != std::string::npos);
        g_failTiling = false;
    }
    {
        emu::OpRunner runner("NoSuchOp");
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_INNER_FIND_KERNEL_ERROR);
    }
    // An empty tensor (no data, numpy-style zero strides) is accepted as contiguous.
    {
        const int64_t dims[2] = {0, 8}, zeros[2] = {0, 0};
        aclTensor *empty = aclCreateTensor(dims, 2, ACL_FLOAT16, zeros, 0, ACL_FORMAT_ND, dims, 2, nullptr);
        emu::OpRunner runner("ProbeOp");
        runner.Input(empty).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_SUCCESS);
        CHECK(g_seen.xDim0 == 0 && g_seen.xDim1 == 8);
        aclDestroyAclOpExecutor(exe);
        aclDestroyTensor(empty);
    }
    // A strided (non-contiguous) view builds: the launch stages it through a contiguous copy
    // (whether an operator accepts one is its aclnn checks' decision).
    {
        const int64_t dims[2] = {4, 4}, strides[2] = {1, 4};  // a transposed view of x
        aclTensor *view = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 0, ACL_FORMAT_ND, dims, 2, xDev);
        emu::OpRunner runner("ProbeOp");
        runner.Input(view).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_SUCCESS);
        CHECK(exe != nullptr && exe->staged.size() == 1);
        CHECK(aclDestroyAclOpExecutor(exe) == ACLNN_SUCCESS);
        aclDestroyTensor(view);
    }
    // A negative stride is rejected with 161002.
    {
        const int64_t dims[2] = {4, 4}, strides[2] = {-4, 1};
        aclTensor *view = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 12, ACL_FORMAT_ND, dims, 2, xDev);
        emu::OpRunner runner("ProbeOp");
        runner.Input(view).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_PARAM_INVALID);
        CHECK(emu::LastErrorMessage().find("input x has a negative stride") != std::string::npos);
        aclDestroyTensor(view);
    }
    // Data outside any device allocation is rejected with 161002.
    {
        std::vector<uint16_t> host(32);
        const int64_t dims[2] = {4, 8}, strides[2] = {8, 1};
        aclTensor *onHost = aclCreateTensor(dims, 2, ACL_FLOAT16, strides, 0, ACL_FORMAT_ND, dims, 2, host.data());
        emu::OpRunner runner("ProbeOp");
        runner.Input(onHost).Output(y).Attr("heads", int64_t(1));
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_ERR_PARAM_INVALID);
        CHECK(emu::LastErrorMessage().find("not inside one device allocation") != std::string::npos);
        aclDestroyTensor(onHost);
    }
    // A tensor-list input: the tiling sees each entry; the kernel gets a ListTensorDesc.
    {
        void *aDev = nullptr, *bDev = nullptr, *wDev = nullptr, *oDev = nullptr;
        aclTensor *items[2] = {DeviceTensor({2, 3}, ACL_FLOAT, &aDev), DeviceTensor({4, 5}, ACL_FLOAT, &bDev)};
        aclTensorList *list = aclCreateTensorList(items, 2);
        aclTensor *w = DeviceTensor({6}, ACL_FLOAT, &wDev);
        aclTensor *out = DeviceTensor({6}, ACL_FLOAT, &oDev);
        emu::OpRunner runner("ProbeListOp");
        runner.Input(list).Input(w).Output(out);
        uint64_t ws = 0;
        aclOpExecutor *exe = nullptr;
        CHECK(runner.Build(&ws, &exe) == ACLNN_SUCCESS);
        CHECK(g_seenList.secondListDim1 == 5 && g_seenList.plainDim0 == 6 && g_seenList.pastEndIsNull);
        if (exe != nullptr) {
            const uint64_t *desc = static_cast<const uint64_t *>(exe->args[0]);
            // ptrOffset, {dim 2 | index 0}, 2, 3, {dim 2 | index 1}, 4, 5, ptr a, ptr b
            CHECK(desc[0] == 7 * sizeof(uint64_t));
            CHECK(desc[1] == 2 && desc[2] == 2 && desc[3] == 3);
            CHECK(desc[4] == (2 | (1ull << 32)) && desc[5] == 4 && desc[6] == 5);
            CHECK(desc[7] == reinterpret_cast<uintptr_t>(aDev) && desc[8] == reinterpret_cast<uintptr_t>(bDev));
            CHECK(exe->args[1] == wDev);
            aclDestroyAclOpExecutor(exe);
        }
        aclDestroyTensorList(list);
        aclDestroyTensor(w);
        aclDestroyTensor(out);
        for (void *p : {aDev, bDev, wDev, oDev}) aclrtFree(p);
    }
    // The registry sees the probe with its declarations.
    const std::string json = emu::OpDefsJson(false);
    CHECK(json.find("\"op_type\":\"ProbeOp\"") != std::string::npos);
    CHECK(json.find("{\"name\":\"scale\",\"type\":\"float\",\"required\":false,\"default\":0.5}") != std::string::npos);
    CHECK(json.find("{\"name\":\"dims\",\"type\":\"list_int\",\"required\":false,\"default\":[1,2,3]}") !=
          std::string::npos);
    CHECK(json.find("{\"name\":\"bias\",\"param_type\":\"optional\"") != std::string::npos);

    // CalcTschBlockDim: CANN's rule, 0 when a 1:2 MIX launch would need more AI cores than exist.
    platform_ascendc::PlatformAscendC platform(nullptr);
    CHECK(platform.CalcTschBlockDim(48, 24, 48) == 24);
    CHECK(platform.CalcTschBlockDim(7, 24, 48) == 4);
    CHECK(platform.CalcTschBlockDim(7, 0, 48) == 7);
    CHECK(platform.CalcTschBlockDim(50, 24, 48) == 0);

    aclDestroyTensor(x);
    aclDestroyTensor(y);
    aclDestroyTensor(f32);
    aclDestroyIntArray(seq);
    aclrtFree(xDev);
    aclrtFree(yDev);
    aclrtFree(f32Dev);
    if (g_failures == 0) std::printf("ok %d checks\n", g_checks);
    return g_failures == 0 ? 0 : 1;
}

int ProbeOptiling()
{
    CHECK(emu::FindTilingFunc("ProbeOptilingOnly") == optiling::ProbeOnlyTiling);
    CHECK(emu::FindTilingFunc("ProbeOptilingParsed") == optiling::ProbeOtherTiling);
    CHECK(emu::FindTilingFunc("ProbeOptilingNever") == nullptr);
    if (g_failures == 0) std::printf("ok %d checks\n", g_checks);
    return g_failures == 0 ? 0 : 1;
}

int ProbeMalloc()
{
    // 100 bytes with ACL_MEM_MALLOC_NORMAL_ONLY: one 4 KiB page, and not a byte more.
    const size_t page = 4096;
    void *dev = nullptr;
    CHECK(aclrtMalloc(&dev, 100, ACL_MEM_MALLOC_NORMAL_ONLY) == ACL_SUCCESS && dev != nullptr);
    emu::DeviceAllocation a;
    CHECK(emu::DeviceFind(dev, page, &a) && a.requested == 100 && a.usable == page);
    CHECK(!emu::DeviceFind(dev, page + 1, nullptr));  // what a kernel's GM bounds check sees
    std::vector<uint8_t> host(page + 1, 7);
    CHECK(aclrtMemcpy(dev, page, host.data(), page, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    CHECK(aclrtMemcpy(dev, page + 1, host.data(), page + 1, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS);
    CHECK(aclrtMemcpy(host.data(), page + 1, dev, page + 1, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS);
    CHECK(aclrtFree(dev) == ACL_SUCCESS);
    if (g_failures == 0) std::printf("ok %d checks\n", g_checks);
    return g_failures == 0 ? 0 : 1;
}

// A host golden of a dequant, (b + zeroPoint) * scale in fp16_t, rounds after the add and after
// the multiply, as the vector unit's Adds then Muls do: 2 + 0.1 is 2.099609375 in half, times 1.5
// is 3.1484375; one rounding of the float result would give 3.150390625.
int ProbeFp16()
{
    using op::fp16_t;
    const fp16_t b = 2, zero = 0.1, scale = 1.5;
    CHECK(float(b + zero) == 2.099609375f);
    CHECK(float((b + zero) * scale) == 3.1484375f);
    CHECK(float(fp16_t((2.0f + float(zero)) * float(scale))) == 3.150390625f);
    CHECK(float(fp16_t(2048) + fp16_t(1)) == 2048.0f);  // tie to even
    CHECK(float(fp16_t(2048) + fp16_t(3)) == 2052.0f);
    CHECK(float(fp16_t(1) / fp16_t(3)) == 0.333251953125f);
    CHECK(float(fp16_t(60000) * fp16_t(2)) == INFINITY);
    fp16_t acc = 1;
    acc -= fp16_t(0.25);
    acc *= fp16_t(4);
    acc /= fp16_t(2);
    acc += fp16_t(0.5);
    CHECK(float(acc) == 2.0f);
    CHECK(fp16_t(-5).toDouble() == -5.0);
    std::printf("ok %d checks\n", g_checks);
    return g_failures == 0 ? 0 : 1;
}

int PrintPlatform()
{
    fe::PlatFormInfos infos;  // empty name: the emulator's current SoC
    platform_ascendc::PlatformAscendC p(&infos);
    const platform_ascendc::CoreMemType types[] = {
        platform_ascendc::CoreMemType::UB, platform_ascendc::CoreMemType::L1, platform_ascendc::CoreMemType::L0_A,
        platform_ascendc::CoreMemType::L0_B, platform_ascendc::CoreMemType::L0_C};
    const char *names[] = {"ub", "l1", "l0a", "l0b", "l0c"};
    std::printf("{\"soc_name\":\"%s\",\"soc_version\":%d,\"aic\":%u,\"aiv\":%u,\"core_num\":%u,\"lib_workspace\":%u",
                aclrtGetSocName(), static_cast<int>(p.GetSocVersion()), p.GetCoreNumAic(), p.GetCoreNumAiv(),
                p.GetCoreNum(), p.GetLibApiWorkSpaceSize());
    for (int i = 0; i < 5; ++i) {
        uint64_t size = 0;
        p.GetCoreMemSize(types[i], size);
        std::printf(",\"%s\":%llu", names[i], static_cast<unsigned long long>(size));
    }
    std::printf("}\n");
    return 0;
}

}  // namespace

int main(int argc, char **argv)
{
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "tiling") return ProbeTilingContext();
    if (mode == "platform") return PrintPlatform();
    if (mode == "optiling") return ProbeOptiling();
    if (mode == "malloc") return ProbeMalloc();
    if (mode == "fp16") return ProbeFp16();
    std::fprintf(stderr, "usage: %s tiling|platform|optiling|malloc|fp16\n", argv[0]);
    return 2;
}
