// UB layout of the int8 K/V producer (KvSource<KvDecodeInt8<T>>::StreamInit, kv_antiquant.h), in
// bytes: what it allocates next to the forward vector stage, and what the decode planner
// (op_host/common/tiling/decode_tiling.cpp) reserves before it fits the stage into the rest of UB. One
// definition for both, host-includable like forward_layout.h.
#pragma once
#include <cstdint>
#include "decode_params.h"

namespace AttentionCore {

// Cast chunks of up to chunkElems int8 elements in whole rows (rowElems = headDim rounded up
// to 32: int8 rows start on 32-byte blocks, at least one row): ANTI_IN_COPIES int8 copies,
// ANTI_OUT_COPIES copies in the query dtype (tBytes), for bf16 the fp16 and fp32 cast stages,
// and the value scale / shift rows (three fp32 rows and one in the query dtype, headDimAlign).
struct AntiquantUb {
    uint32_t in, out, half, flt, value;
    uint32_t rowElems, chunkRows;
    __aicore__ inline uint64_t Total() const { return uint64_t(in) + out + half + flt + value; }
};

__aicore__ inline AntiquantUb AntiquantUbLayout(uint32_t chunkElems, uint32_t headDim, uint32_t headDimAlign,
                                                uint32_t tBytes, bool bf16)
{
    AntiquantUb l;
    l.rowElems = (headDim + 31) / 32 * 32;
    l.chunkRows = chunkElems / l.rowElems;
    l.chunkRows = l.chunkRows == 0 ? 1 : l.chunkRows;
    const uint32_t elems = l.chunkRows * l.rowElems;
    l.in = ANTI_IN_COPIES * elems;
    l.out = ANTI_OUT_COPIES * elems * tBytes;
    l.half = bf16 ? elems * 2 : 0;
    l.flt = bf16 ? elems * 4 : 0;
    l.value = 3 * headDimAlign * 4 + headDimAlign * tBytes;
    return l;
}

}  // namespace AttentionCore
