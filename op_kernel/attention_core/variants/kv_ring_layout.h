// UB layout of the decode K/V ring's producer (KvRingSource::StreamInit, kv_ring.h; the int8
// source's value rows, kv_antiquant.h), in bytes: what it allocates next to the forward vector
// stage, and what the decode planner (op_host/common/tiling/decode_tiling.cpp) reserves before it
// fits the stage into the rest of UB. One definition for both, host-includable like
// forward_layout.h.
#pragma once
#include <cstdint>
#include "decode_params.h"

namespace AttentionCore {

// Chunks of up to chunkElems cache elements in whole rows (rowElems: the cache row rounded up
// to 32 bytes, at least headDimAlign; at least one row, at most one key block): inCopies copies
// of cache rows (srcBytes per element), outCopies copies of Nz rows in the query
// dtype (tBytes, headDimAlign columns); int8 (cast): one cast row staging (tBytes), for bf16 the
// fp16 and fp32 cast stages, and the value scale / shift rows (three fp32 rows and one in the
// query dtype, headDimAlign) with tableHeads KV heads' value scale and offset rows (query dtype,
// DecodeParams::antiTableHeads).
constexpr uint32_t ANTI_TABLE_MAX_BYTES = 16384;  // the value antiquant rows kept in UB, at most
struct KvRingUb {
    uint32_t in, nd, out, half, flt, value;
    uint32_t rowElems, chunkRows;
    __aicore__ inline uint64_t Total() const { return uint64_t(in) + nd + out + half + flt + value; }
};

__aicore__ inline KvRingUb KvRingUbLayout(uint32_t chunkElems, uint32_t headDim, uint32_t headDimAlign, uint32_t tBytes,
                                          uint32_t srcBytes, bool bf16Stages, bool cast, uint32_t inCopies,
                                          uint32_t outCopies, uint32_t tableHeads)
{
    KvRingUb l;
    const uint32_t perBlock = 32 / srcBytes;
    l.rowElems = (headDim + perBlock - 1) / perBlock * perBlock;
    l.rowElems = l.rowElems > headDimAlign ? l.rowElems : headDimAlign;
    l.chunkRows = chunkElems / l.rowElems;
    l.chunkRows = l.chunkRows == 0 ? 1 : (l.chunkRows > KV_RING_MAX_CHUNK_ROWS ? KV_RING_MAX_CHUNK_ROWS : l.chunkRows);
    const uint32_t elems = l.chunkRows * l.rowElems;
    l.in = inCopies * elems * srcBytes;
    l.nd = cast ? elems * tBytes : 0;
    l.out = outCopies * l.chunkRows * headDimAlign * tBytes;
    l.half = bf16Stages ? elems * 2 : 0;
    l.flt = bf16Stages ? elems * 4 : 0;
    l.value = cast ? 3 * headDimAlign * 4 + (1 + 2 * tableHeads) * headDimAlign * tBytes : 0;
    return l;
}

}  // namespace AttentionCore
