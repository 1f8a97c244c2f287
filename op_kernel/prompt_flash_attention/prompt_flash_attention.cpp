// aclnnPromptFlashAttention kernel entry: the shared forward core with the prefill variant
// (q-block split, strided layouts, scale, mask tensor + band, plain softmax). The tiling key
// selects the dtype, the P.V mode, whether the mask goes through the mask summary and whether
// K/V are staged in Nz order.
#include "kernel_operator.h"
#include "../attention_core/forward/forward_kernel.h"
#include "../attention_core/variants/split_kv_combine.h"
#include "prompt_flash_attention_tiling_data.h"

template <class MaskTag>
using PromptVariant = AttentionCore::ForwardVariant<AttentionCore::SplitQBlocks, AttentionCore::KvStrided,
                                                    AttentionCore::ScoreScale, MaskTag, AttentionCore::SoftmaxPlain>;
using Plain = PromptVariant<AttentionCore::MaskTensorBand>;
using Summary = PromptVariant<AttentionCore::MaskTensorBandSummary>;

// The forward core, then (split-KV tail: ForwardParams::tailSplits) the vector cores' combine
// pass over the split units' pieces.
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ>
__aicore__ inline void RunPrompt(const PromptFlashAttentionTilingData &tiling,
                                 const AttentionCore::ForwardTensors<Plain> &t)
{
    AttentionCore::RunForward<T, Variant, LAZY_PV, KV_NZ>(tiling, t);
    if ASCEND_IS_AIV {
        if (tiling.params.tailSplits > 1) {
            AttentionCore::WorkSplit<AttentionCore::SplitQBlocks> split;
            split.Init(tiling, t);
            AttentionCore::KvSplitCombiner<T> combine;
            combine.RunTail(tiling.params, split, t);
        }
    }
}

extern "C" __global__ __aicore__ void prompt_flash_attention(GM_ADDR query, GM_ADDR key, GM_ADDR value,
                                                             GM_ADDR pse_shift, GM_ADDR atten_mask,
                                                             GM_ADDR actual_seq_lengths, GM_ADDR attention_out,
                                                             GM_ADDR workspace, GM_ADDR tiling)
{
    (void)pse_shift;  // reserved by the spec: the V1 API always passes nullptr
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(PromptFlashAttentionTilingData, tilingData, tiling);
    AttentionCore::ForwardTensors<Plain> tensors;  // Summary's tensors are the same
    tensors.query = query;
    tensors.key = key;
    tensors.value = value;
    tensors.out = attention_out;
    tensors.workspace = AscendC::GetUserWorkspace(workspace);
    tensors.split.actualSeqLengths = actual_seq_lengths;
    tensors.split.unitOrder = tiling + PFA_UNIT_ORDER_OFFSET;
    tensors.mask.mask = atten_mask;
    if (TILING_KEY_IS(PFA_TILING_KEY_FP16)) {
        RunPrompt<half, Plain, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY)) {
        RunPrompt<half, Plain, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_SUMMARY)) {
        RunPrompt<half, Summary, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY_SUMMARY)) {
        RunPrompt<half, Summary, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_KV_NZ)) {
        RunPrompt<half, Plain, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY_KV_NZ)) {
        RunPrompt<half, Plain, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_SUMMARY_KV_NZ)) {
        RunPrompt<half, Summary, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_FP16_LAZY_SUMMARY_KV_NZ)) {
        RunPrompt<half, Summary, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16)) {
        RunPrompt<bfloat16_t, Plain, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY)) {
        RunPrompt<bfloat16_t, Plain, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_SUMMARY)) {
        RunPrompt<bfloat16_t, Summary, false, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY_SUMMARY)) {
        RunPrompt<bfloat16_t, Summary, true, false>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_KV_NZ)) {
        RunPrompt<bfloat16_t, Plain, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY_KV_NZ)) {
        RunPrompt<bfloat16_t, Plain, true, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_SUMMARY_KV_NZ)) {
        RunPrompt<bfloat16_t, Summary, false, true>(tilingData, tensors);
    } else if (TILING_KEY_IS(PFA_TILING_KEY_BF16_LAZY_SUMMARY_KV_NZ)) {
        RunPrompt<bfloat16_t, Summary, true, true>(tilingData, tensors);
    }
}
