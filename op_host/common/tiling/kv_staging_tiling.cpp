// The forward core's K/V staging and K/V cache plans (kv_staging_tiling.h).
#include "kv_staging_tiling.h"

#include "forward_tiling.h"
#include "../../../op_kernel/attention_core/forward/forward_layout.h"

#include <algorithm>
#include <cmath>

namespace fa_host {

namespace {

constexpr uint64_t KV_NZ_OWN_MAX_ROWS = 64;  // rows per chunk of a core's own K/V staging (kv_nz.h)
// A core's own K/V regions at most: each raises one cross-core flag its cube consumes, and the
// vector cores may stage them all before the cube reaches the first (keys few per region, or a
// unit without keys); the flag counter holds 15 unconsumed sets.
constexpr uint64_t KV_NZ_OWN_MAX_REGIONS = 15;

uint64_t AlignUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

// PlanKvNzOwn with the region of each unit (position in the unit order) from `region`.
template <class Region>
void PlanOwn(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes, const Region &region)
{
    // Own regions per core: those after its first, but the one it shares with the next core
    // (that core's first, staged before the barrier); a core's units visit its regions in order.
    uint64_t most = 0;
    for (uint32_t c = 0; c < p.usedCores; ++c) {
        const uint64_t b = p.coreUnitStart[c], e = p.coreUnitStart[c + 1];
        if (b >= e) continue;
        const uint64_t shared = e < p.unitCount ? region(e) : ~uint64_t(0);
        uint64_t own = 0;
        for (uint64_t u = b + 1; u < e; ++u) {
            const uint64_t r = region(u);
            if (r != region(u - 1) && r != shared) ++own;
        }
        most = std::max(most, own);
    }
    if (most == 0 || most > KV_NZ_OWN_MAX_REGIONS) return;
    p.kvNzOwnRows = KvNzChunkRows(p, dtypeBytes, ubBytes);
}

constexpr uint32_t OWN_ORDER_BITS = AttentionCore::UNITS_HEADS_INNER | AttentionCore::UNITS_TABLE |
                                    AttentionCore::UNITS_PAIRED | AttentionCore::UNITS_SHORT_LAST;

}  // namespace

bool ScaleInKeyExact(float scale, bool fp16, const AttentionCore::ForwardParams &p)
{
    // A power of two scales an fp16 K exactly (an fp16 product fits fp32, so the cube's fp32
    // sums are exactly the scaled ones): the vector cores' scale pass over every score goes
    // for one pass over K at staging. Up to 1 (no fp16 overflow) and from 2^-14 (the
    // scaled keys stay normal but for keys below 2^-11, whose products are below any score's
    // rounding).
    int exp = 0;
    const float mant = std::frexp(std::fabs(scale), &exp);
    const bool keyStaged = p.kvNz == AttentionCore::KV_NZ_BOTH || p.kvNz == AttentionCore::KV_NZ_K_ONLY;
    return fp16 && keyStaged && p.kvNzLate == 0 && p.kvNzStageKeys == 0 && mant == 0.5f && exp >= -13 && exp <= 1;
}

void PlanKvNzStageKeys(AttentionCore::ForwardParams &p, bool dense, bool wideRows)
{
    p.kvNzStageKeys = 0;
    if (!dense || p.kvNz != AttentionCore::KV_NZ_BOTH || p.kvNzPairs != 0 || p.kvNzOwnRows != 0 || p.kvNzLate != 0 ||
        p.tailSplits > 1 || p.kvNzBatches != p.batch || p.kvNzSeq != p.seqKv || p.kvCacheTiles == 0 || p.blockKv == 0) {
        return;
    }
    if ((p.foldQBlocks & ~AttentionCore::UNITS_FOLDED) != 0 || p.qBlocksPerHead == 0 || p.groupSize == 0) return;
    auto region = [&](uint64_t unit) {
        const uint64_t bn = unit / p.qBlocksPerHead;
        return bn / p.numHeads * p.numKvHeads + bn % p.numHeads / p.groupSize;
    };
    // A core's units of one region load its unstaged blocks in every other unit (the first, the
    // third, ...: the unit after each takes them from the cache): the loads of such a block,
    // summed over the cores of its region.
    uint64_t loads = 0, last = ~uint64_t(0);
    for (uint32_t c = 0; c < p.usedCores; ++c) {
        const uint64_t begin = p.coreUnitStart[c], end = p.coreUnitStart[c + 1];
        if (begin >= end) continue;
        const uint64_t r = region(begin);
        if (r != region(end - 1)) return;
        loads = (r == last ? loads : 0) + (end - begin + 1) / 2;
        last = r;
        if (loads > KV_NZ_UNSTAGED_MAX_LOADS) return;
    }
    const uint64_t blocks = (uint64_t(p.seqKv) + p.blockKv - 1) / p.blockKv;
    if (blocks <= p.kvCacheTiles) return;
    const uint64_t staged = wideRows ? std::min<uint64_t>(blocks - p.kvCacheTiles, blocks / KV_NZ_WIDE_STAGED_DIV)
                                     : blocks - p.kvCacheTiles;
    p.kvNzStageKeys = static_cast<uint32_t>(staged * p.blockKv);
}

void PlanKvRotation(AttentionCore::ForwardParams &p)
{
    p.kvRotateBlock = 0;
    p.kvRotateCores = 0;
    if (p.kvWideRows == 0 || p.kvNzStageKeys == 0 || p.foldQBlocks != 0 || p.usedCores > 64 || p.blockKv == 0 ||
        p.qBlocksPerHead == 0 || p.groupSize == 0) {
        return;
    }
    const uint64_t blocks = p.seqKv / p.blockKv, staged = p.kvNzStageKeys / p.blockKv;
    if (staged < 2 || blocks < staged + 4) return;
    auto region = [&](uint64_t unit) {
        const uint64_t bn = unit / p.qBlocksPerHead;
        return bn / p.numHeads * p.numKvHeads + bn % p.numHeads / p.groupSize;
    };
    auto rows = [&](uint64_t unit) {
        const uint64_t q0 = unit % p.qBlocksPerHead * p.blockQ;
        return std::min<uint64_t>(p.blockQ, p.seqQ - q0);
    };
    // Per run of cores on one region (PlanKvNzStageKeys: every core's units are of one region),
    // the last of the cores with the fewest rows, where some core of the run has more.
    uint64_t cores = 0;
    for (uint32_t c = 0; c < p.usedCores;) {
        const uint64_t r = region(p.coreUnitStart[c]);
        uint64_t most = 0, least = ~uint64_t(0);
        uint32_t slack = c, e = c;
        for (; e < p.usedCores && p.coreUnitStart[e] < p.coreUnitStart[e + 1] && region(p.coreUnitStart[e]) == r; ++e) {
            uint64_t sum = 0;
            for (uint64_t u = p.coreUnitStart[e]; u < p.coreUnitStart[e + 1]; ++u) sum += rows(u);
            most = std::max(most, sum);
            if (sum <= least) {
                least = sum;
                slack = e;
            }
        }
        if (e == c) return;  // a core without units
        if (least < most) cores |= uint64_t(1) << slack;
        c = e;
    }
    if (cores == 0) return;
    p.kvRotateBlock = static_cast<uint32_t>(staged + (blocks - staged) / 2);
    p.kvRotateCores = cores;
}

void PlanKvNz(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t seqRows, uint32_t batches,
              uint64_t l1Bytes, bool stageV)
{
    p.kvNz = 0;
    p.kvNzPairs = 0;
    const uint64_t dp = p.headDimAlign;
    // Loads of each K/V row: one per q-block of every query head of its group. The estimate
    // counts every q-block (a causal mask about halves it) and staging pays off from about two
    // real loads, so it is planned from four; bounded by the Nz copies' 16-bit strides (in
    // 32-byte rows) and by a workspace of at most KV_NZ_MAX_BYTES.
    const uint64_t reuse = uint64_t(p.groupSize) * p.unitCount / std::max<uint64_t>(1, uint64_t(p.numHeads) * batches);
    const uint64_t rows = AlignUp(seqRows, 16) + 16;
    const AttentionCore::ForwardVectorUb ub = AttentionCore::ForwardVectorUbLayout(
        p.rowsPerVec, p.vecRows, p.blockKv, p.headDimAlign, dtypeBytes, p.vecSBufs);
    // Two copies of a chunk in each of the accumulator and tmp (kv_nz.h's staging pass; PlanKvNzChunk
    // may take larger chunks through the S buffers).
    const uint64_t chunk = std::min<uint64_t>(240, std::min(ub.acc, ub.tmp) / 2 / (dp * dtypeBytes)) / 16 * 16;
    const uint64_t bytes = 2 * uint64_t(p.numKvHeads) * batches * dp * rows * dtypeBytes;
    if (dtypeBytes != 2 || p.headDim % 16 != 0 || reuse < 4 || rows > 65535 || chunk < 16 || bytes > KV_NZ_MAX_BYTES) {
        return;
    }
    p.kvNz = stageV ? AttentionCore::KV_NZ_BOTH : AttentionCore::KV_NZ_K_ONLY;
    p.kvNzChunk = static_cast<uint32_t>(chunk);
    p.kvNzRows = static_cast<uint32_t>(rows);
    p.kvNzSeq = static_cast<uint32_t>(seqRows);
    p.kvNzBatches = batches;
    p.kvNzOffset = AlignUp(uint64_t(p.usedCores) * p.wsBytesPerCore, 512);
    // K and V of a key block in one copy (one DMA start less per block on the cube's MTE2) where
    // lazy P.V leaves L1 room for WS_SLOTS pairs (a pair lives from the block's S to its P.V), for
    // 64-key blocks only: there the DMA starts weigh twice as much per score (modelled D = 256 B1
    // N4 S4K 359.2 -> 336.6 us); with 128-key blocks S then goes after P.V and waits for P
    // (modelled B4 N16 S1K D128 182.3 -> 196.1 us, and 187.2 with S ahead of P.V).
    p.kvNzPairs = stageV && p.lazyO != 0 && p.blockKv < FORWARD_BLOCK_KV &&
                          AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, dtypeBytes, p.l1Bufs,
                                                            AttentionCore::WS_SLOTS) <= l1Bytes
                      ? AttentionCore::WS_SLOTS
                      : 0;
}

void PlanKvNzOwn(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes)
{
    p.kvNzOwnRows = 0;
    p.kvNzOwnPerBatch = 0;
    if (p.kvNz == 0 || p.tailSplits > 1 || (p.foldQBlocks & OWN_ORDER_BITS) != 0 || p.qBlocksPerHead == 0 ||
        (p.kvNzBatches != p.batch && p.batch != 1) || p.usedCores < 2) {
        return;
    }
    // A unit's region (kv_nz.h UnitRegion): units run (batch, head, q-block), q-blocks permuted
    // within their head only.
    PlanOwn(p, dtypeBytes, ubBytes, [&](uint64_t unit) {
        const uint64_t head = unit / p.qBlocksPerHead;
        return (head / p.numHeads) * p.numKvHeads + head % p.numHeads / p.groupSize;
    });
}

void PlanKvNzOwnTnd(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes,
                    const std::vector<int64_t> &seqQ, const std::vector<int64_t> &seqKv)
{
    p.kvNzOwnRows = 0;
    p.kvNzOwnPerBatch = 0;
    if (p.kvNz == 0 || p.kvNzBatches != 1 || (p.foldQBlocks & OWN_ORDER_BITS) != 0 || p.usedCores < 2 ||
        seqQ.size() != seqKv.size() || seqKv.empty()) {
        return;
    }
    // The units (batch, head, q-block), ceil(Sq_b / blockQ) q-blocks per head (varlen_policies.h);
    // a region per (batch, KV head). Every batch has queries and keys, and every batch but the last
    // a multiple of 16 keys: a key block's pad rows then never reach the next batch's rows.
    std::vector<uint64_t> unitRegion;
    for (size_t b = 0; b < seqQ.size(); ++b) {
        if (seqQ[b] <= 0 || seqKv[b] <= 0 || (b + 1 < seqKv.size() && seqKv[b] % 16 != 0)) return;
        const uint64_t qBlocks = (uint64_t(seqQ[b]) + p.blockQ - 1) / p.blockQ;
        for (uint64_t n = 0; n < p.numHeads; ++n) {
            unitRegion.insert(unitRegion.end(), qBlocks, b * p.numKvHeads + n / p.groupSize);
        }
    }
    if (unitRegion.size() != p.unitCount) return;
    PlanOwn(p, dtypeBytes, ubBytes, [&](uint64_t unit) { return unitRegion[unit]; });
    p.kvNzOwnPerBatch = p.kvNzOwnRows != 0 ? 1 : 0;
}

void PlanKvNzChunk(AttentionCore::ForwardParams &p, uint32_t dtypeBytes)
{
    if (p.kvNz == 0 || p.kvNzOwnRows != 0 || p.kvNzLate != 0 || p.usedCores == 0) return;
    // The pass's bytes per vector core (every region before the barrier: no per-core or late staging).
    const uint64_t tensors = p.kvNz == AttentionCore::KV_NZ_BOTH ? 2 : 1;
    const uint64_t bytes = tensors * p.numKvHeads * p.kvNzBatches * uint64_t(p.kvNzRows) * p.headDimAlign * dtypeBytes;
    if (bytes / (2ull * p.usedCores) < KV_NZ_LONG_PASS_BYTES) return;
    const AttentionCore::ForwardVectorUb ub = AttentionCore::ForwardVectorUbLayout(
        p.rowsPerVec, p.vecRows, p.blockKv, p.headDimAlign, dtypeBytes, p.vecSBufs);
    const uint64_t chunk =
        std::min<uint64_t>(240, AttentionCore::KvStagingBytes(ub) / 2 / (uint64_t(p.headDimAlign) * dtypeBytes)) / 16 *
        16;
    if (chunk > p.kvNzChunk) p.kvNzChunk = static_cast<uint32_t>(chunk);
}

void PlanVAbsMax(AttentionCore::ForwardParams &p, bool fp16, uint32_t batches, uint64_t tokens, uint64_t ubBytes,
                 bool kOnlyPass)
{
    p.vAbsMaxElems = 0;
    p.vAbsMaxChunk = 0;
    // K alone staged before a SyncAll (the scale on K, no per-core, late or Q staging): the
    // staging's flag id is free after that barrier, so the pass's meeting may take it
    // (forward_vector.h VLoop); elsewhere nothing may be staged.
    const bool kOnly =
        kOnlyPass && p.kvNz == AttentionCore::KV_NZ_K_ONLY && p.kvNzOwnRows == 0 && p.kvNzLate == 0 && p.qNzUnits == 0;
    if (!fp16 || p.lazyO == 0 || p.headDim > V_ABS_MAX_MAX_HEAD_DIM || (p.kvNz != 0 && !kOnly) || batches == 0 ||
        tokens == 0 || p.numKvHeads == 0 || p.usedCores == 0) {
        return;
    }
    // The chunk: the UB past the vector stage's buffers, the running max taken off, whole
    // 256-byte repeats; it also holds ReadVMax's floats (forward_vector.h VLoop).
    constexpr uint32_t dtypeBytes = 2;
    const uint64_t used = VectorUbBytes(p.rowsPerVec, p.vecRows, p.blockKv, p.headDimAlign, dtypeBytes, p.vecSBufs,
                                        p.hasSoftmaxStats != 0);
    const uint64_t scratch = AttentionCore::V_ABS_MAX_SCRATCH * dtypeBytes;
    const uint64_t free = ubBytes > used + scratch ? ubBytes - used - scratch : 0;
    const uint64_t chunk = std::min<uint64_t>(V_ABS_MAX_CHUNK, free / dtypeBytes) / 128 * 128;
    if (chunk < 128 || chunk * dtypeBytes < (17ull * p.usedCores + 128) * 4) return;
    p.vAbsMaxChunk = static_cast<uint32_t>(chunk);
    // one past the last element of V (any dense layout): the rows of every (batch, KV head)
    p.vAbsMaxElems = uint64_t(batches - 1) * p.kvStrideB + uint64_t(p.numKvHeads - 1) * p.kvStrideN +
                     (tokens - 1) * p.kvStrideS + p.headDim;
}

void DropKvNz(AttentionCore::ForwardParams &p)
{
    p.kvNz = 0;
    p.kvNzPairs = 0;
    p.kvNzChunk = 0;
    p.kvNzRows = 0;
    p.kvNzSeq = 0;
    p.kvNzBatches = 0;
    p.kvNzOffset = 0;
}

// Rows per chunk of the staging in the vector cores' main loop (per core, late or Q; kv_nz.h
// BufStart): the most, up to KV_NZ_OWN_MAX_ROWS, of which three chunks and the zero rows' source
// (KV_NZ_ZERO_ROWS rows of 16 elements) fit beside the vector stage's buffers (forward_vector.h
// ownBuf_); 0 where not 16.
uint32_t KvNzChunkRows(const AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes)
{
    const uint64_t used = VectorUbBytes(p.rowsPerVec, p.vecRows, p.blockKv, p.headDimAlign, dtypeBytes, p.vecSBufs,
                                        p.hasSoftmaxStats != 0);
    const uint64_t zeros = AttentionCore::KV_NZ_ZERO_ROWS * 16 * dtypeBytes;
    const uint64_t free = ubBytes > used + zeros ? ubBytes - used - zeros : 0;
    const uint64_t rows = std::min<uint64_t>(KV_NZ_OWN_MAX_ROWS, free / (3 * p.headDimAlign * dtypeBytes)) / 16 * 16;
    return rows >= 16 ? static_cast<uint32_t>(rows) : 0;
}

void PlanKvNzLate(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t ubBytes, bool dense)
{
    p.kvNzLate = 0;
    const uint64_t blocks = p.blockKv == 0 ? 0 : (uint64_t(p.seqKv) + p.blockKv - 1) / p.blockKv;
    if (p.kvNz != AttentionCore::KV_NZ_BOTH || p.kvNzPairs == 0 || p.kvNzOwnRows != 0 || !dense ||
        blocks < KV_NZ_LATE_MIN_BLOCKS || p.usedCores == 0) {
        return;
    }
    // Each vector core's share of the pass (K and V rows of every region) against the keys a
    // first unit streams (dense: all of them): the pass costs a vector core ~0.25-0.3 us per 16
    // rows (D = 256, from HBM), a first unit from the caller's rows ~0.31 us more per 64-key block
    // (two Nd2Nz copies in place of the staged pair), so the late pass pays from about 0.3 staged
    // rows per key; taken from 0.5 (KV_NZ_LATE_KEYS_PER_ROW). Modelled D = 256: B2 N8 S2K (0.67)
    // 319.3 -> 310.9 us; slower B1 N4 S4K (0.17) 288.7 -> 302.5, B1 N1 S8K (0.05) 277.5 -> 316.8.
    const uint64_t share = 2 * uint64_t(p.numKvHeads) * p.kvNzBatches * p.kvNzRows / (2 * uint64_t(p.usedCores));
    if (share * KV_NZ_LATE_KEYS_PER_ROW < p.seqKv) {
        return;
    }
    p.kvNzLate = KvNzChunkRows(p, dtypeBytes, ubBytes);
}

void PlanKvCache(AttentionCore::ForwardParams &p, uint32_t dtypeBytes, uint64_t l1Bytes, bool oneCopy, bool unstaged,
                 bool oneP)
{
    // The K/V tiles L1 holds beside Q and P (forward_cube.h's cache; policies.h PlanKvReuse): a
    // unit that follows one of the same head whose keys its own start with (a causal head's
    // later q-block) takes the blocks still there first and loads none of them again. Staged
    // K/V apart under lazy P.V only (the pairs fill L1 already).
    p.kvCacheTiles = 0;
    p.kvCacheKeyTiles = 0;
    p.kvCacheOneP = 0;
    if ((p.kvNz == 0 && !unstaged) || p.lazyO == 0 || p.kvNzPairs != 0) return;
    auto most = [&](uint32_t bufs) {
        uint32_t tiles = 0;
        for (uint32_t t = p.l1Bufs + 1; t <= AttentionCore::KV_CACHE_MAX_TILES; ++t) {
            if (AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, dtypeBytes, bufs, 0, t) >
                l1Bytes)
                break;
            tiles = t;
        }
        return tiles;
    };
    p.kvCacheTiles = most(p.l1Bufs);
    // One copy of Q and P (l1Bufs 1: the next unit's Q no longer loads ahead, P's load waits for
    // the MTE1 read of the one before) where that frees L1 for another K/V tile pair.
    if (oneCopy && p.l1Bufs == 2 && p.kvCacheTiles != 0 && most(1) > p.kvCacheTiles) {
        p.l1Bufs = 1;
        p.kvCacheTiles = most(1);
    }
    // One K tile more where L1 has room for it but not for a pair: each unit after one of its
    // head then loads one K block less (PlanKvReuse runs that many cached blocks first).
    p.kvCacheKeyTiles = p.kvCacheTiles;
    if (p.kvCacheTiles != 0 && p.kvCacheTiles < AttentionCore::KV_CACHE_MAX_TILES &&
        AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, dtypeBytes, p.l1Bufs, 0, p.kvCacheTiles,
                                          p.kvCacheTiles + 1) <= l1Bytes) {
        p.kvCacheKeyTiles = p.kvCacheTiles + 1;
    }
    // Else, with oneP, one P copy for that K tile beside two Q copies: the next unit's Q still
    // loads ahead (one Q copy is what slows the one-copy plan's unit starts; one P copy alone
    // models no slower: B4 N16 S1K 152.9 us with one Q and P copy, 152.8 with one Q copy).
    const uint32_t t = p.kvCacheTiles;
    if (oneP && p.l1Bufs == 2 && t != 0 && p.kvCacheKeyTiles == t && t < AttentionCore::KV_CACHE_MAX_TILES &&
        AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, dtypeBytes, 2, 0, t, t + 1, true) <=
            l1Bytes) {
        p.kvCacheKeyTiles = t + 1;
        p.kvCacheOneP = 1;
    }
}

void PlanKvNzValueOnly(AttentionCore::ForwardParams &p, uint64_t headRuns, uint64_t keyBlocks, bool masked,
                       bool scaleInKey)
{
    if (p.kvNz != AttentionCore::KV_NZ_BOTH || p.kvNzPairs != 0 || masked || scaleInKey || headRuns == 0 ||
        p.unitCount == 0 || keyBlocks == 0) {
        return;
    }
    // A head's q-blocks run on one core in a row (the split's ranges), and each one after the
    // first finds kvCacheTiles of its key blocks cached (PlanKvReuse); the group's query heads
    // each load the rows again. Modelled: B4 N16 S1K (2.9 loads per row) 157.8 -> 156.8 us, TND
    // 6 x 1K 241.6 -> 237.3; slower with more loads per row, B1 N8 S1K x 4K (5.1) 79.2 -> 82.4 us,
    // B2 N8 S2K (7.9) 148.8 -> 152.1 (docs/performance.md "Sweep").
    const double qBlocks = double(p.unitCount) / double(headRuns);
    const double blocks = double(keyBlocks) / double(p.unitCount);
    const double uncached = blocks > p.kvCacheTiles ? (blocks - p.kvCacheTiles) / blocks : 0.0;
    const double loads = double(p.groupSize) * (1.0 + (qBlocks - 1.0) * uncached);
    if (loads <= KV_NZ_VALUE_ONLY_MAX_LOADS) p.kvNz = AttentionCore::KV_NZ_V_ONLY;
}

}  // namespace fa_host
