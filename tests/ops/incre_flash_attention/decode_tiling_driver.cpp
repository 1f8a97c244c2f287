// Test driver of the decode planning (op_host/common/tiling/decode_tiling.cpp), pure host code: reads
// one problem per line from stdin
//   B N Nkv S D aicNum quantOut lengthCount [lengths...]
// (DECODE_DRIVER_INT8=1: int8 K/V per tensor; =2: with the int8 x int8 core asked for) and prints one JSON object per line with the planned fields the tests check.
#include <cstdlib>
#include <iostream>
#include <string>

#include "common/tiling/decode_tiling.h"
#include "attention_core/variants/int8_digit_layout.h"
#include "attention_core/variants/kv_ring_layout.h"

int main()
{
    long long b, n, nkv, s, d, aic, quant, count;
    while (std::cin >> b >> n >> nkv >> s >> d >> aic >> quant >> count) {
        fa_host::DecodeProblem prob;
        prob.batch = b;
        prob.numHeads = n;
        prob.numKvHeads = nkv;
        prob.seqKv = s;
        prob.headDim = d;
        prob.q = {uint64_t(n * d), uint64_t(d), uint64_t(n * d)};
        prob.kv = {uint64_t(nkv * s * d), uint64_t(s * d), uint64_t(d)};
        prob.quantOut = quant != 0;
        const char *int8 = std::getenv("DECODE_DRIVER_INT8");
        prob.antiquant = int8 != nullptr && int8[0] != '0';
        prob.int8Digits = int8 != nullptr && int8[0] == '2';
        for (long long i = 0; i < count; ++i) {
            long long len;
            std::cin >> len;
            prob.kvLengths.push_back(len);
        }
        fa_host::CoreBudget budget;
        budget.aicNum = static_cast<uint32_t>(aic);
        budget.ub = 196352;
        budget.l1 = 524288;
        budget.l0a = budget.l0b = 65536;
        budget.l0c = 131072;
        static AttentionCore::DecodeTiling t;
        std::string why;
        const bool ok = fa_host::PlanDecode(prob, budget, t, why);
        const auto &p = t.params;
        const auto &dp = t.decode;
        std::cout << "{\"ok\": " << (ok ? "true" : "false") << ", \"why\": \"" << why
                  << "\", \"rowsPerVec\": " << p.rowsPerVec << ", \"blockQ\": " << p.blockQ
                  << ", \"headBlocks\": " << p.qBlocksPerHead << ", \"headDimAlign\": " << p.headDimAlign
                  << ", \"kvSplits\": " << dp.kvSplits << ", \"kvChunk\": " << dp.kvChunk
                  << ", \"unitCount\": " << p.unitCount << ", \"usedCores\": " << p.usedCores
                  << ", \"combineRows\": " << dp.combineRows << ", \"workspace\": " << fa_host::DecodeWorkspaceBytes(t)
                  << ", \"coreBytes\": " << uint64_t(p.usedCores) * p.wsBytesPerCore << ", \"ring\": " << dp.ring
                  << ", \"ringOffset\": " << dp.ringOffset
                  << ", \"ringBytes\": " << uint64_t(p.usedCores) * dp.ringCoreBytes << ", \"ringCopies\": ["
                  << dp.ringInCopies << ", " << dp.ringOutCopies << "]"
                  << ", \"ringByTensor\": " << dp.ringByTensor << ", \"ringAhead\": " << dp.ringAhead
                  << ", \"ringStartExtra\": " << dp.ringStartExtra << ", \"kvPairCopies\": " << dp.kvPairCopies
                  << ", \"vecRows\": " << p.vecRows << ", \"vecSBufs\": " << p.vecSBufs << ", \"starts\": [";
        for (uint32_t c = 0; c <= p.usedCores; ++c) std::cout << (c ? ", " : "") << p.coreUnitStart[c];
        std::cout << "], \"combineStarts\": [";
        for (uint32_t v = 0; v <= 2 * p.usedCores; ++v) std::cout << (v ? ", " : "") << dp.combineRowStart[v];
        const auto &g = dp.digits;
        std::cout << "], \"digits\": {\"enabled\": " << g.enabled << ", \"rowsPad\": " << g.rowsPad
                  << ", \"ringChunkElems\": " << g.ringChunkElems << ", \"ringCopies\": [" << g.ringInCopies << ", "
                  << g.ringOutCopies << "], \"ringByTensor\": " << g.ringByTensor
                  << ", \"queryItemBytes\": " << g.queryItemBytes << ", \"queryOffset\": " << g.queryOffset
                  << ", \"queryCoreBytes\": " << g.queryCoreBytes << ", \"slotOffset\": " << g.slotOffset
                  << ", \"slotCoreBytes\": " << g.slotCoreBytes << ", \"ringOffset\": " << g.ringOffset
                  << ", \"ringCoreBytes\": " << g.ringCoreBytes << ", \"end\": " << g.end
                  << "}, \"blockKv\": " << p.blockKv << ", \"castRingCoreBytes\": " << dp.ringCoreBytes;
        // the kernel's view of the plan for the ring's producer (int8_digit_layout.h)
        static AttentionCore::DecodeTiling view;
        view = t;
        AttentionCore::Int8DigitRingView(view);
        std::cout << ", \"view\": {\"headDim\": " << view.params.headDim
                  << ", \"headDimAlign\": " << view.params.headDimAlign << ", \"kvStrides\": [" << view.params.kvStrideB
                  << ", " << view.params.kvStrideN << ", " << view.params.kvStrideS
                  << "], \"ringChunkElems\": " << view.decode.ringChunkElems
                  << ", \"ringByTensor\": " << view.decode.ringByTensor << ", \"antiquant\": " << view.decode.antiquant
                  << ", \"ringUb\": "
                  << AttentionCore::KvRingUbLayout(view.decode.ringChunkElems, view.params.headDim,
                                                   view.params.headDimAlign, 2, 2, false, false,
                                                   view.decode.ringInCopies, view.decode.ringOutCopies, 0)
                         .Total()
                  << "}";
        std::cout << "}" << std::endl;
    }
    return 0;
}
