// Tiling of the vector proof kernel: z = alpha * x + y over a flat array, split over
// blockDim AIV cores, each core's range cut into tiles that go through a double-buffered
// TQue pipeline; the last tile of a core may be short (DataCopyPad handles it).
// Kernel entry: extern "C" __global__ __aicore__ void vector_axpy(GM_ADDR x, GM_ADDR y,
//     GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling); KERNEL_TYPE_AIV_ONLY, blockDim = AIV cores,
//     workspace unused (0 bytes of user workspace).
#pragma once
#include <cstdint>

// Tiling keys (dtype of x, y, z).
#define VECTOR_AXPY_KEY_FLOAT 0
#define VECTOR_AXPY_KEY_HALF 1

struct VectorAxpyTilingData {
    uint32_t totalLength;    // elements in x, y and z
    uint32_t perCoreLength;  // elements per core (a multiple of 32 bytes' worth); the last
                             // used core takes what remains, cores past the end do nothing
    uint32_t tileLength;     // elements per pipeline tile (a multiple of 32 bytes' worth)
    float alpha;             // scale of x (rounded to the element type by the kernel)
};
