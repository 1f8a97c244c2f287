// Tiling data of PromptFlashAttention, written by op_host/prompt_flash_attention and read by
// the kernel with GET_TILING_DATA_WITH_STRUCT: the prefill variant's tiling (the core's
// ForwardParams and the scale and mask-band policies' Params); the tiling key selects the
// element type.
#pragma once
#include <cstdint>
#include "../attention_core/forward/forward_params.h"

// Tiling keys: macros of integer literals, the only key CANN's kernel compiler collects
// (forward_params.h, ForwardTilingKey).
// Key = dtype (0 fp16, 1 bf16) + 10 for lazy P.V + 100 for the mask summary + 1000 for K/V in
// Nz order; the static_asserts keep it equal to ForwardTilingKey.
#define PFA_TILING_KEY_FP16 0
#define PFA_TILING_KEY_BF16 1
#define PFA_TILING_KEY_FP16_LAZY 10
#define PFA_TILING_KEY_BF16_LAZY 11
#define PFA_TILING_KEY_FP16_SUMMARY 100
#define PFA_TILING_KEY_BF16_SUMMARY 101
#define PFA_TILING_KEY_FP16_LAZY_SUMMARY 110
#define PFA_TILING_KEY_BF16_LAZY_SUMMARY 111
#define PFA_TILING_KEY_FP16_KV_NZ 1000
#define PFA_TILING_KEY_BF16_KV_NZ 1001
#define PFA_TILING_KEY_FP16_LAZY_KV_NZ 1010
#define PFA_TILING_KEY_BF16_LAZY_KV_NZ 1011
#define PFA_TILING_KEY_FP16_SUMMARY_KV_NZ 1100
#define PFA_TILING_KEY_BF16_SUMMARY_KV_NZ 1101
#define PFA_TILING_KEY_FP16_LAZY_SUMMARY_KV_NZ 1110
#define PFA_TILING_KEY_BF16_LAZY_SUMMARY_KV_NZ 1111
static_assert(
    AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, true, false, false) == PFA_TILING_KEY_FP16_LAZY &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, false, true, false) == PFA_TILING_KEY_FP16_SUMMARY &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, true, true, false) == PFA_TILING_KEY_FP16_LAZY_SUMMARY &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, false, false, true) == PFA_TILING_KEY_FP16_KV_NZ &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, true, false, true) == PFA_TILING_KEY_FP16_LAZY_KV_NZ &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, false, true, true) == PFA_TILING_KEY_FP16_SUMMARY_KV_NZ &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_FP16, true, true, true) ==
            PFA_TILING_KEY_FP16_LAZY_SUMMARY_KV_NZ,
    "tiling key macros out of step with ForwardTilingKey");
static_assert(
    AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, true, false, false) == PFA_TILING_KEY_BF16_LAZY &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, false, true, false) == PFA_TILING_KEY_BF16_SUMMARY &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, true, true, false) == PFA_TILING_KEY_BF16_LAZY_SUMMARY &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, false, false, true) == PFA_TILING_KEY_BF16_KV_NZ &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, true, false, true) == PFA_TILING_KEY_BF16_LAZY_KV_NZ &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, false, true, true) == PFA_TILING_KEY_BF16_SUMMARY_KV_NZ &&
        AttentionCore::ForwardTilingKey(PFA_TILING_KEY_BF16, true, true, true) ==
            PFA_TILING_KEY_BF16_LAZY_SUMMARY_KV_NZ,
    "tiling key macros out of step with ForwardTilingKey");

using PromptFlashAttentionTilingData = AttentionCore::PrefillTiling;

// With ForwardParams UNITS_TABLE the host writes the unit order (uint32 per position) at this
// offset of the tiling buffer, after the struct (the kernel reads it from GM, not the copy).
constexpr uint32_t PFA_UNIT_ORDER_OFFSET = (sizeof(PromptFlashAttentionTilingData) + 31) / 32 * 32;
