// Tiling of the cube proof kernel: C[M,N] = A[M,K] * B[K,N], row-major (ND) in GM, fp16 or
// bf16 in and out, fp32 accumulation in L0C. C is cut into baseM x baseN tiles handed out
// round-robin to the blockDim AIC cores; each tile loops over K in steps of baseK
// (GM -> L1 with Nd2Nz, L1 -> L0A/L0B with LoadData, Mmad accumulating, Fixpipe to GM).
// Kernel entry: extern "C" __global__ __aicore__ void cube_matmul(GM_ADDR a, GM_ADDR b,
//     GM_ADDR c, GM_ADDR workspace, GM_ADDR tiling); KERNEL_TYPE_AIC_ONLY, blockDim = AIC cores,
//     workspace unused (0 bytes of user workspace).
#pragma once
#include <cstdint>

// Tiling keys (dtype of A, B and C).
#define CUBE_MATMUL_KEY_HALF 0
#define CUBE_MATMUL_KEY_BF16 1

struct CubeMatmulTilingData {
    uint32_t m;       // rows of A and C (any value >= 1)
    uint32_t n;       // columns of B and C (any value >= 1)
    uint32_t k;       // columns of A, rows of B (any value >= 1)
    uint32_t baseM;   // tile rows, multiple of 16
    uint32_t baseN;   // tile columns, multiple of 16
    uint32_t baseK;   // K step, multiple of 16
    uint32_t mTiles;  // ceil(m / baseM)
    uint32_t nTiles;  // ceil(n / baseN)
};
