// Buffer layouts of the backward stages, in bytes: what BackwardCube::Init (backward_cube.h) and
// BackwardVector::Init (backward_vector.h) allocate, and what the host planner
// (op_host/common/tiling/backward_tiling.cpp) checks against the core's L1 / UB sizes. One definition
// for both, host-includable like forward_layout.h.
#pragma once
#include <cstdint>

#ifndef __aicore__  // host builds (tiling) include this header without the kernel headers
#define __aicore__
#endif

namespace AttentionCore {

// The cube stage's L1 for q-blocks of bq rows and key blocks of bk: Q, dO and Q_rope (bq x dp,
// bq x drp) and K, K_rope (bk x dp, bk x drp) `sets` times (tileSets: the steps in flight), one
// V (bk x dp), P and dS (bq x bk). drp = 0: no rope tiles.
struct BackwardCubeL1 {
    uint32_t q, dy, p, ds, k, v, qr, kr;
    __aicore__ inline uint64_t Total() const { return uint64_t(q) + dy + p + ds + k + v + qr + kr; }
};

__aicore__ inline BackwardCubeL1 BackwardCubeL1Layout(uint32_t bq, uint32_t bk, uint32_t dp, uint32_t drp,
                                                      uint32_t tBytes, uint32_t sets)
{
    BackwardCubeL1 l;
    l.q = sets * bq * dp * tBytes;
    l.dy = l.q;
    l.p = bq * bk * tBytes;
    l.ds = l.p;
    l.k = sets * bk * dp * tBytes;
    l.v = bk * dp * tBytes;
    l.qr = sets * bq * drp * tBytes;
    l.kr = sets * bk * drp * tBytes;
    return l;
}

// The vector stage's UB for r rows per vector core and key tiles of c keys: S, dP, the fp32
// scratch (fp32), P and dS (element size tBytes) of rowCells = max(r x c, 2 dp) (the D-term
// pass stages two rows of dO and O in S and casts them into the scratch), mask bytes of r x c, three 8-float statistics rows per
// row in two sets (the next step's load into one while a step reads the other), the alibi
// key-index row (c fp32; pse types 2/3), the dsink partial row (sinkPitch floats, twice, plus
// 32 scratch lanes) and the landing rows of the K/V prefetch (prefetchRows rows of dp
// elements; 0: none).
struct BackwardVectorUb {
    uint32_t s, dp, tmp, mask, pOut, dsOut, stats, alibi, sink, prefetch;
    uint32_t rowCells;
    __aicore__ inline uint64_t Total() const
    {
        return uint64_t(s) + dp + tmp + mask + pOut + dsOut + stats + alibi + sink + prefetch;
    }
};

__aicore__ inline BackwardVectorUb BackwardVectorUbLayout(uint32_t r, uint32_t c, uint32_t dp, uint32_t tBytes,
                                                          uint32_t sinkPitch, uint32_t prefetchRows = 0)
{
    BackwardVectorUb l;
    const uint32_t cells = r * c;
    l.rowCells = cells > 2 * dp ? cells : 2 * dp;
    l.s = l.rowCells * 4;
    l.dp = l.s;
    l.tmp = l.s;
    l.mask = cells;
    l.pOut = l.rowCells * tBytes;
    l.dsOut = l.pOut;
    l.stats = r * 32 * 3 * 2;
    l.alibi = c * 4;
    l.sink = (2 * sinkPitch + 32) * 4;
    l.prefetch = prefetchRows * dp * tBytes;
    return l;
}

}  // namespace AttentionCore
