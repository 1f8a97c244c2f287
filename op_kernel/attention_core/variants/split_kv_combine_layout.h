// Buffers of the split-KV combine (split_kv_combine.h), in bytes: the partial rows the units
// store in the workspace and the combine pass's UB. What StorePartialOutput and
// KvSplitCombiner::Run use, and what the decode planner (op_host/common/tiling/decode_tiling.cpp)
// sizes the workspace with and checks against UB. One definition for both, host-includable like
// kv_antiquant_layout.h.
#pragma once
#include <cstdint>
#include "decode_params.h"

namespace AttentionCore {

// Output rows merged at once by the combine pass.
constexpr uint32_t COMBINE_ROWS = 16;

// Partials of rowsAll = kvSplits x combineRows rows (index i = (s * B + b) * N + n), fp32, from
// DecodeParams::wsPartialOffset: the O rows (headDimAlign each), then m[i], then l[i].
struct PartialRows {
    uint64_t o, m, l, total;
};

__aicore__ inline PartialRows PartialRowsLayout(uint32_t kvSplits, uint64_t combineRows, uint32_t headDimAlign)
{
    const uint64_t rowsAll = uint64_t(kvSplits) * combineRows;
    PartialRows l;
    l.o = 0;
    l.m = rowsAll * headDimAlign * 4;
    l.l = l.m + rowsAll * 4;
    l.total = l.l + rowsAll * 4;
    return l;
}

// The combine pass's UB for COMBINE_ROWS rows of dp (headDimAlign) elements: the fp32
// accumulator and partial, the output rows (tBytes), the per-split statistics (m and l of every
// split, then M, w, denom, 1/denom and the valid flags), the broadcast rows; with INT8 output
// the scale and offset rows, the int8 rows and one parameter row's staging.
struct CombineUb {
    uint32_t acc, part, out, stat, bcast, qScale, qOffset, int8, qStage;
    __aicore__ inline uint64_t Total() const
    {
        return uint64_t(acc) + part + out + stat + bcast + qScale + qOffset + int8 + qStage;
    }
};

__aicore__ inline CombineUb CombineUbLayout(uint32_t kvSplits, uint32_t dp, uint32_t tBytes, bool quantOut)
{
    CombineUb l;
    l.acc = COMBINE_ROWS * dp * 4;
    l.part = COMBINE_ROWS * dp * 4;
    l.out = COMBINE_ROWS * dp * tBytes;
    l.stat = (2 * kvSplits + 5) * COMBINE_ROWS * 4;
    l.bcast = COMBINE_ROWS * 32;
    l.qScale = quantOut ? COMBINE_ROWS * dp * 4 : 0;
    l.qOffset = l.qScale;
    l.int8 = quantOut ? COMBINE_ROWS * dp : 0;
    l.qStage = quantOut ? dp * 2 : 0;
    return l;
}

}  // namespace AttentionCore
