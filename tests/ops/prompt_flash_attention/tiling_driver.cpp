// Test driver of the forward-core planning (op_host/common/tiling/forward_tiling.cpp), pure host
// code: reads one problem per line from stdin
//   B N Nkv Sq Skv D hasMask pre next ubBytes aicNum
// and prints one JSON object per line with the planned ForwardParams fields the tests check.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/tiling/forward_tiling.h"
#include "attention_core/forward/forward_layout.h"

int main()
{
    long long b, n, nkv, sq, skv, d, mask, pre, next, ub, aic;
    while (std::cin >> b >> n >> nkv >> sq >> skv >> d >> mask >> pre >> next >> ub >> aic) {
        fa_host::ForwardProblem prob;
        prob.batch = b;
        prob.numHeads = n;
        prob.numKvHeads = nkv;
        prob.seqQ = sq;
        prob.seqKv = skv;
        prob.headDim = d;
        prob.q = {uint64_t(n * sq * d), uint64_t(sq * d), uint64_t(d)};
        prob.kv = {uint64_t(nkv * skv * d), uint64_t(skv * d), uint64_t(d)};
        prob.out = prob.q;
        prob.hasMask = prob.bandActive = mask != 0;
        prob.mask = {0, 0, uint64_t(skv)};
        prob.preTokens = pre;
        prob.nextTokens = next;
        fa_host::CoreBudget budget;
        budget.aicNum = static_cast<uint32_t>(aic);
        budget.ub = static_cast<uint64_t>(ub);
        budget.l1 = 524032;
        budget.l0a = budget.l0b = 65536;
        budget.l0c = 131072;
        AttentionCore::PrefillTiling tiling;
        const AttentionCore::ForwardParams &p = tiling.params;
        const AttentionCore::MaskBandParams &m = tiling.mask;
        std::string why;
        std::vector<uint32_t> order;  // room as the PFA tiling's buffer gives it (UNITS_TABLE)
        const bool ok = fa_host::PlanForward(prob, budget, tiling, why, &order, 1u << 16);
        if (ok) {  // as the PFA tiling does (a scale that is no power of two: not in K)
            fa_host::PlanMaskSummary(tiling);
            const uint64_t keyBlocks = p.unitCount * ((uint64_t(p.seqKv) + p.blockKv - 1) / p.blockKv);
            fa_host::PlanKvNzValueOnly(tiling.params, uint64_t(p.batch) * p.numHeads, keyBlocks, prob.hasMask, false);
            fa_host::PlanKvNzChunk(tiling.params, prob.dtypeBytes);
        }
        std::printf("{\"ok\": %s, \"why\": \"%s\"", ok ? "true" : "false", why.c_str());
        if (ok) {
            std::printf(", \"blockQ\": %u, \"rowsPerVec\": %u, \"blockKv\": %u, \"dChunk\": %u, \"headDimAlign\": %u, "
                        "\"qBlocksPerHead\": %u, \"unitCount\": %llu, \"usedCores\": %u, \"wsBytesPerCore\": %llu, "
                        "\"workspace\": %llu, \"ubBytes\": %llu, \"l1Bytes\": %llu, \"lazyO\": %u, \"sChunk\": %u, "
                        "\"vecRows\": %u, \"vecSBufs\": %u, \"foldQBlocks\": %u, ",
                        p.blockQ, p.rowsPerVec, p.blockKv, p.dChunk, p.headDimAlign, p.qBlocksPerHead,
                        (unsigned long long)p.unitCount, p.usedCores, (unsigned long long)p.wsBytesPerCore,
                        (unsigned long long)fa_host::PrefillWorkspaceBytes(tiling),
                        (unsigned long long)fa_host::VectorUbBytes(p.rowsPerVec, p.vecRows, p.blockKv, p.headDimAlign,
                                                                   2, p.vecSBufs),
                        (unsigned long long)fa_host::CubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, 2), p.lazyO,
                        p.sChunk, p.vecRows, p.vecSBufs, p.foldQBlocks);
            std::printf("\"maskSummary\": %u, \"summaryCols\": %u, \"summaryPitch\": %u, \"wsMaskSummary\": %llu, ",
                        m.maskSummary, m.summaryCols, m.summaryPitch, (unsigned long long)m.wsMaskSummary);
            std::printf("\"kvNz\": %u, \"kvNzRows\": %u, \"kvNzChunk\": %u, \"kvNzOffset\": %llu, \"kvNzPairs\": %u, "
                        "\"kvPairFirst\": %u, \"l1PairBytes\": %llu, ",
                        p.kvNz, p.kvNzRows, p.kvNzChunk, (unsigned long long)p.kvNzOffset, p.kvNzPairs, p.kvPairFirst,
                        (unsigned long long)AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, 2,
                                                                              p.l1Bufs, p.kvNzPairs));
            std::printf("\"kvNzOwnRows\": %u, \"pvFirstCols\": %u, ", p.kvNzOwnRows, p.pvFirstCols);
            std::printf("\"kvNzLate\": %u, \"kvNzStageKeys\": %u, \"kvWideRows\": %u, ", p.kvNzLate, p.kvNzStageKeys,
                        p.kvWideRows);
            std::printf("\"kvRotateBlock\": %u, \"kvRotateCores\": %llu, ", p.kvRotateBlock,
                        (unsigned long long)p.kvRotateCores);
            std::printf("\"qNzUnits\": %u, \"qNzFirst\": %u, \"qNzChunk\": %u, \"qNzOffset\": %llu, ", p.qNzUnits,
                        p.qNzFirst, p.qNzChunk, (unsigned long long)p.qNzOffset);
            std::printf("\"l1Bufs\": %u, \"kvCacheTiles\": %u, \"kvCacheKeyTiles\": %u, \"kvCacheOneP\": %u, "
                        "\"l1CacheBytes\": %llu, ",
                        p.l1Bufs, p.kvCacheTiles, p.kvCacheKeyTiles, p.kvCacheOneP,
                        (unsigned long long)AttentionCore::ForwardCubeL1Bytes(p.blockQ, p.blockKv, p.headDimAlign, 2,
                                                                              p.l1Bufs, 0, p.kvCacheTiles,
                                                                              p.kvCacheKeyTiles, p.kvCacheOneP != 0));
            std::printf("\"tailSplits\": %u, \"tailPieceBlocks\": %u, \"tailPerCore\": %u, \"tailPieces\": %u, "
                        "\"tailCorePieces\": %u, "
                        "\"tailFirst\": %llu, \"wsPartialOffset\": %llu, ",
                        p.tailSplits, p.tailPieceBlocks, p.tailPerCore, p.tailPieces, p.tailCorePieces,
                        (unsigned long long)p.tailFirst, (unsigned long long)p.wsPartialOffset);
            std::printf("\"order\": [");
            for (size_t i = 0; i < order.size(); ++i) std::printf("%s%u", i ? ", " : "", order[i]);
            std::printf("], ");
            std::printf("\"starts\": [");
            for (uint32_t c = 0; c <= p.usedCores; ++c)
                std::printf("%s%llu", c ? ", " : "", (unsigned long long)p.coreUnitStart[c]);
            std::printf("]");
        }
        std::printf("}\n");
    }
    return 0;
}
