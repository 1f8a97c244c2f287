// Tiling data of IncreFlashAttention, written by op_host/incre_flash_attention and read by the
// kernel with GET_TILING_DATA_WITH_STRUCT: the decode variant's tiling (the core's
// ForwardParams, the decode score and mask policies' Params and the decode parameters;
// attention_core/variants/decode_params.h). The tiling key selects the element type.
#pragma once
#include <cstdint>
#include "../attention_core/variants/decode_params.h"

constexpr uint64_t IFA_TILING_KEY_FP16 = 0;
constexpr uint64_t IFA_TILING_KEY_BF16 = 1;

using IncreFlashAttentionTilingData = AttentionCore::DecodeTiling;
