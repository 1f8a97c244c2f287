// Tiling data of FlashAttentionScoreGrad (aclnnFlashAttentionUnpaddingScoreGradV5), written by
// op_host/flash_attention_score_grad and read by the kernel; the tiling key selects the dtype.
#pragma once
#include <cstdint>
#include "../attention_core/backward_params.h"

constexpr uint64_t FAG_TILING_KEY_FP16 = 0;
constexpr uint64_t FAG_TILING_KEY_BF16 = 1;

struct FlashAttentionScoreGradTilingData {
    AttentionCore::BackwardParams params;
};
