// Tiling of the MIX proof kernel: Y = softmax_rows(A * B^T), A [M,K] and B [N,K] fp16 ND in
// GM, Y [M,N] fp32. Row blocks of baseM rows go round-robin to the blockDim AI cores. The
// cube core computes S = A_blk * B^T into one of two fp32 workspace slots (row pitch nAlign)
// and raises a cross-core flag; its two vector cores each take half of the block's rows,
// compute the row softmax into Y and hand the slot back with another cross-core flag.
// Kernel entry: extern "C" __global__ __aicore__ void mix_softmax(GM_ADDR a, GM_ADDR b,
//     GM_ADDR y, GM_ADDR workspace, GM_ADDR tiling); KERNEL_TYPE_MIX_AIC_1_2, blockDim = AI cores
//     (AIC count), user workspace = blockDim * 2 * baseM * nAlign * 4 bytes.
#pragma once
#include <cstdint>

struct MixSoftmaxTilingData {
    uint32_t m;          // rows of A and Y
    uint32_t n;          // rows of B, columns of S and Y (1 <= n <= 512)
    uint32_t k;          // columns of A and B (any value >= 1)
    uint32_t baseM;      // rows per block, multiple of 32 (each vector core takes baseM / 2)
    uint32_t nAlign;     // n rounded up to 16: row pitch of S in the workspace (elements)
    uint32_t rowBlocks;  // ceil(m / baseM)
    // Workspace: blockDim * 2 slots * baseM * nAlign floats; core b's slot s starts at
    // element (b * 2 + s) * baseM * nAlign of GetUserWorkspace(workspace).
};
