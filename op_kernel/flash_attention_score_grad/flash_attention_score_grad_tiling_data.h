// Tiling data of FlashAttentionScoreGrad (aclnnFlashAttentionUnpaddingScoreGradV5), written by
// op_host/flash_attention_score_grad and read by the kernel; the tiling key selects the dtype.
// Without the forward's softmax_max/sum/attention_in (recompute = 1) the kernel first runs the
// varlen forward core (tiling `forward`) into the workspace: its own slots at offset 0, the
// statistics [T, N, 8] at statsMaxOffset / statsSumOffset and the attention output (input
// dtype) at attentionOffset; the backward's workspace then starts at backwardOffset.
#pragma once
#include <cstdint>
#include "../attention_core/backward/backward_params.h"
#include "../attention_core/forward/forward_params.h"

constexpr uint64_t FAG_TILING_KEY_FP16 = 0;
constexpr uint64_t FAG_TILING_KEY_BF16 = 1;
constexpr uint64_t FAG_TILING_KEY_FP32 = 2;

struct FlashAttentionScoreGradTilingData {
    AttentionCore::BackwardParams params;
    uint32_t recompute;
    uint32_t reserved;
    uint64_t statsMaxOffset, statsSumOffset, attentionOffset, backwardOffset;
    AttentionCore::VarLenTiling forward;
};
