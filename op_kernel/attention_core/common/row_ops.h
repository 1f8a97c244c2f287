// Row-broadcast helpers of every vector stage (forward, combine, both backwards): a per-row
// statistic held as one 8-float block per row (Brcb's layout, what the [.., 8] statistics
// tensors store) applied to every column of a row-major tile; and the two folds a row
// reduction is built of (forward_vector_softmax.h RowReduce).
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

enum class RowOp { Sub, Mul, Div };

// blocks[r] (8 floats) := v[r] for rows [0, rows).
__aicore__ inline void BroadcastRows(const AscendC::LocalTensor<float> &blocks, const AscendC::LocalTensor<float> &v,
                                     uint32_t rows)
{
    AscendC::Brcb(blocks, v, static_cast<uint8_t>((rows + 7) / 8), AscendC::BrcbRepeatParams(1, 8));
    AscendC::PipeBarrier<PIPE_V>();
}

// x[r][c] op= blocks[r] for rows [0, rows) and columns [0, cols) of rows `pitch` floats apart
// (pitch a multiple of 8, at most 2040): one repeat per row, 64 lanes per column group.
template <RowOp op>
__aicore__ inline void RowBroadcast(const AscendC::LocalTensor<float> &x, const AscendC::LocalTensor<float> &blocks,
                                    uint32_t rows, uint32_t cols, uint32_t pitch)
{
    const AscendC::BinaryRepeatParams rep(1, 1, 0, static_cast<uint8_t>(pitch / 8), static_cast<uint8_t>(pitch / 8), 1);
    for (uint32_t c0 = 0; c0 < cols; c0 += 64) {
        const uint64_t lanes = cols - c0 < 64 ? cols - c0 : 64;
        if constexpr (op == RowOp::Sub) {
            AscendC::Sub(x[c0], x[c0], blocks, lanes, static_cast<uint8_t>(rows), rep);
        } else if constexpr (op == RowOp::Mul) {
            AscendC::Mul(x[c0], x[c0], blocks, lanes, static_cast<uint8_t>(rows), rep);
        } else {
            AscendC::Div(x[c0], x[c0], blocks, lanes, static_cast<uint8_t>(rows), rep);
        }
    }
    AscendC::PipeBarrier<PIPE_V>();
}

// dst = max (or sum) of a and b.
template <bool isMax, class... Shape>
__aicore__ inline void Fold(const AscendC::LocalTensor<float> &dst, const AscendC::LocalTensor<float> &a,
                            const AscendC::LocalTensor<float> &b, Shape... shape)
{
    if constexpr (isMax) {
        AscendC::Max(dst, a, b, shape...);
    } else {
        AscendC::Add(dst, a, b, shape...);
    }
}

// dst[i] = max (or sum) of the 8 floats of block i of `repeats` repeats of 8 blocks, repeats
// `repPitch` blocks apart.
template <bool isMax>
__aicore__ inline void BlockReduce(const AscendC::LocalTensor<float> &dst, const AscendC::LocalTensor<float> &src,
                                   int32_t repeats, int32_t repPitch)
{
    if constexpr (isMax) {
        AscendC::BlockReduceMax(dst, src, repeats, 64, 1, 1, repPitch);
    } else {
        AscendC::BlockReduceSum(dst, src, repeats, 64, 1, 1, repPitch);
    }
}

}  // namespace AttentionCore
