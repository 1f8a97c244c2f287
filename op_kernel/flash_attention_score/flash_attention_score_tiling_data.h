// Tiling data of FlashAttentionScore (aclnnFlashAttentionVarLenScore, TND), written by
// op_host/flash_attention_score and read by the kernel with GET_TILING_DATA_WITH_STRUCT.
// The varlen variant's tiling (the core's ForwardParams and the pse, sparse-mode mask and
// dropout policies' Params); the tiling key selects the element type.
#pragma once
#include <cstdint>
#include "../attention_core/forward/forward_params.h"

// Tiling keys: macros of integer literals, the only key CANN's kernel compiler collects
// (forward_params.h, ForwardTilingKey).
// Key = dtype (0 fp16, 1 bf16, 2 fp32) + 10 for lazy P.V + 1000 for K/V in Nz order (16-bit types
// only); the static_asserts keep it equal to ForwardTilingKey.
#define FA_TILING_KEY_FP16 0
#define FA_TILING_KEY_BF16 1
#define FA_TILING_KEY_FP32 2
#define FA_TILING_KEY_FP16_LAZY 10
#define FA_TILING_KEY_BF16_LAZY 11
#define FA_TILING_KEY_FP32_LAZY 12
#define FA_TILING_KEY_FP16_KV_NZ 1000
#define FA_TILING_KEY_BF16_KV_NZ 1001
#define FA_TILING_KEY_FP16_LAZY_KV_NZ 1010
#define FA_TILING_KEY_BF16_LAZY_KV_NZ 1011
static_assert(AttentionCore::ForwardTilingKey(FA_TILING_KEY_FP16, true) == FA_TILING_KEY_FP16_LAZY &&
                  AttentionCore::ForwardTilingKey(FA_TILING_KEY_FP16, false, false, true) == FA_TILING_KEY_FP16_KV_NZ &&
                  AttentionCore::ForwardTilingKey(FA_TILING_KEY_FP16, true, false, true) ==
                      FA_TILING_KEY_FP16_LAZY_KV_NZ,
              "tiling key macros out of step with ForwardTilingKey");
static_assert(AttentionCore::ForwardTilingKey(FA_TILING_KEY_BF16, true) == FA_TILING_KEY_BF16_LAZY &&
                  AttentionCore::ForwardTilingKey(FA_TILING_KEY_BF16, false, false, true) == FA_TILING_KEY_BF16_KV_NZ &&
                  AttentionCore::ForwardTilingKey(FA_TILING_KEY_BF16, true, false, true) ==
                      FA_TILING_KEY_BF16_LAZY_KV_NZ,
              "tiling key macros out of step with ForwardTilingKey");
static_assert(AttentionCore::ForwardTilingKey(FA_TILING_KEY_FP32, true) == FA_TILING_KEY_FP32_LAZY,
              "tiling key macros out of step with ForwardTilingKey");

using FlashAttentionScoreTilingData = AttentionCore::VarLenTiling;

// With ForwardParams UNITS_TABLE the host writes the unit order (uint32 per position) at this
// offset of the tiling buffer, after the struct (the kernel reads it from GM, not the copy).
constexpr uint32_t FA_UNIT_ORDER_OFFSET = (sizeof(FlashAttentionScoreTilingData) + 31) / 32 * 32;
