// Test driver of the backward-core planning (op_host/common/tiling/backward_tiling.cpp), pure host
// code: reads one problem per line from stdin
//   D Dr N Nkv sparseMode hasMask ubBytes aicNum B sq_0 .. sq_B-1 skv_0 .. skv_B-1
// and prints one JSON object per line with the planned BackwardParams fields the tests check.
#include <cstdio>
#include <iostream>
#include <string>

#include "common/tiling/backward_tiling.h"

int main()
{
    long long d, dr, n, nkv, mode, mask, ub, aic, batch;
    while (std::cin >> d >> dr >> n >> nkv >> mode >> mask >> ub >> aic >> batch) {
        fa_host::BackwardProblem prob;
        prob.numHeads = n;
        prob.numKvHeads = nkv;
        prob.headDim = d;
        prob.ropeDim = dr;
        prob.sparseMode = mode;
        prob.hasMask = mask != 0;
        prob.preTokens = prob.nextTokens = 2147483647;
        long long sum = 0, v = 0;
        for (long long b = 0; b < batch; ++b) {
            std::cin >> v;
            prob.cumQ.push_back(sum += v);
        }
        prob.tq = sum;
        sum = 0;
        for (long long b = 0; b < batch; ++b) {
            std::cin >> v;
            prob.cumKv.push_back(sum += v);
        }
        prob.tkv = sum;
        fa_host::CoreBudget budget;
        budget.aicNum = static_cast<uint32_t>(aic);
        budget.ub = static_cast<uint64_t>(ub);
        budget.l1 = 524032;
        budget.l0a = budget.l0b = 65536;
        budget.l0c = 131072;
        AttentionCore::BackwardParams p;
        std::string why;
        const bool ok = fa_host::PlanBackward(prob, budget, p, why);
        std::printf("{\"ok\": %s, \"why\": \"%s\"", ok ? "true" : "false", why.c_str());
        if (ok) {
            std::printf(", \"blockKv\": %u, \"tileKv\": %u, \"accumKv\": %u, \"resElems\": %u, \"slots\": %u, "
                        "\"l0Bufs\": %u, \"tileSets\": %u, \"earlySteps\": %u",
                        p.blockKv, p.tileKv, p.accumKv, p.resElems, p.slots, p.l0Bufs, p.tileSets, p.earlySteps);
            std::printf(", \"blockQ\": %u, \"rowsPerVec\": %u, \"pipelined\": %u, \"qSplit\": %u, \"unitCount\": %llu, "
                        "\"usedCores\": %u, \"workspace\": %llu, \"wsSlots\": %llu, \"ubBytes\": %llu, "
                        "\"l1Bytes\": %llu, \"starts\": [",
                        p.blockQ, p.rowsPerVec, p.pipelined, p.qSplit, (unsigned long long)p.unitCount, p.usedCores,
                        (unsigned long long)fa_host::BackwardWorkspaceBytes(p), (unsigned long long)p.wsSlots,
                        (unsigned long long)fa_host::BackwardUbBytes(p.rowsPerVec, p.tileKv, p.headDimAlign, 2),
                        (unsigned long long)fa_host::BackwardL1Bytes(p.blockQ, p.blockKv, p.headDimAlign,
                                                                     p.ropeDimAlign, 2, p.tileSets));
            for (uint32_t c = 0; c <= p.usedCores; ++c) {
                std::printf("%s%llu", c ? ", " : "", (unsigned long long)p.coreUnitStart[c]);
            }
            std::printf("], \"stepStarts\": [");
            for (uint32_t c = 0; c <= p.usedCores; ++c) {
                std::printf("%s%u", c ? ", " : "", p.coreStepStart[c]);
            }
            std::printf("], \"dqGroupCast\": %u, \"dqCast\": [", p.dqGroupCast);
            for (uint32_t c = 0; c < p.usedCores; ++c) {
                std::printf("%s[%llu, %llu]", c ? ", " : "", (unsigned long long)p.dqCastLo[c],
                            (unsigned long long)p.dqCastHi[c]);
            }
            std::printf("], \"dqTailRows\": [");
            for (uint32_t c = 0; c < p.usedCores; ++c) {
                std::printf("%s%llu", c ? ", " : "", (unsigned long long)p.dqTailRows[c]);
            }
            std::printf("]");
        }
        std::printf("}\n");
    }
    return 0;
}
