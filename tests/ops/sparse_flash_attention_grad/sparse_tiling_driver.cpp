// Test driver of the sparse backward planning (PlanSparseBackward in
// op_host/sparse_flash_attention_grad/sparse_flash_attention_grad_tiling.cpp, linked from the
// CPU target's library): reads one problem per line from stdin
//   heads ropeDim topK blockSize sparseMode s1 s2 batch aicNum deterministic
// (BSND without lengths) and prints one JSON object per line with the planned fields the
// tests check.
#include <cstdio>
#include <iostream>
#include <string>

#include "sparse_flash_attention_grad/sparse_flash_attention_grad_tiling.h"

int main()
{
    long long heads, dr, topK, bs, mode, s1, s2, batch, aic, det;
    while (std::cin >> heads >> dr >> topK >> bs >> mode >> s1 >> s2 >> batch >> aic >> det) {
        fa_host::SparseBackwardProblem prob;
        prob.batch = static_cast<uint32_t>(batch);
        prob.heads = static_cast<uint32_t>(heads);
        prob.headDim = 512;
        prob.ropeDim = static_cast<uint32_t>(dr);
        prob.s1 = s1;
        prob.s2 = s2;
        prob.t1 = batch * s1;
        prob.t2 = batch * s2;
        prob.topK = static_cast<uint32_t>(topK);
        prob.blockSize = static_cast<uint32_t>(bs);
        prob.sparseMode = static_cast<uint32_t>(mode);
        prob.deterministic = det != 0;
        fa_host::SparseCoreBudget budget;
        budget.aicNum = static_cast<uint32_t>(aic);
        budget.ub = 196352;
        budget.l1 = 524032;
        budget.l0a = budget.l0b = 65536;
        budget.l0c = 131072;
        AttentionCore::SparseBackwardParams p;
        std::string why;
        const bool ok = fa_host::PlanSparseBackward(prob, budget, p, why);
        std::printf("{\"ok\": %s, \"why\": \"%s\"", ok ? "true" : "false", why.c_str());
        if (ok) {
            std::printf(", \"headsPad\": %u, \"blockKv\": %u, \"dqSegChunks\": %u, \"ringSlots\": %u, "
                        "\"dqPassCols\": %u, \"dqTiles\": %u, \"l0cTiles\": %u, \"l0cTileElems\": %u, "
                        "\"l0bElems\": %u, \"l0Copies\": %u, \"sortSelection\": %u, \"usedCores\": %u, "
                        "\"pairTokens\": %u, \"wsSlotBytesPerCore\": %llu, \"starts\": [",
                        p.headsPad, p.blockKv, p.dqSegChunks, p.ringSlots, p.dqPassCols, p.dqTiles, p.l0cTiles,
                        p.l0cTileElems, p.l0bElems, p.l0Copies, p.sortSelection, p.usedCores, p.pairTokens,
                        static_cast<unsigned long long>(p.wsSlotBytesPerCore));
            for (uint32_t c = 0; c <= p.usedCores; ++c) {
                std::printf("%s[%llu, %u]", c ? ", " : "", static_cast<unsigned long long>(p.coreTokenStart[c]),
                            p.coreChunkStart[c]);
            }
            std::printf("]");
        }
        std::printf("}\n");
    }
    return 0;
}
