// aclnn API of MixSoftmax on the CPU target.
#include "aclnn_mix_softmax.h"

#include "emu/log.h"
#include "emu/op_runner.h"

extern "C" void mix_softmax(uint8_t *a, uint8_t *b, uint8_t *y, uint8_t *workspace, uint8_t *tiling);

aclnnStatus aclnnMixSoftmaxGetWorkspaceSize(const aclTensor *a, const aclTensor *b, int64_t maxCores, aclTensor *y,
                                            uint64_t *workspaceSize, aclOpExecutor **executor)
{
    if (maxCores < 0) {
        EMU_LOGE("aclnnMixSoftmax: maxCores %lld is negative", static_cast<long long>(maxCores));
        return ACLNN_ERR_PARAM_INVALID;
    }
    emu::OpRunner runner("MixSoftmax");
    runner.Input(a).Input(b).Output(y).Attr("max_cores", maxCores);
    return runner.Build(workspaceSize, executor);
}

aclnnStatus aclnnMixSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, mix_softmax, emu::CoreMix::MIX_AIC_1_2,
                             "mix_softmax");
}
