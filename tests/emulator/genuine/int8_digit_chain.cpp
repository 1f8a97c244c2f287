// One key block of the int8 x int8 decode's vector stage (attention_core/variants/int8_digits.h)
// on one AIV core, in two launches around the cube's P.V: int8_digit_softmax forms S from the
// cube's int32 digit products and the query units, the softmax P = exp(S - max), and P's digits
// (Nz slot, hi rows 0-7, lo rows 8-15), units and quantised row sums; int8_digit_fold folds the
// P.V digit products into the accumulator and normalises by the quantised sum.
#include "kernel_operator.h"
#include "../../../op_kernel/attention_core/variants/int8_digits.h"

namespace {
constexpr uint32_t ROWS = 8, C = 128, N = ROWS * C;

struct Buffers {
    AscendC::TBuf<AscendC::TPosition::VECCALC> x, t, work, hi, h, d, nz, prod, row;
    AscendC::LocalTensor<float> Row(uint32_t i) { return row.Get<float>()[i * 64]; }
    AttentionCore::Int8DigitScratch Scratch()
    {
        return {work.Get<float>(), Row(4), Row(5), hi.Get<float>(), h.Get<half>(), d.Get<int8_t>(), nz.Get<int8_t>()};
    }
    void Init(AscendC::TPipe &pipe)
    {
        pipe.InitBuffer(x, N * 4);
        pipe.InitBuffer(t, N * 4);
        pipe.InitBuffer(work, (N + 64) * 4);
        pipe.InitBuffer(hi, N * 4);
        pipe.InitBuffer(h, 2 * N * 2);
        pipe.InitBuffer(d, 2 * N);
        pipe.InitBuffer(nz, 2 * N);
        pipe.InitBuffer(prod, 2 * N * 4);
        pipe.InitBuffer(row, 8 * 64 * 4);  // rows of 64 floats: m, u, qsum, r, inv, blocks (2)
    }
};
}  // namespace

extern "C" __global__ __aicore__ void int8_digit_softmax(GM_ADDR sProd, GM_ADDR rUnits, GM_ADDR slot, GM_ADDR stats)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    Buffers b;
    b.Init(pipe);
    AscendC::GlobalTensor<int32_t> prodGm;
    AscendC::GlobalTensor<float> rGm, statsGm;
    AscendC::GlobalTensor<half> slotGm;
    prodGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(sProd), 2 * N);
    rGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(rUnits), 8);
    statsGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(stats), 3 * 8);
    slotGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(slot), N);
    const AscendC::LocalTensor<float> s = b.x.Get<float>();
    const AscendC::LocalTensor<float> work = b.work.Get<float>();
    AscendC::DataCopy(b.prod.Get<int32_t>(), prodGm, 2 * N);
    AscendC::DataCopy(b.Row(3), rGm, 8);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AttentionCore::BroadcastRows(b.Row(6), b.Row(3), ROWS);
    AttentionCore::Int8DigitScores(s, b.prod.Get<int32_t>(), N, b.Row(6), b.t.Get<float>(), ROWS, C);
    // row max (64-column folds, then two block reductions), P = exp(S - m)
    AscendC::Max(work, s, s[64], 64, ROWS, AscendC::BinaryRepeatParams(1, 1, 1, 8, 16, 16));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::BlockReduceMax(work[N], work, ROWS, 64, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::BlockReduceMax(b.Row(0), work[N], 1, 64, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
    AttentionCore::BroadcastRows(b.Row(6), b.Row(0), ROWS);
    AttentionCore::RowBroadcast<AttentionCore::RowOp::Sub>(s, b.Row(6), ROWS, C, C);
    AscendC::Exp(s, s, static_cast<int32_t>(N));
    AscendC::PipeBarrier<PIPE_V>();
    AttentionCore::Int8DigitBlockP(slotGm, 0, 2 * ROWS, s, b.Row(1), b.Row(2), b.Scratch(), ROWS, C, C);
    AscendC::DataCopy(statsGm, b.Row(0), 8);
    AscendC::DataCopy(statsGm[8], b.Row(1), 8);
    AscendC::DataCopy(statsGm[16], b.Row(2), 8);
}

extern "C" __global__ __aicore__ void int8_digit_fold(GM_ADDR oProd, GM_ADDR stats, GM_ADDR out)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    Buffers b;
    b.Init(pipe);
    AscendC::GlobalTensor<int32_t> prodGm;
    AscendC::GlobalTensor<float> statsGm, outGm;
    prodGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(oProd), 2 * N);
    statsGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(stats), 3 * 8);
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(out), N);
    const AscendC::LocalTensor<float> acc = b.x.Get<float>();
    AscendC::DataCopy(b.prod.Get<int32_t>(), prodGm, 2 * N);
    AscendC::DataCopy(b.Row(1), statsGm[8], 8);
    AscendC::DataCopy(b.Row(2), statsGm[16], 8);
    AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(N));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AttentionCore::BroadcastRows(b.Row(6), b.Row(1), ROWS);
    AttentionCore::Int8DigitFoldO(acc, b.prod.Get<int32_t>(), N, b.Row(6), b.t.Get<float>(), b.work.Get<float>(), ROWS,
                                  C);
    // l = u * (sum of the quantised P); O = acc / l
    AscendC::Mul(b.Row(3), b.Row(1), b.Row(2), 8);
    AscendC::PipeBarrier<PIPE_V>();
    AttentionCore::BroadcastRows(b.Row(6), b.Row(3), ROWS);
    AttentionCore::RowBroadcast<AttentionCore::RowOp::Div>(acc, b.Row(6), ROWS, C, C);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::DataCopy(outGm, acc, N);
}
