// Tiling data of FlashAttentionScore (aclnnFlashAttentionVarLenScore, TND), written by
// op_host/flash_attention_score and read by the kernel with GET_TILING_DATA_WITH_STRUCT.
// The varlen variant's tiling (the core's ForwardParams and the pse, sparse-mode mask and
// dropout policies' Params); the tiling key selects the element type.
#pragma once
#include <cstdint>
#include "../attention_core/forward/forward_params.h"

constexpr uint64_t FA_TILING_KEY_FP16 = 0;
constexpr uint64_t FA_TILING_KEY_BF16 = 1;
constexpr uint64_t FA_TILING_KEY_FP32 = 2;

using FlashAttentionScoreTilingData = AttentionCore::VarLenTiling;
