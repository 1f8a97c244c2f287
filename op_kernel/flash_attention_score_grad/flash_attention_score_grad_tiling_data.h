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

// Tiling keys: macros of integer literals, the only key CANN's kernel compiler collects
// (forward_params.h, ForwardTilingKey).
// Key = dtype (0 fp16, 1 bf16, 2 fp32) + 10 for lazy P.V + 1000 for K/V in Nz order (16-bit types
// only); the static_asserts keep it equal to ForwardTilingKey.
#define FAG_TILING_KEY_FP16 0
#define FAG_TILING_KEY_BF16 1
#define FAG_TILING_KEY_FP32 2
#define FAG_TILING_KEY_FP16_LAZY 10
#define FAG_TILING_KEY_BF16_LAZY 11
#define FAG_TILING_KEY_FP32_LAZY 12
#define FAG_TILING_KEY_FP16_KV_NZ 1000
#define FAG_TILING_KEY_BF16_KV_NZ 1001
#define FAG_TILING_KEY_FP16_LAZY_KV_NZ 1010
#define FAG_TILING_KEY_BF16_LAZY_KV_NZ 1011
static_assert(AttentionCore::ForwardTilingKey(FAG_TILING_KEY_FP16, true) == FAG_TILING_KEY_FP16_LAZY &&
                  AttentionCore::ForwardTilingKey(FAG_TILING_KEY_FP16, false, false, true) ==
                      FAG_TILING_KEY_FP16_KV_NZ &&
                  AttentionCore::ForwardTilingKey(FAG_TILING_KEY_FP16, true, false, true) ==
                      FAG_TILING_KEY_FP16_LAZY_KV_NZ,
              "tiling key macros out of step with ForwardTilingKey");
static_assert(AttentionCore::ForwardTilingKey(FAG_TILING_KEY_BF16, true) == FAG_TILING_KEY_BF16_LAZY &&
                  AttentionCore::ForwardTilingKey(FAG_TILING_KEY_BF16, false, false, true) ==
                      FAG_TILING_KEY_BF16_KV_NZ &&
                  AttentionCore::ForwardTilingKey(FAG_TILING_KEY_BF16, true, false, true) ==
                      FAG_TILING_KEY_BF16_LAZY_KV_NZ,
              "tiling key macros out of step with ForwardTilingKey");
static_assert(AttentionCore::ForwardTilingKey(FAG_TILING_KEY_FP32, true) == FAG_TILING_KEY_FP32_LAZY,
              "tiling key macros out of step with ForwardTilingKey");

struct FlashAttentionScoreGradTilingData {
    AttentionCore::BackwardParams params;
    uint32_t recompute;
    uint32_t reserved;
    uint64_t statsMaxOffset, statsSumOffset, attentionOffset, backwardOffset;
    AttentionCore::VarLenTiling forward;
};
