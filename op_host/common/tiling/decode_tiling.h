// Host planning of the decode (query S = 1) variant of the forward core: block sizes, the
// (batch, KV head, head block, KV split) work split over the AI cores, the combine rows of the
// vector cores and the workspace (docs/attention_core.md, "Decode"). A pure function of its
// arguments; IncreFlashAttention's tiling fills a DecodeProblem and calls PlanDecode.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../../../op_kernel/attention_core/variants/decode_params.h"
#include "forward_tiling.h"

namespace fa_host {

struct DecodeProblem {
    int64_t batch = 0, numHeads = 0, numKvHeads = 0, seqKv = 0, headDim = 0;
    uint32_t dtypeBytes = 2;
    Strides q, kv;  // query/output (batch, head) strides; contiguous K/V (batch, head, token)
    float scale = 1.0f;
    std::vector<int64_t> kvLengths;  // actual_seq_lengths (1 or B values), empty: S
    bool leftPadding = false;        // kv_padding_size given (window [S - pad - L, S - pad))
    // Paged cache: pageStride/pageHeadStride/kv.s describe the cache, maxBlocks the table width.
    bool paged = false;
    int64_t blockSize = 0, maxBlocks = 0;
    int64_t cacheBlocks = 0;  // blocknum of the cache: the kernel never follows a table entry outside it
    uint64_t pageStride = 0, pageHeadStride = 0;
    bool hasMask = false;
    uint64_t maskStrideB = 0;
    bool hasPse = false, pseBf16 = false;
    bool quantOut = false, quantPerChannel = false, hasQuantOffset = false, quantBf16 = false;  // INT8 output
    // INT8 K/V with antiquant_scale (and offset): per tensor or per channel (kv_antiquant.h)
    bool antiquant = false, antiPerChannel = false;
    bool dtypeBf16 = false;  // query dtype BF16 (the int8 cast goes through fp16 and fp32)
    // Plan the int8 x int8 core for int8 K/V where the shape qualifies (DecodeParams::digits;
    // Int8DigitsEligible); elsewhere int8 K/V run the cast ring.
    bool int8Digits = false;
    uint64_t pseStrideB = 0, pseStrideN = 0;
};

// Most KV splits of one (batch, KV head) row block.
constexpr uint32_t MAX_KV_SPLITS = AttentionCore::MAX_CORES;

bool PlanDecode(const DecodeProblem &prob, const CoreBudget &budget, AttentionCore::DecodeTiling &t, std::string &why);
uint64_t DecodeWorkspaceBytes(const AttentionCore::DecodeTiling &t);
// Whether the int8 x int8 core serves this int8 K/V problem on plan t (PlanDecode's blocks);
// `why` says why not.
bool Int8DigitsEligible(const DecodeProblem &prob, const AttentionCore::DecodeTiling &t, std::string &why);

}  // namespace fa_host
