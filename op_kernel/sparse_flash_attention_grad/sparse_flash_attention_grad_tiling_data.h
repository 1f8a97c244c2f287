// Tiling data of SparseFlashAttentionGrad (aclnnSparseFlashAttentionGrad), written by
// op_host/sparse_flash_attention_grad and read by the kernel; the tiling key selects the dtype.
#pragma once
#include <cstdint>
#include "../attention_core/sparse_backward/sparse_backward_params.h"

// Tiling keys: macros of integer literals, the only key CANN's kernel compiler collects
// (forward_params.h, ForwardTilingKey).
#define SFAG_TILING_KEY_FP16 0
#define SFAG_TILING_KEY_BF16 1

struct SparseFlashAttentionGradTilingData {
    AttentionCore::SparseBackwardParams params;
};
