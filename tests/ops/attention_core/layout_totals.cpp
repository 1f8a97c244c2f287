// What each stage of an operator's kernel should allocate, from the host-includable layout
// headers its stages' Init and its planner share (forward_layout.h, backward_layout.h,
// kv_ring_layout.h, split_kv_combine_layout.h, sparse_backward_layout.h), given the tiling data
// of a launch:
//     layout_totals <op> <tiling key>  < tiling bytes
// prints {"UB": ..., "L1": ..., "L0A": ..., "L0B": ..., "L0C": ...} in bytes per core: the
// largest phase of the launch for each buffer; a buffer no layout header describes is left out.
// "modes" names the layout choices the tiling made (lazy P.V, buffer copies, sub-blocks, ...),
// so the test can tell that its shapes cover each.
// The test compares it with the emulator's per-launch peak (test_buffer_peaks.py).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "flash_attention_score/flash_attention_score_tiling_data.h"
#include "flash_attention_score_grad/flash_attention_score_grad_tiling_data.h"
#include "incre_flash_attention/incre_flash_attention_tiling_data.h"
#include "prompt_flash_attention/prompt_flash_attention_tiling_data.h"
#include "sparse_flash_attention_grad/sparse_flash_attention_grad_tiling_data.h"
#include "attention_core/backward/backward_layout.h"
#include "attention_core/forward/forward_layout.h"
#include "attention_core/sparse_backward/sparse_backward_layout.h"
#include "attention_core/variants/kv_ring_layout.h"
#include "attention_core/variants/split_kv_combine_layout.h"

namespace {
using namespace AttentionCore;
using Totals = std::map<std::string, uint64_t>;
std::map<std::string, uint64_t> g_modes;

void Max(Totals &t, const char *buf, uint64_t bytes)
{
    if (bytes > t[buf]) t[buf] = bytes;
}

// The dtype key of a forward tiling key: 0 fp16, 1 bf16, 2 fp32 (ForwardTilingKey).
uint32_t ElementBytes(uint64_t key) { return key % 10 == 2 ? 4 : 2; }
bool LazyPv(uint64_t key) { return key / 10 % 10 == 1; }
// The staged K/V's pair copies (ForwardCube::Init: lazy P.V and K/V staged only).
uint32_t KvNzPairs(const ForwardParams &p, uint64_t key)
{
    return LazyPv(key) && key / 1000 % 10 == 1 ? p.kvNzPairs : 0;
}

// ForwardCube::Init and ForwardVector::Init (forward_cube.h, forward_vector.h) on `p`.
void Forward(Totals &t, const ForwardParams &p, uint32_t tBytes, bool lazy, uint64_t extraUb = 0, uint32_t kvPairs = 0)
{
    const uint32_t r = p.rowsPerVec;
    const uint32_t v = p.vecRows != 0 && p.vecRows < r ? p.vecRows : r;
    const uint32_t sBufs = p.vecSBufs == 2 ? 2 : 1;
    // the max|V| pass's chunk and running max (forward_vector.h VLoop: fp16, lazy P.V, nothing staged)
    const bool vPass = lazy && tBytes == 2 && p.kvNz == 0 && p.vAbsMaxElems != 0;
    Max(t, "UB",
        ForwardVectorUbLayout(r, v, p.blockKv, p.headDimAlign, tBytes, sBufs, p.hasSoftmaxStats != 0).Total() +
            extraUb + (vPass ? VAbsMaxUbBytes(p.vAbsMaxChunk, tBytes) : 0));
    // the K/V cache's tiles: lazy P.V with K and V apart only
    const uint32_t kvCache = lazy && kvPairs == 0 ? p.kvCacheTiles : 0;
    Max(t, "L1",
        ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, tBytes, p.l1Bufs == 2 ? 2 : 1, kvPairs, kvCache,
                           kvCache != 0 ? p.kvCacheKeyTiles : 0, kvCache != 0 && p.kvCacheOneP != 0));
    const ForwardCubeL0 l0 = ForwardCubeL0Layout(p.blockQ, p.blockKv, p.headDimAlign, p.dChunk, tBytes,
                                                 p.l0Bufs == 2 ? 2 : 1, lazy ? p.sChunk : 0);
    Max(t, "L0A", l0.a);
    Max(t, "L0B", l0.b);
    Max(t, "L0C", l0.c);
    g_modes["lazyPv"] = lazy;
    g_modes["l1Bufs"] = p.l1Bufs == 2 ? 2 : 1;
    g_modes["l0Bufs"] = p.l0Bufs == 2 ? 2 : 1;
    g_modes["sBufs"] = sBufs;
    g_modes["subBlocks"] = v < r;
}

// BackwardCube::Init and BackwardVector::Init (backward_cube.h, backward_vector.h): L1 and UB.
void Backward(Totals &t, const BackwardParams &p, uint32_t tBytes)
{
    const BackwardVectorUb ub = BackwardVectorUbLayout(p.rowsPerVec, p.tileKv, p.headDimAlign, tBytes,
                                                       static_cast<uint32_t>(p.dsinkPitch), p.prefetchRows);
    const bool alibi = p.hasPse != 0 && p.pseType >= 2;  // the key-index row only for pse types 2/3
    Max(t, "UB", ub.Total() - (alibi ? 0 : ub.alibi));
    Max(t, "L1",
        BackwardCubeL1Layout(p.blockQ, p.blockKv, p.headDimAlign, p.ropeDim != 0 ? p.ropeDimAlign : 0, tBytes,
                             p.tileSets)
            .Total());
    g_modes["tileSets"] = p.tileSets;
    g_modes["rope"] = p.ropeDim != 0;
    g_modes["alibi"] = alibi;
    g_modes["sink"] = p.hasSink != 0;
    g_modes["prefetch"] = p.prefetchRows != 0;
}

// SparseBackwardCube::Init and SparseBackwardVector::Init (sparse_backward_cube.h, _vector.h).
void SparseBackward(Totals &t, const SparseBackwardParams &p, uint32_t tBytes)
{
    Max(t, "L1", SparseBackwardCubeL1Layout(p.headsPad, p.blockKv, p.qkDim, p.headDim, tBytes).Total());
    const SparseCubeL0 l0 = SparseBackwardCubeL0Layout(p.l0Copies, p.l0aElems, p.l0bElems, p.l0cTiles, p.l0cTileElems,
                                                       p.dqTiles, p.headsPad, p.dqPassCols, tBytes);
    Max(t, "L0A", l0.a);
    Max(t, "L0B", l0.b);
    Max(t, "L0C", l0.c);
    Max(t, "UB",
        SparseBackwardVectorUbLayout(
            p.rowsPerVec, p.blockKv, p.qkDim, p.headDim, tBytes, p.sortSelection != 0, p.sortPad,
            SparseIndexRowBytes(p.index64 != 0, p.pairTokens != 0, p.topK, p.sortPad), p.gatherSpanBytes)
            .Total());
    g_modes["sort"] = p.sortSelection != 0;
    g_modes["index64"] = p.index64 != 0;
    g_modes["pairTokens"] = p.pairTokens != 0;
    g_modes["rope"] = p.qkDim != p.headDim;
    g_modes["l0Copies"] = p.l0Copies;
}

template <class Tiling> bool Read(const std::vector<char> &bytes, Tiling &out)
{
    // the struct is a prefix: FA varlen may append its unit table (UNITS_TABLE) after it
    if (bytes.size() < sizeof(Tiling)) {
        std::fprintf(stderr, "tiling data of %zu bytes, expected at least %zu\n", bytes.size(), sizeof(Tiling));
        return false;
    }
    std::memcpy(&out, bytes.data(), sizeof(Tiling));
    return true;
}
}  // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: layout_totals <op> <tiling key> < tiling data\n");
        return 2;
    }
    const std::string op = argv[1];
    const uint64_t key = std::stoull(argv[2]);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    Totals t;
    if (op == "prompt_flash_attention") {
        static PromptFlashAttentionTilingData d;
        if (!Read(bytes, d)) return 1;
        Forward(t, d.params, ElementBytes(key), LazyPv(key), 0, KvNzPairs(d.params, key));
    } else if (op == "flash_attention_score") {
        static FlashAttentionScoreTilingData d;
        if (!Read(bytes, d)) return 1;
        Forward(t, d.params, ElementBytes(key), LazyPv(key), 0, KvNzPairs(d.params, key));
    } else if (op == "incre_flash_attention") {
        static IncreFlashAttentionTilingData d;
        if (!Read(bytes, d)) return 1;
        const uint32_t tBytes = ElementBytes(key);
        const bool int8 = d.decode.antiquant != 0;
        const uint64_t ring =
            d.decode.ring == 0 ? 0
                               : KvRingUbLayout(d.decode.ringChunkElems, d.params.headDim, d.params.headDimAlign,
                                                tBytes, int8 ? 1 : tBytes, int8 && key % 10 == 1, int8,
                                                d.decode.ringInCopies, d.decode.ringOutCopies, d.decode.antiTableHeads)
                                     .Total();
        Forward(t, d.params, tBytes, LazyPv(key), ring, d.decode.kvPairCopies);
        if (d.decode.kvSplits > 1 || d.decode.quantOut != 0) {  // the combine pass, after the core
            Max(t, "UB",
                CombineUbLayout(d.decode.kvSplits, d.params.headDimAlign, tBytes, d.decode.quantOut != 0, int8)
                    .Total());
        }
        g_modes["antiquant"] = int8;
        g_modes["ring"] = d.decode.ring;
        g_modes["kvPairs"] = d.decode.kvPairCopies != 0;
        g_modes["antiTable"] = d.decode.antiTableHeads != 0;
        g_modes["split"] = d.decode.kvSplits > 1;
        g_modes["quantOut"] = d.decode.quantOut != 0;
    } else if (op == "flash_attention_score_grad") {
        static FlashAttentionScoreGradTilingData d;
        if (!Read(bytes, d)) return 1;
        if (d.recompute != 0) Forward(t, d.forward.params, ElementBytes(key), LazyPv(key));
        Backward(t, d.params, ElementBytes(key));
        g_modes["recompute"] = d.recompute != 0;
        if (d.recompute != 0) {  // the backward's L0 has no layout header: the forward's alone says nothing
            t.erase("L0A");
            t.erase("L0B");
            t.erase("L0C");
        }
    } else if (op == "sparse_flash_attention_grad") {
        static SparseFlashAttentionGradTilingData d;
        if (!Read(bytes, d)) return 1;
        SparseBackward(t, d.params, ElementBytes(key));
    } else {
        std::fprintf(stderr, "no layout header for %s\n", op.c_str());
        return 1;
    }
    g_modes["elementBytes"] = ElementBytes(key);
    std::printf("{");
    for (const auto &kv : t)
        std::printf("\"%s\": %llu, ", kv.first.c_str(), static_cast<unsigned long long>(kv.second));
    std::printf("\"modes\": {");
    const char *sep = "";
    for (const auto &kv : g_modes) {
        std::printf("%s\"%s\": %llu", sep, kv.first.c_str(), static_cast<unsigned long long>(kv.second));
        sep = ", ";
    }
    std::printf("}}\n");
    return 0;
}
