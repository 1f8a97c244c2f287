// Workspace of the int8 x int8 decode core (int8 K/V kept in int8 up to the cube, digit rows:
// int8_digits.h; docs/performance.md "What bounds the int8-KV decode on A2"), in bytes: what the
// decode planner (op_host/common/tiling/decode_tiling.cpp, PlanInt8Digits) sizes into
// DecodeParams::digits and what the core's stages address. Host-includable like
// kv_ring_layout.h.
//
// A unit's G query rows go to the cube as 2G digit rows in rowsPad = AlignUp(2G, 16) rows (the
// cube's M fractal): the hi rows from row 0, the lo rows from rowsPad / 2 (not from G: a vector
// core's hi and lo rows are then two equal pieces rowsPad / 2 apart, and every hand-off of a key
// block — the P digits, the S and O products, which keep the row order — is one DMA per vector
// core; the rows between stay unread). So do each key block's P rows. Per core:
//   records  WS_SLOTS x (S slot: rowsPad x blockKv int32, the Q digits . K^T products; then
//            O slot: rowsPad x headDimAlign int32, the P digits . V products, every block;
//            NoQuant Fixpipes). A vector core loads the S of stream block g with the O of
//            block g - WS_SLOTS (the same slot, written before by the cube), and where
//            blockKv == headDimAlign its four pieces (S hi, S lo, O hi, O lo rows) are evenly
//            spaced: one DMA for both hand-offs (the DMA start is most of each).
//   P slots  WS_SLOTS x rowsPad x blockKv int8 (P digits in the cube's int8 Nz order)
//   the K/V ring: ringSlots (K, V) slot pairs of blockKv x headDimAlign int8 in Nz order (C0 =
//   32): half the bytes of the cast ring's fp16 slots; the vector cores fill it with the copied
//   ring's producer viewing each int8 row as headDim / 2 16-bit columns (the same bytes, the
//   same Nz order).
// and per (batch, KV head, head block) item of the core's units: the Q digit tile (rowsPad x
// headDimAlign int8, Nz) and the G row units (fp32), in the core's own region from its first
// item on (the query digits of a core's rows are written by its own vector cores).
#pragma once
#include <cstdint>
#include "decode_params.h"

namespace AttentionCore {

// Most query heads per KV head: the 2G digit rows' hand-offs cost 3 + 0.141 G bytes of L2 per int8
// K/V byte at D = 128 against the cast ring's 5 + 0.047 G (a gain up to G ~ 21).
constexpr uint32_t INT8_DIGIT_MAX_GROUP = 16;
constexpr uint32_t INT8_DIGIT_ROW_ALIGN = 16;  // the cube's M fractal
constexpr uint32_t INT8_DIGIT_C0 = 32;         // int8 columns per Nz fractal row (32 bytes)

struct Int8DigitSlots {
    uint64_t s, o, record, p, total;  // byte offsets in a core's slot region (S and O in record 0), record stride, size
};

__aicore__ inline uint32_t Int8DigitRows(uint32_t groupRows)
{
    return (2 * groupRows + INT8_DIGIT_ROW_ALIGN - 1) / INT8_DIGIT_ROW_ALIGN * INT8_DIGIT_ROW_ALIGN;
}

__aicore__ inline Int8DigitSlots Int8DigitSlotsLayout(uint32_t rowsPad, uint32_t blockKv, uint32_t headDimAlign)
{
    Int8DigitSlots l;
    l.s = 0;
    l.o = uint64_t(rowsPad) * blockKv * 4;
    l.record = l.o + uint64_t(rowsPad) * headDimAlign * 4;
    l.p = uint64_t(WS_SLOTS) * l.record;
    l.total = (l.p + uint64_t(WS_SLOTS) * rowsPad * blockKv + 511) / 512 * 512;
    return l;
}

// One item's query digits (Nz tile) and its row units behind them.
__aicore__ inline uint64_t Int8DigitQueryItemBytes(uint32_t rowsPad, uint32_t groupRows, uint32_t headDimAlign)
{
    return uint64_t(rowsPad) * headDimAlign + (uint64_t(groupRows) * 4 + 31) / 32 * 32;
}

// The vector side's UB of the digit hooks (Int8DigitStage) for `rows` rows per vector core in
// sub-blocks of `vecRows`, blockKv columns and headDimAlign dp, in bytes (host-includable
// arithmetic: the planner reserves it).
__aicore__ inline uint32_t Int8DigitStageUbBytes(uint32_t rows, uint32_t vecRows, uint32_t blockKv, uint32_t dp)
{
    const uint32_t sc = vecRows * blockKv;
    const uint32_t od = rows * dp;
    const uint32_t wide = sc > od ? sc : od;
    const uint32_t r8 = (rows + 7) / 8 * 8;
    const uint32_t v8 = (vecRows + 7) / 8 * 8;
    return 2 * (2 * sc * 4 + 2 * od * 4)      // two S product buffers (hi and lo rows; with O rows)
           + 2 * od * 4                       // the O products
           + 2 * wide * 4                     // two fp32 temporaries
           + (sc + v8 * 8) * 4                // the digits' work rows
           + sc * 4 + 2 * sc * 2 + 2 * sc     // hi, half and digit rows
           + (64 + v8 * 8 + 64 + 64) * 4      // inv, inv blocks, qsum, query unit stage
           + WS_SLOTS * r8 * 4                // the P units per slot
           + (INT8_DIGIT_MAX_GROUP * 8) * 4;  // the query units as Brcb blocks
}

// A ring slot pair (K, V) of int8 rows.
__aicore__ inline uint64_t Int8DigitRingPairBytes(uint32_t blockKv, uint32_t headDimAlign)
{
    return 2ull * blockKv * headDimAlign;
}

// The K/V ring producer's view of an int8 x int8 plan (on a copy of the tiling): the copied
// (16-bit) ring of headDim / 2 columns over the same bytes, every int8 element count and stride
// halved (the planner checks them even), the producer's chunk and copies from the digits plan,
// and no cast (antiquant 0: the value antiquant stays with the core's own finish). Taken after
// a tensor list's per-batch strides are set. The planner plans the producer on the same view
// of the problem (decode_tiling.cpp PlanInt8Digits).
__aicore__ inline void Int8DigitRingView(DecodeTiling &v)
{
    ForwardParams &p = v.params;
    DecodeParams &d = v.decode;
    p.headDim /= 2;
    p.headDimAlign /= 2;
    p.kvStrideB /= 2;
    p.kvStrideN /= 2;
    p.kvStrideS /= 2;
    d.pageStride /= 2;
    d.pageHeadStride /= 2;
    d.antiquant = 0;
    d.antiPerChannel = 0;
    d.antiTableHeads = 0;
    d.ring = 1;
    d.ringChunkElems = d.digits.ringChunkElems;
    d.ringInCopies = d.digits.ringInCopies;
    d.ringOutCopies = d.digits.ringOutCopies;
    d.ringByTensor = d.digits.ringByTensor;
    d.ringOffset = d.digits.ringOffset;
    d.ringCoreBytes = d.digits.ringCoreBytes;
}

}  // namespace AttentionCore
