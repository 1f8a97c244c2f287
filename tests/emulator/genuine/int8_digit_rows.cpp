// The int8 x int8 decode's vector helpers (attention_core/variants/int8_digits.h) on one AIV
// core: 8 fp32 rows of 128 values get their per-row units in the kernel, split into hi and lo
// int8 digit rows stored in the cube's int8 Nz order (hi rows 0-7, lo rows 8-15 of a 16-row
// slot, as one unit's 2G rows at G = 8), and the cube's two int32 digit products are combined
// into fp32 and scaled by the row units; the row sums of the quantised rows (the softmax
// denominator's count of a P block) go out with the units.
#include "kernel_operator.h"
#include "../../../op_kernel/attention_core/variants/int8_digits.h"

namespace {
constexpr uint32_t ROWS = 8, COLS = 128, N = ROWS * COLS;
}  // namespace

extern "C" __global__ __aicore__ void int8_digit_rows(GM_ADDR x, GM_ADDR prod, GM_ADDR unit, GM_ADDR slot, GM_ADDR s)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf, hiBuf, workBuf, rowBuf, hBuf, dBuf, nzBuf, pBuf;
    pipe.InitBuffer(xBuf, N * sizeof(float));
    pipe.InitBuffer(hiBuf, N * sizeof(float));
    pipe.InitBuffer(workBuf, (N + 64) * sizeof(float));
    pipe.InitBuffer(rowBuf, 3 * 64 * sizeof(float));  // unit, inv, the inv blocks
    pipe.InitBuffer(hBuf, 2 * N * sizeof(half));
    pipe.InitBuffer(dBuf, 2 * N);
    pipe.InitBuffer(nzBuf, 2 * N);
    pipe.InitBuffer(pBuf, 2 * N * sizeof(int32_t));
    AscendC::GlobalTensor<float> xGm, unitGm, sGm;
    AscendC::GlobalTensor<int32_t> prodGm;
    AscendC::GlobalTensor<half> slotGm;  // the int8 slot viewed as 16-bit pairs
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x), N);
    prodGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(prod), 2 * N);
    unitGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(unit), 64 + ROWS);
    slotGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(slot), N);
    sGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(s), N);
    const AscendC::LocalTensor<float> xs = xBuf.Get<float>();
    const AscendC::LocalTensor<float> rowf = rowBuf.Get<float>();
    const AscendC::LocalTensor<float> u = rowf;
    const AscendC::LocalTensor<float> inv = rowf[64];
    const AscendC::LocalTensor<float> blocks = rowf[128];
    const AscendC::LocalTensor<int8_t> d = dBuf.Get<int8_t>();
    const AscendC::LocalTensor<int8_t> nz = nzBuf.Get<int8_t>();
    const AscendC::LocalTensor<int32_t> p = pBuf.Get<int32_t>();

    AscendC::DataCopy(xs, xGm, N);
    AscendC::DataCopy(p, prodGm, 2 * N);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);

    AttentionCore::Int8DigitUnits(u, inv, xs, workBuf.Get<float>(), ROWS, COLS, COLS);
    AttentionCore::BroadcastRows(blocks, inv, ROWS);
    AttentionCore::Int8DigitQuantise(xs, blocks, ROWS, COLS);
    AttentionCore::Int8DigitRowSums(rowf[64], xs, workBuf.Get<float>(), ROWS, COLS, COLS);  // over inv
    AttentionCore::Int8DigitSplitQuantised(d, xs, hiBuf.Get<float>(), hBuf.Get<half>(), ROWS, COLS);
    // hi rows to slot rows 0.., lo rows to 8.. (two 8-row pieces of one 16-row slot), one copy
    AttentionCore::Int8DigitStorePairNz(slotGm, nz, d, 0, ROWS, COLS, 2 * ROWS);

    const AscendC::LocalTensor<float> sv = hiBuf.Get<float>();
    AscendC::PipeBarrier<PIPE_V>();
    AttentionCore::Int8DigitCombine(sv, p, N, workBuf.Get<float>(), N);
    AttentionCore::BroadcastRows(blocks, u, ROWS);
    AttentionCore::RowBroadcast<AttentionCore::RowOp::Mul>(sv, blocks, ROWS, COLS, COLS);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::DataCopy(unitGm, rowf, 64 + ROWS);  // units, then the q16 row sums
    AscendC::DataCopy(sGm, sv, N);
}
