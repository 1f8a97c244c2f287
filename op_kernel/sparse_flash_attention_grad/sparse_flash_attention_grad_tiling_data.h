// Tiling data of SparseFlashAttentionGrad (aclnnSparseFlashAttentionGrad), written by
// op_host/sparse_flash_attention_grad and read by the kernel; the tiling key selects the dtype.
#pragma once
#include <cstdint>
#include "../attention_core/sparse_backward/sparse_backward_params.h"

constexpr uint64_t SFAG_TILING_KEY_FP16 = 0;
constexpr uint64_t SFAG_TILING_KEY_BF16 = 1;

struct SparseFlashAttentionGradTilingData {
    AttentionCore::SparseBackwardParams params;
};
