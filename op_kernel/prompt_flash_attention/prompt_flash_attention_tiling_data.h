// Tiling data of PromptFlashAttention, written by op_host/prompt_flash_attention and read by
// the kernel with GET_TILING_DATA_WITH_STRUCT: the prefill variant's tiling (the core's
// ForwardParams and the scale and mask-band policies' Params); the tiling key selects the
// element type.
#pragma once
#include <cstdint>
#include "../attention_core/forward/forward_params.h"

constexpr uint64_t PFA_TILING_KEY_FP16 = 0;
constexpr uint64_t PFA_TILING_KEY_BF16 = 1;

using PromptFlashAttentionTilingData = AttentionCore::PrefillTiling;
