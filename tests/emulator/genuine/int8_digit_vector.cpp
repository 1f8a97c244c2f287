// The vector side of an int8 x int8 decode on one AIV core, for 8 rows of 128 values: split fp32
// rows into two int8 digit rows (x * unit -> rint -> q16 = 256 hi + lo, hi = floor((q16 + 128) /
// 256), lo = q16 - 256 hi, both in [-128, 127] for |q16| <= 32639), and combine the cube's two
// int32 digit products into fp32 (s = (256 s_hi + s_lo) * scale). Every step is exact in fp32
// (integers below 2^24, a power-of-two divide); the digits reach int8 through half, as A2 has
// no fp32 -> int8 cast.
#include "kernel_operator.h"

namespace {
constexpr uint32_t ROWS = 8, COLS = 128, N = ROWS * COLS;
}  // namespace

extern "C" __global__ __aicore__ void int8_digit_vector(GM_ADDR x, GM_ADDR unit, GM_ADDR sHi, GM_ADDR sLo,
                                                        GM_ADDR scale, GM_ADDR digits, GM_ADDR s)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> fBuf;  // 4 fp32 rows of N
    AscendC::TBuf<AscendC::TPosition::VECCALC> iBuf;  // the two int32 products
    AscendC::TBuf<AscendC::TPosition::VECCALC> hBuf;  // half staging of the digits
    AscendC::TBuf<AscendC::TPosition::VECCALC> dBuf;  // the int8 digits: hi rows, then lo rows
    pipe.InitBuffer(fBuf, 4 * N * sizeof(float));
    pipe.InitBuffer(iBuf, 2 * N * sizeof(int32_t));
    pipe.InitBuffer(hBuf, 2 * N * sizeof(half));
    pipe.InitBuffer(dBuf, 2 * N * sizeof(int8_t));
    AscendC::GlobalTensor<float> xGm;
    AscendC::GlobalTensor<float> unitGm;
    AscendC::GlobalTensor<int32_t> hiGm;
    AscendC::GlobalTensor<int32_t> loGm;
    AscendC::GlobalTensor<float> scaleGm;
    AscendC::GlobalTensor<int8_t> dGm;
    AscendC::GlobalTensor<float> sGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x), N);
    unitGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(unit), ROWS);
    hiGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(sHi), N);
    loGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(sLo), N);
    scaleGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(scale), ROWS);
    dGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(digits), 2 * N);
    sGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(s), N);
    AscendC::LocalTensor<float> f = fBuf.Get<float>();
    AscendC::LocalTensor<float> t = f;  // x * unit, then -256 hi
    AscendC::LocalTensor<float> q = f[N];
    AscendC::LocalTensor<float> hi = f[2 * N];
    AscendC::LocalTensor<float> lo = f[3 * N];
    AscendC::LocalTensor<int32_t> prod = iBuf.Get<int32_t>();
    AscendC::LocalTensor<half> h = hBuf.Get<half>();
    AscendC::LocalTensor<int8_t> d = dBuf.Get<int8_t>();

    AscendC::DataCopy(t, xGm, N);
    AscendC::DataCopy(prod, hiGm, N);
    AscendC::DataCopy(prod[N], loGm, N);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);

    // digits of x: per-row unit, rint, floor of (q16 + 128) / 256
    for (uint32_t r = 0; r < ROWS; ++r) {
        AscendC::Muls(t[r * COLS], t[r * COLS], unitGm.GetValue(r), COLS);
    }
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(q, t, AscendC::RoundMode::CAST_RINT, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Adds(hi, q, 128.0f, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(hi, hi, 1.0f / 256.0f, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(hi, hi, AscendC::RoundMode::CAST_FLOOR, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(t, hi, -256.0f, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Add(lo, q, t, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(h, hi, AscendC::RoundMode::CAST_NONE, N);
    AscendC::Cast(h[N], lo, AscendC::RoundMode::CAST_NONE, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(d, h, AscendC::RoundMode::CAST_NONE, 2 * N);

    // s = (256 s_hi + s_lo) * scale, per row
    AscendC::Cast(q, prod, AscendC::RoundMode::CAST_NONE, N);
    AscendC::Cast(lo, prod[N], AscendC::RoundMode::CAST_NONE, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(q, q, 256.0f, N);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Add(q, q, lo, N);
    AscendC::PipeBarrier<PIPE_V>();
    for (uint32_t r = 0; r < ROWS; ++r) {
        AscendC::Muls(q[r * COLS], q[r * COLS], scaleGm.GetValue(r), COLS);
    }
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
    AscendC::DataCopy(dGm, d, 2 * N);
    AscendC::DataCopy(sGm, q, N);
}
