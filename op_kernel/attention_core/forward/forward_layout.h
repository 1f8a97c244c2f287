// Buffer layouts of the forward stages, in bytes: what ForwardCube::Init (forward_cube.h) and
// ForwardVector::Init (forward_vector.h) allocate, and what the host planner
// (op_host/common/tiling/forward_tiling.cpp) checks against the core's UB / L1 / L0 sizes. One
// definition for both, host-includable like sparse_mode.h.
#pragma once
#include <cstdint>
#include "forward_params.h"

namespace AttentionCore {

// Statistics rows of a vector core: mNew, rowTmp, inv, then per workspace slot alpha and, per
// unit in flight, the reference max, sum and true max.
constexpr uint32_t VEC_STAT_ROWS = 3 + 4 * WS_SLOTS;
// Rows per vector core up to which the O-slot rows load at once (ForwardVectorUb::partRows).
constexpr uint32_t PART_WHOLE_ROWS = 16;

// The vector stage's UB for r rows per vector core in sub-blocks of v rows (S, tmp, P and the
// mask bytes hold one sub-block; the O accumulator, O-slot rows, statistics and broadcast
// rows all r), blockKv c, head dim dp (aligned), element size tBytes and sBufs S buffers;
// stats: the softmax statistics are reported (ForwardParams::hasSoftmaxStats).
struct ForwardVectorUb {
    uint32_t s, tmp, p, mask, acc, part, stats, bcast;
    // Rows of O per O-slot load: up to 16 rows all at once (a decode unit's final P.V sum in one
    // load, not two on its finish's path), else half with two S buffers or sub-blocks.
    uint32_t partRows;
    __aicore__ inline uint64_t Total() const { return uint64_t(s) + tmp + p + mask + acc + part + stats + bcast; }
};

__aicore__ inline ForwardVectorUb ForwardVectorUbLayout(uint32_t r, uint32_t v, uint32_t c, uint32_t dp,
                                                        uint32_t tBytes, uint32_t sBufs, bool stats = false)
{
    ForwardVectorUb l;
    const uint32_t sBytes = v * c * 4;
    l.s = sBufs * sBytes;
    // With sub-blocks (v < r: the wide band's rows) tmp holds a whole number of 16-row groups: the
    // K/V staging before the loop takes two chunks of a multiple of 16 rows from it, and r = 56 at
    // D = 256 left 16-row chunks (32 with 64 rows; modelled causal B1 N4 S4K D256 161.9 -> 159.8 us).
    // Not without sub-blocks: dense B1 N4 S4K D256 272.2 -> 272.7, B2 N8 S2K D256 283.8 -> 297.8
    // (presumably the late staging's own chunks, sized from the free UB, lose the 4 KB).
    const uint32_t tRows = v < r ? (r + 15) / 16 * 16 : r;
    l.tmp = sBytes > tRows * dp * tBytes ? sBytes : tRows * dp * tBytes;
    l.p = v * c * tBytes;  // P out; also the pse (T) and mask (half) scratch
    l.mask = v * c;
    l.acc = r * dp * 4;
    l.partRows = r <= PART_WHOLE_ROWS || (sBufs != 2 && v >= r) ? r : (r + 1) / 2;
    l.part = l.partRows * dp * 4;
    if (stats) {
        // Also the finish's cast output rows and statistics (8 copies per row each), stored from
        // there while the next unit's softmax runs (forward_vector_output.h StoreRows).
        const uint32_t finish = r * dp * tBytes + 2 * ((r + 7) / 8 * 8) * 32;
        l.part = l.part > finish ? l.part : finish;
    }
    l.stats = (r + 7) / 8 * 8 * 4 * VEC_STAT_ROWS;
    l.bcast = r * 32;
    return l;
}

// The K/V staging pass's scratch (kv_nz.h Prepare): it runs before the main loop, when no
// buffer of the stage holds data yet, with the caller's rows in the accumulator and their Nz
// copies in the S buffers where those are larger than tmp (two S buffers of 48-row sub-blocks
// at D = 128: 96-row chunks, not 48); each holds two chunks. A chunk's DMA start (~198 cycles)
// is paid once per chunk on the pass's loads and stores alike.
__aicore__ inline bool KvStagingInS(const ForwardVectorUb &l) { return l.s > l.tmp; }
__aicore__ inline uint32_t KvStagingBytes(const ForwardVectorUb &l)
{
    const uint32_t nz = KvStagingInS(l) ? l.s : l.tmp;
    return l.acc < nz ? l.acc : nz;
}

// The max|V| pass in the main loop (ForwardParams::vAbsMaxChunk; v_abs_max.h, forward_vector.h
// VLoop): UB beside the stage's buffers for a chunk of `chunk` elements and the running max
// (V_ABS_MAX_SCRATCH of them); 0 without the pass.
constexpr uint32_t V_ABS_MAX_SCRATCH = 256;
__aicore__ inline uint64_t VAbsMaxUbBytes(uint32_t chunk, uint32_t tBytes)
{
    return chunk == 0 ? 0 : (uint64_t(chunk) + V_ABS_MAX_SCRATCH) * tBytes;
}

// A core's forward workspace (ForwardParams::wsBytesPerCore), in byte offsets: WS_SLOTS S
// slots, WS_SLOTS P slots, O_SLOTS O slots, the control lines, then the zero fractal.
struct ForwardWorkspace {
    uint64_t p, o, ctrl, zero, total;
};

__aicore__ inline ForwardWorkspace ForwardWorkspaceLayout(uint64_t slotS, uint64_t slotP, uint64_t slotO)
{
    ForwardWorkspace w;
    w.p = WS_SLOTS * slotS;
    w.o = w.p + WS_SLOTS * slotP;
    w.ctrl = w.o + O_SLOTS * slotO;
    w.zero = w.ctrl + CTRL_LINES * CTRL_LINE_WORDS * 4;
    w.total = w.zero + ZERO_FRACTAL_BYTES;
    return w;
}

// Most tiles of each of K and V the cube's K/V cache holds (ForwardParams::kvCacheTiles). L1
// holds ten beside two copies of 224-row q-blocks' Q and P at D = 64, thirteen beside one (five
// at D = 128): each more saves a key block's loads per unit that follows one of its head
// (modelled D = 64 B4 N8 S2K 257.9 -> 254.1 us with ten against eight, 252.8 -> 251.5 with
// thirteen against twelve); the cube's lookup walks every tag once per block.
constexpr uint32_t KV_CACHE_MAX_TILES = 16;

// The cube stage's L1 for q-blocks of bq rows: Q, P, K and V per copy (l1Bufs), or with
// kvCache K/V cache tiles (ForwardParams::kvCacheTiles) kvCache K and kvCache V tiles, K's
// kvCacheKey where that is more (ForwardParams::kvCacheKeyTiles), one P copy beside the Q copies
// with oneP (ForwardParams::kvCacheOneP); with kvPairs K/V pair copies
// (KvSourceBase::KvPairCopies): Q per copy, one P, the pairs; and the zero fractal
// (ZERO_FRACTAL_BYTES).
__aicore__ inline uint64_t ForwardCubeL1Bytes(uint32_t bq, uint32_t c, uint32_t dp, uint32_t tBytes, uint32_t l1Bufs,
                                              uint32_t kvPairs = 0, uint32_t kvCache = 0, uint32_t kvCacheKey = 0,
                                              bool oneP = false)
{
    if (kvPairs != 0) {
        return (uint64_t(l1Bufs) * bq * dp + uint64_t(bq) * c + 2ull * kvPairs * c * dp) * tBytes + ZERO_FRACTAL_BYTES;
    }
    const uint64_t vTiles = kvCache != 0 ? kvCache : l1Bufs;
    const uint64_t kTiles = kvCacheKey > vTiles ? kvCacheKey : vTiles;
    const uint64_t pCopies = oneP ? 1 : l1Bufs;
    return (uint64_t(l1Bufs) * bq * dp + pCopies * bq * c + (kTiles + vTiles) * c * dp) * tBytes + ZERO_FRACTAL_BYTES;
}

// Lazy P.V's rows of P per L0A pass (forward_cube_pv.h AccumulatePV): the whole q-block up to
// PV_WHOLE_MAX_ROWS, above it two row parts (the first PvPartRows rows, a multiple of 16), each
// with its own accumulator in L0C. P of a whole 224-row q-block, 128 keys wide, fills L0A beside
// the Q chunks at D = 64; in two parts the q-block is held by L0C alone (384 rows at D = 64:
// the accumulator and two 32-row S chunks), and each K/V load serves that many more rows.
constexpr uint32_t PV_WHOLE_MAX_ROWS = 240;
__aicore__ inline uint32_t PvPartRows(uint32_t bq)
{
    return bq <= PV_WHOLE_MAX_ROWS ? bq : ((bq + 1) / 2 + 15) / 16 * 16;
}

// The cube stage's L0A / L0B / L0C. Per-block P.V: l0Bufs copies of a bq x max(dChunk, c)
// operand / result and a c x dChunk operand. Lazy P.V (sChunk != 0): regions L0A = [P part
// (PvPartRows) | Q chunk x 2], L0B = [K^T | V], L0C = [accumulator bq x dp | S chunk x 2].
struct ForwardCubeL0 {
    uint64_t a, b, c;
};

__aicore__ inline ForwardCubeL0 ForwardCubeL0Layout(uint32_t bq, uint32_t c, uint32_t dp, uint32_t dChunk,
                                                    uint32_t tBytes, uint32_t l0Bufs, uint32_t sChunk)
{
    ForwardCubeL0 l;
    if (sChunk != 0) {
        l.a = (uint64_t(PvPartRows(bq)) * c + 2ull * sChunk * dChunk) * tBytes;
        l.b = 2ull * c * dChunk * tBytes;
        l.c = (uint64_t(bq) * dp + 2ull * sChunk * c) * 4;
        return l;
    }
    const uint64_t wide = dChunk > c ? dChunk : c;
    l.a = uint64_t(l0Bufs) * bq * wide * tBytes;
    l.b = uint64_t(l0Bufs) * c * dChunk * tBytes;
    l.c = uint64_t(l0Bufs) * bq * wide * 4;
    return l;
}

}  // namespace AttentionCore
