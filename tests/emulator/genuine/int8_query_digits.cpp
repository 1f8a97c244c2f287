// The int8 x int8 decode core's query stage (attention_core/variants/int8_query_digits.h) on one
// AIV core, with the decode tiling the host wrote: each (batch, KV head, head block) item of the
// core's units becomes its query digit tile (Nz) and row units in the core's region.
#include "kernel_operator.h"
#include "../../../op_kernel/attention_core/variants/int8_query_digits.h"

extern "C" __global__ __aicore__ void int8_query_digits(GM_ADDR query, GM_ADDR scale, GM_ADDR region, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    GET_TILING_DATA_WITH_STRUCT(AttentionCore::DecodeTiling, td, tiling);
    AttentionCore::QueryDigits<half> digits;
    digits.Run(td, query, scale, region, 0, 0, 1);
}
