// Genuine-style kernel for the row folds of the decode core's digit helpers (int8_digits.h) at
// every column count they take (multiples of 64): one vector core, 8 rows of `cols` floats
// (cols from the config word), x >= 0 as P is. Writes the units of Int8DigitUnits with and
// without nonNegative (its first fold reads x itself where cols > 64) and Int8DigitRowSums.
#include "kernel_operator.h"
#include "../../../op_kernel/attention_core/variants/int8_digits.h"

namespace {
constexpr uint32_t ROWS = 8, MAX_COLS = 256;
}

extern "C" __global__ __aicore__ void int8_digit_folds(GM_ADDR x, GM_ADDR out, GM_ADDR cfg)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::GlobalTensor<uint32_t> cfgGm;
    cfgGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(cfg), 8);
    const uint32_t cols = cfgGm.GetValue(0);
    const uint32_t n = ROWS * cols;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf, workBuf, rowBuf;
    pipe.InitBuffer(xBuf, ROWS * MAX_COLS * sizeof(float));
    pipe.InitBuffer(workBuf, (ROWS * MAX_COLS + 64) * sizeof(float));
    pipe.InitBuffer(rowBuf, 5 * 64 * sizeof(float));  // units, inv, units (nonNegative), inv, sums
    AscendC::GlobalTensor<float> xGm, outGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x), n);
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(out), 5 * 64);
    const AscendC::LocalTensor<float> xs = xBuf.Get<float>();
    const AscendC::LocalTensor<float> rows = rowBuf.Get<float>();
    AscendC::Duplicate(rows, 0.0f, 5 * 64);
    AscendC::DataCopy(xs, xGm, n);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AttentionCore::Int8DigitUnits(rows, rows[64], xs, workBuf.Get<float>(), ROWS, cols, cols);
    AttentionCore::Int8DigitUnits(rows[128], rows[192], xs, workBuf.Get<float>(), ROWS, cols, cols, true);
    AttentionCore::Int8DigitRowSums(rows[256], xs, workBuf.Get<float>(), ROWS, cols, cols);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::DataCopy(outGm, rows, 5 * 64);
}
