// Tiling data of SparseFlashAttentionGrad (aclnnSparseFlashAttentionGrad), written by
// op_host/sparse_flash_attention_grad and read by the kernel; the tiling key selects the dtype.
#pragma once
#include <cstdint>
#include "../attention_core/sparse_backward/sparse_backward_params.h"

// Tiling keys are macros that expand to integer literals: CANN's kernel compiler collects the
// keys of an entry by matching `g_tilingKey == (<integer>` in the preprocessed source
// (TILING_KEY_IS(k) is `(g_tilingKey == (k))`) and rejects a constexpr name or a call there.
#define SFAG_TILING_KEY_FP16 0
#define SFAG_TILING_KEY_BF16 1

struct SparseFlashAttentionGradTilingData {
    AttentionCore::SparseBackwardParams params;
};
