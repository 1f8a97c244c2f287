// Tiling data of IncreFlashAttention, written by op_host/incre_flash_attention and read by the
// kernel with GET_TILING_DATA_WITH_STRUCT: the decode variant's tiling (the core's
// ForwardParams, the decode score and mask policies' Params and the decode parameters;
// attention_core/variants/decode_params.h). The tiling key selects the element type.
#pragma once
#include <cstdint>
#include "../attention_core/variants/decode_params.h"

// Tiling keys are macros that expand to integer literals: CANN's kernel compiler collects the
// keys of an entry by matching `g_tilingKey == (<integer>` in the preprocessed source
// (TILING_KEY_IS(k) is `(g_tilingKey == (k))`) and rejects a constexpr name or a call there.
// Key = dtype (0 fp16, 1 bf16) + 10 for lazy P.V (AttentionCore::ForwardTilingKey; the static_asserts keep both in step).
#define IFA_TILING_KEY_FP16 0
#define IFA_TILING_KEY_BF16 1
#define IFA_TILING_KEY_FP16_LAZY 10
#define IFA_TILING_KEY_BF16_LAZY 11
static_assert(AttentionCore::ForwardTilingKey(IFA_TILING_KEY_FP16, true) == IFA_TILING_KEY_FP16_LAZY,
              "tiling key macros out of step with ForwardTilingKey");
static_assert(AttentionCore::ForwardTilingKey(IFA_TILING_KEY_BF16, true) == IFA_TILING_KEY_BF16_LAZY,
              "tiling key macros out of step with ForwardTilingKey");

using IncreFlashAttentionTilingData = AttentionCore::DecodeTiling;
