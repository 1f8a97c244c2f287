// aclnnFlashAttentionVarLenScore on the CPU target: the spec-001 validation
// (flash_attention_var_len_score_checks.cpp), then the emulator's op runner (OpDef check,
// tiling, executor) and the kernel launch.
#include "aclnn_flash_attention_score.h"

#include <cstdint>

#include "../../common/op_log.h"
#include "emu/op_runner.h"
#include "flash_attention_var_len_score_checks.h"

extern "C" void flash_attention_score(uint8_t *query, uint8_t *key, uint8_t *value, uint8_t *realShift,
                                      uint8_t *dropMask, uint8_t *paddingMask, uint8_t *attenMask, uint8_t *prefix,
                                      uint8_t *actualSeqQLen, uint8_t *actualSeqKvLen, uint8_t *softmaxMax,
                                      uint8_t *softmaxSum, uint8_t *softmaxOut, uint8_t *attentionOut,
                                      uint8_t *workspace, uint8_t *tiling);

extern "C" aclnnStatus aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
    const aclTensor *query, const aclTensor *key, const aclTensor *value, const aclTensor *realShiftOptional,
    const aclTensor *dropMaskOptional, const aclTensor *paddingMaskOptional, const aclTensor *attenMaskOptional,
    const aclIntArray *prefixOptional, const aclIntArray *actualSeqQLenOptional,
    const aclIntArray *actualSeqKvLenOptional, double scaleValueOptional, double keepProbOptional,
    int64_t preTokensOptional, int64_t nextTokensOptional, int64_t headNum, char *inputLayout,
    int64_t innerPreciseOptional, int64_t sparseModeOptional, const aclTensor *softmaxMaxOut,
    const aclTensor *softmaxSumOut, const aclTensor *softmaxOutOut, const aclTensor *attentionOutOut,
    uint64_t *workspaceSize, aclOpExecutor **executor)
{
    VarLenScoreArgs a{query, key, value, realShiftOptional, dropMaskOptional, paddingMaskOptional,
                      attenMaskOptional, prefixOptional, actualSeqQLenOptional, actualSeqKvLenOptional,
                      scaleValueOptional, keepProbOptional, preTokensOptional, nextTokensOptional, headNum,
                      inputLayout, innerPreciseOptional, sparseModeOptional, softmaxMaxOut, softmaxSumOut,
                      softmaxOutOut, attentionOutOut};
    const aclnnStatus status = FlashAttentionVarLenScoreCheckParams(a, workspaceSize, executor);
    if (status != ACLNN_SUCCESS) return status;
    if (paddingMaskOptional != nullptr) {
        FA_LOGW("aclnnFlashAttentionVarLenScore: paddingMaskOptional is reserved by the spec; the tensor is ignored");
    }

    // keep_prob == 1 means the drop mask is not read; the reserved padding mask and softmax_out
    // are not passed to the kernel.
    emu::OpRunner runner("FlashAttentionScore");
    runner.Input(query).Input(key).Input(value).Input(realShiftOptional)
        .Input(keepProbOptional < 1.0 ? dropMaskOptional : nullptr).Input(static_cast<const aclTensor *>(nullptr))
        .Input(attenMaskOptional).Input(VarLenScoreUsesPrefix(a) ? prefixOptional : nullptr)
        .Input(actualSeqQLenOptional).Input(actualSeqKvLenOptional)
        .Output(softmaxMaxOut).Output(softmaxSumOut).Output(static_cast<const aclTensor *>(nullptr))
        .Output(attentionOutOut);
    runner.Attr("scale_value", scaleValueOptional)
        .Attr("keep_prob", keepProbOptional)
        .Attr("pre_tockens", preTokensOptional)
        .Attr("next_tockens", nextTokensOptional)
        .Attr("head_num", headNum)
        .Attr("input_layout", static_cast<const char *>(inputLayout))
        .Attr("inner_precise", innerPreciseOptional)
        .Attr("sparse_mode", sparseModeOptional);
    return runner.Build(workspaceSize, executor);
}

extern "C" aclnnStatus aclnnFlashAttentionVarLenScore(void *workspace, uint64_t workspaceSize,
                                                      aclOpExecutor *executor, const aclrtStream stream)
{
    return emu::LaunchKernel(executor, workspace, workspaceSize, stream, flash_attention_score,
                             emu::CoreMix::MIX_AIC_1_2, "flash_attention_score");
}
