// Buffers of the split-KV combine (split_kv_combine.h), in bytes: the partial rows the units
// store in the workspace and the combine pass's UB. What StorePartialOutput and
// KvSplitCombiner::Run use, and what the decode planner (op_host/common/tiling/decode_tiling.cpp)
// sizes the workspace with and checks against UB. One definition for both, host-includable like
// kv_antiquant_layout.h.
#pragma once
#include <cstdint>
#include "decode_params.h"

namespace AttentionCore {

// Output rows merged at once by the combine pass (at most; the statistics' pitch), and the UB
// its partial rows may take: fewer rows when every split's rows would not fit, and the splits
// read by one strided copy.
constexpr uint32_t COMBINE_ROWS = 16;
constexpr uint32_t COMBINE_PART_BYTES = 64 * 1024;

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

// The combine pass's UB for `rows` output rows at once (COMBINE_ROWS, or fewer when every
// split's partial rows would not fit COMBINE_PART_BYTES) of dp (headDimAlign) elements: the fp32
// accumulator, the partial rows of `splitsPerCopy` splits (one strided copy), the output rows
// (tBytes), the per-split statistics (m, l and a folding copy of every split, then 1/denom and
// the valid flags, COMBINE_ROWS apart), every split's weights broadcast to blocks;
// with INT8 output the scale and offset rows, the int8 rows and one parameter row's staging;
// with INT8 K/V (antiquant) one KV head's value scale and shift rows (fp32) and their staging
// row (tBytes).
struct CombineUb {
    uint32_t rows, splitsPerCopy;
    uint32_t acc, part, out, stat, bcast, qScale, qOffset, int8, qStage, anti;
    __aicore__ inline uint64_t Total() const
    {
        return uint64_t(acc) + part + out + stat + bcast + qScale + qOffset + int8 + qStage + anti;
    }
};

__aicore__ inline CombineUb CombineUbLayout(uint32_t kvSplits, uint32_t dp, uint32_t tBytes, bool quantOut,
                                            bool antiquant = false)
{
    CombineUb l;
    const uint32_t rowBytes = dp * 4;
    const uint32_t splits = kvSplits == 0 ? 1 : kvSplits;
    l.rows = COMBINE_PART_BYTES / (splits * rowBytes);
    l.rows = l.rows == 0 ? 1 : (l.rows > COMBINE_ROWS ? COMBINE_ROWS : l.rows);
    l.splitsPerCopy = COMBINE_PART_BYTES / (l.rows * rowBytes);
    l.splitsPerCopy = l.splitsPerCopy == 0 ? 1 : (l.splitsPerCopy > splits ? splits : l.splitsPerCopy);
    l.acc = l.rows * rowBytes;
    l.part = l.splitsPerCopy * l.rows * rowBytes;
    l.out = l.rows * dp * tBytes;
    l.stat = (3 * splits + 2) * COMBINE_ROWS * 4;
    l.bcast = splits * COMBINE_ROWS * 32;
    l.qScale = quantOut ? l.rows * rowBytes : 0;
    l.qOffset = l.qScale;
    l.int8 = quantOut ? l.rows * dp : 0;
    l.qStage = quantOut ? dp * 2 : 0;
    l.anti = antiquant ? (2 * dp * 4 + (dp * tBytes + 31) / 32 * 32) : 0;
    return l;
}

}  // namespace AttentionCore
