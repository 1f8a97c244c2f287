// The CPU target's aclnnInnerFlashAttentionScore (flash_attention_score_launch.h): the
// emulator's op runner checks the call against the OpDef, runs the tiling and launches the
// kernel on the emulated cores. What opbuild generates for the NPU package.
#include "flash_attention_score_launch.h"

#include "emu/op_runner.h"

extern "C" void flash_attention_score(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *realShift,
                                      uint8_t *dropMask, uint8_t *paddingMask, uint8_t *attenMask, uint8_t *prefix,
                                      uint8_t *actualSeqQLen, uint8_t *actualSeqKvLen, uint8_t *softmaxMax,
                                      uint8_t *softmaxSum, uint8_t *softmaxOut, uint8_t *attentionOut,
                                      uint8_t *workspace, uint8_t *tiling);

extern "C" aclnnStatus aclnnInnerFlashAttentionScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQlenOptional,
    const aclIntArray *actualSeqKvlenOptional, double scaleValue, double keepProb, int64_t preTockens,
    int64_t nextTockens, int64_t headNum, char *inputLayout, int64_t innerPrecise, int64_t sparseMode,
    const aclTensor *softmaxMaxOut, const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOutOptional,
    const aclTensor *attentionOutOut, uint64_t *workspaceSize, aclOpExecutor **executor)
{
    emu::OpRunner runner("FlashAttentionScore");
    runner.Input(query)
        .Input(key)
        .Input(value)
        .Input(realShiftOptional)
        .Input(dropMaskOptional)
        .Input(paddingMaskOptional)
        .Input(attenMaskOptional)
        .Input(prefixOptional)
        .Input(actualSeqQlenOptional)
        .Input(actualSeqKvlenOptional)
        .Output(softmaxMaxOut)
        .Output(softmaxSumOut)
        .Output(softmaxOutOutOptional)
        .Output(attentionOutOut);
    runner.Attr("scale_value", scaleValue)
        .Attr("keep_prob", keepProb)
        .Attr("pre_tockens", preTockens)
        .Attr("next_tockens", nextTockens)
        .Attr("head_num", headNum)
        .Attr("input_layout", static_cast<const char *>(inputLayout))
        .Attr("inner_precise", innerPrecise)
        .Attr("sparse_mode", sparseMode);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnInnerFlashAttentionScore(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                                                     aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, flash_attention_score,
                             emu::CoreMix::MIX_AIC_1_2, "flash_attention_score");
}
