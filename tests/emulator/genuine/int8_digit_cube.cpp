// The int8 x int8 decode's cube tiles (attention_core/variants/int8_digit_cube.h) on one AIC core,
// from the Nz tiles the vector cores hand over (plain copies: the query digit tile, a ring slot
// pair of K and V, the P digit slot) to the int32 S and O digit products in GM.
#include "kernel_operator.h"
#include "../../../op_kernel/attention_core/variants/int8_digit_cube.h"

namespace {
constexpr uint32_t D = 128, KEYS = 128, MAX_ROWS = 32;
}  // namespace

extern "C" __global__ __aicore__ void int8_digit_cube(GM_ADDR qd, GM_ADDR kv, GM_ADDR pd, GM_ADDR shape, GM_ADDR s,
                                                      GM_ADDR o)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    AscendC::GlobalTensor<uint32_t> shapeGm;
    shapeGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(shape), 8);
    const uint32_t rows = shapeGm.GetValue(0);  // rowsPad: 16 or 32
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::A1> l1Buf;
    AscendC::TBuf<AscendC::TPosition::A2> l0aBuf;
    AscendC::TBuf<AscendC::TPosition::B2> l0bBuf;
    AscendC::TBuf<AscendC::TPosition::CO1> l0cBuf;
    pipe.InitBuffer(l1Buf, MAX_ROWS * D + MAX_ROWS * KEYS + 2 * KEYS * D);
    pipe.InitBuffer(l0aBuf, MAX_ROWS * D + MAX_ROWS * KEYS);
    pipe.InitBuffer(l0bBuf, 2 * KEYS * D);
    pipe.InitBuffer(l0cBuf, MAX_ROWS * (KEYS + D) * sizeof(int32_t));
    AscendC::GlobalTensor<int8_t> qdGm, kvGm, pdGm;
    AscendC::GlobalTensor<int32_t> sGm, oGm;
    qdGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(qd), MAX_ROWS * D);
    kvGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(kv), 2 * KEYS * D);
    pdGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(pd), MAX_ROWS * KEYS);
    sGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(s), MAX_ROWS * KEYS);
    oGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(o), MAX_ROWS * D);
    const AscendC::LocalTensor<int8_t> l1 = l1Buf.Get<int8_t>();
    const AscendC::LocalTensor<int8_t> l1Q = l1;
    const AscendC::LocalTensor<int8_t> l1P = l1[rows * D];
    const AscendC::LocalTensor<int8_t> l1K = l1[rows * D + rows * KEYS];
    const AscendC::LocalTensor<int8_t> l1V = l1K[KEYS * D];
    const AscendC::LocalTensor<int8_t> l0a = l0aBuf.Get<int8_t>();
    const AscendC::LocalTensor<int8_t> l0b = l0bBuf.Get<int8_t>();
    const AscendC::LocalTensor<int32_t> l0c = l0cBuf.Get<int32_t>();

    // plain copies of the Nz tiles (32-byte blocks): the K/V pair in one
    AscendC::DataCopy(l1Q, qdGm, AscendC::DataCopyParams(1, static_cast<uint16_t>(rows * D / 32), 0, 0));
    AscendC::DataCopy(l1P, pdGm, AscendC::DataCopyParams(1, static_cast<uint16_t>(rows * KEYS / 32), 0, 0));
    AscendC::DataCopy(l1K, kvGm, AscendC::DataCopyParams(1, static_cast<uint16_t>(2 * KEYS * D / 32), 0, 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AttentionCore::Int8DigitLoadA(l0a, l1Q, rows, D);
    AttentionCore::Int8DigitLoadA(l0a[rows * D], l1P, rows, KEYS);
    AttentionCore::Int8DigitLoadKeys(l0b, l1K, KEYS, D);
    AttentionCore::Int8DigitLoadValues(l0b[KEYS * D], l1V, KEYS, D);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID1);
    AttentionCore::Int8DigitMmad(l0c, l0a, l0b, rows, KEYS, D);
    AttentionCore::Int8DigitMmad(l0c[rows * KEYS], l0a[rows * D], l0b[KEYS * D], rows, D, KEYS);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID2);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID2);
    AttentionCore::Int8DigitFixpipe(sGm, l0c, rows, KEYS);
    AttentionCore::Int8DigitFixpipe(oGm, l0c[rows * KEYS], rows, D);
}
