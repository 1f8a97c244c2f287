// The CPU-target launch seam under an operator's aclnn API. GetWorkspaceSize describes the call
// in the order of the operator's OpDef and lets the registered tiling function run:
//
//     emu::OpRunner runner("PromptFlashAttention");
//     runner.Input(query).Input(key).Input(value).Input(pseShift /* may be null */)
//           .Input(actualSeqLengths /* aclIntArray: value-dependent int64 input */)
//           .Output(attentionOut)
//           .Attr("num_heads", numHeads).Attr("scale_value", scaleValue).Attr("input_layout", layout);
//     return runner.Build(workspaceSize, executor);
//
// and the run stage launches the kernel entry with the GM addresses (inputs, outputs, workspace,
// tiling, in that order; nullptr for absent optional inputs):
//
//     extern "C" void prompt_flash_attention(uint8_t *query, ..., uint8_t *workspace, uint8_t *tiling);
//     return emu::LaunchKernel(executor, workspace, workspaceSize, stream, prompt_flash_attention,
//                              emu::CoreMix::MIX_AIC_1_2);
//
// Failures log a line (emu/log.h) and return an aclnn status: 161001 for null required
// arguments, 161002 for arguments the OpDef does not accept, 561002 when tiling fails, 561103
// when device memory cannot hold the contiguous copy of a non-contiguous argument.
// Not a CANN header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl_rt.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "emu/abi_stamp.h"
#include "emu/acl_objects.h"
#include "emu/launch.h"
#include "emu/op_call.h"

namespace ops {
class OpDef;
}

namespace emu {
// A non-contiguous tensor argument: the kernel works on a contiguous staging copy, gathered from
// the caller's strided view before the launch (inputs) or scattered back into it after (outputs),
// as CANN's aclnn layer does with its Contiguous / ViewCopy kernels around the operator.
struct StagedView {
    void *view = nullptr;                 // device address of the view's element 0
    void *staging = nullptr;              // contiguous copy (owned by the executor)
    std::vector<int64_t> shape, strides;  // elements
    size_t elementBytes = 0;
    bool output = false;
};
}  // namespace emu

// What GetWorkspaceSize hands to the run stage.
struct aclOpExecutor {
    std::shared_ptr<emu::OpCall> call;
    std::vector<void *> args;               // GM addresses of inputs then outputs, IR order
    std::vector<void *> ownedDeviceMemory;  // device copies of value inputs, staging copies; freed with the executor
    std::vector<emu::StagedView> staged;    // non-contiguous arguments
    uint64_t workspaceSize = 0;
    ~aclOpExecutor();
};

namespace emu {

class OpRunner {
public:
    explicit OpRunner(const char *opType);

    // Inputs in OpDef order; a null pointer marks an absent optional input.
    OpRunner &Input(const aclTensor *tensor);
    OpRunner &Input(const aclIntArray *values);  // becomes an int64 tensor of shape [n]
    OpRunner &Input(const aclTensorList *list);  // dynamic input: the kernel gets a ListTensorDesc
    OpRunner &Output(const aclTensor *tensor);

    // Attributes by OpDef name; unset optional attributes take their OpDef default.
    OpRunner &Attr(const char *name, int64_t value);
    OpRunner &Attr(const char *name, double value);
    OpRunner &Attr(const char *name, bool value);
    OpRunner &Attr(const char *name, const char *value);
    OpRunner &Attr(const char *name, const std::vector<int64_t> &values);
    OpRunner &Attr(const char *name, int value) { return Attr(name, static_cast<int64_t>(value)); }
    OpRunner &Attr(const char *name, float value) { return Attr(name, static_cast<double>(value)); }

    // Runs the registered infershape function (if any) and returns the output shapes it
    // computed (by output IR index); empty on failure (logged).
    std::vector<std::vector<int64_t>> InferOutputShapes();

    // Checks the call against the OpDef, runs the tiling function, creates the executor.
    aclnnStatus Build(uint64_t *workspaceSize, aclOpExecutor **executor);

    const OpCall &Call() const { return *call_; }

private:
    aclnnStatus firstError_ = ACLNN_SUCCESS;
    std::shared_ptr<OpCall> call_;
    const ops::OpDef *def_ = nullptr;
    size_t nextInput_ = 0;
    size_t nextOutput_ = 0;
    std::vector<bool> attrSet_;
    void Fail(aclnnStatus status, const std::string &message);
    aclnnStatus FailStaging(aclOpExecutor *exe, const std::string &name, const aclTensor &tensor);
    bool CheckTensor(const std::string &what, const aclTensor &tensor, bool allowStrided = false);
    gert::AttrValue *AttrSlot(const char *name);  // marks the attribute as set
    void WrongAttrType(const char *name, const char *given);
    static OpCallTensor MakeInstance(const aclTensor *tensor);
    OpCallParam *NextParam(bool output);
};

// Run stage: checks the workspace, copies the tiling data to device memory, runs `argc` GM
// addresses (inputs, outputs) + workspace + tiling through the kernel entry on the emulated
// cores, then releases the executor (as CANN's second-stage call does). `abiStamp`: as for Launch.
aclnnStatus LaunchKernelArgs(aclOpExecutor *executor, void *workspace, uint64_t workspaceSize, aclrtStream stream,
                             CoreMix mix, const char *kernelName, void (*invoke)(void *kernel, void *const *args),
                             void *kernel, size_t kernelArgc, uint64_t abiStamp);

namespace detail {
template <size_t... I> struct IndexSeq {};
template <size_t N, size_t... I> struct MakeIndexSeq : MakeIndexSeq<N - 1, N - 1, I...> {};
template <size_t... I> struct MakeIndexSeq<0, I...> {
    using type = IndexSeq<I...>;
};
template <typename... Args, size_t... I> void InvokeWith(void (*fn)(Args...), void *const *args, IndexSeq<I...>)
{
    fn(static_cast<Args>(args[I])...);
}
template <typename... Args> void Invoke(void *kernel, void *const *args)
{
    auto fn = reinterpret_cast<void (*)(Args...)>(kernel);
    InvokeWith(fn, args, typename MakeIndexSeq<sizeof...(Args)>::type());
}
}  // namespace detail

template <typename... Args>
aclnnStatus LaunchKernel(aclOpExecutor *executor, void *workspace, uint64_t workspaceSize, aclrtStream stream,
                         void (*kernel)(Args...), CoreMix mix, const char *kernelName = "kernel")
{
    return LaunchKernelArgs(executor, workspace, workspaceSize, stream, mix, kernelName, &detail::Invoke<Args...>,
                            reinterpret_cast<void *>(kernel), sizeof...(Args), ASCEND_EMU_ABI_STAMP);
}

}  // namespace emu

// The tiling data (its size in *bytes) and tiling key of the last launch through
// LaunchKernelArgs, for tests that check a kernel against what its tiling planned.
extern "C" const uint8_t *ascendc_emu_last_tiling(uint64_t *bytes, uint64_t *key);
