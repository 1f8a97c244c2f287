// Tiling data of IncreFlashAttention, written by op_host/incre_flash_attention and read by the
// kernel with GET_TILING_DATA_WITH_STRUCT: the decode variant's tiling (the core's
// ForwardParams, the decode score and mask policies' Params and the decode parameters;
// attention_core/variants/decode_params.h). The tiling key selects the element type.
#pragma once
#include <cstdint>
#include "../attention_core/variants/decode_params.h"

// Tiling keys: macros of integer literals, the only key CANN's kernel compiler collects
// (forward_params.h, ForwardTilingKey).
// Key = dtype (0 fp16, 1 bf16) + 10 for lazy P.V (+ 20 for the int8 x int8 core); the static_asserts keep it equal to ForwardTilingKey.
#define IFA_TILING_KEY_FP16 0
#define IFA_TILING_KEY_BF16 1
#define IFA_TILING_KEY_FP16_LAZY 10
#define IFA_TILING_KEY_BF16_LAZY 11
// The int8 x int8 core (DecodeParams::digits.enabled): dtype + 20.
#define IFA_TILING_KEY_FP16_DIGITS 20
#define IFA_TILING_KEY_BF16_DIGITS 21
static_assert(AttentionCore::ForwardTilingKey(IFA_TILING_KEY_FP16, true) == IFA_TILING_KEY_FP16_LAZY,
              "tiling key macros out of step with ForwardTilingKey");
static_assert(AttentionCore::ForwardTilingKey(IFA_TILING_KEY_BF16, true) == IFA_TILING_KEY_BF16_LAZY,
              "tiling key macros out of step with ForwardTilingKey");

using IncreFlashAttentionTilingData = AttentionCore::DecodeTiling;
