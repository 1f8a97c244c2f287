// One key block of an int8 x int8 decode on one AIC core, the cube's whole data path for int8
// K/V kept in int8 up to the cube: S = Qd . K^T and O = Pd . V (int32 in L0C), where Qd and Pd
// are 16 rows of int8 digits (the high and low digits of 8 fixed-point rows) and K, V are 128
// keys x 128 int8 channels. GM -> L1 by Nd2Nz (int8: 32-byte C0, 16 x 32 fractals); the digit
// rows into L0A (Zz) and K into L0B (Zn) by LoadData 2D without transpose (K's Nz tile already
// is B = K^T's Zn order); V into L0B by LoadDataWithTranspose (each 32 x 32 square of two
// fractals becomes two fractals of V^T); Mmad int8 x int8 -> int32; Fixpipe int32 rows to GM
// (NoQuant). Each stage is handed to the next with an explicit event id.
#include "kernel_operator.h"

namespace {
constexpr uint16_t ROWS = 16, D = 128, KEYS = 128;
constexpr uint32_t FRAC = 512;        // bytes of one int8 fractal (16 x 32)
constexpr uint32_t L1_PD = ROWS * D;  // L1 byte offsets: Qd, Pd, K, V
constexpr uint32_t L1_K = L1_PD + ROWS * KEYS;
constexpr uint32_t L1_V = L1_K + KEYS * D;
constexpr uint32_t L1_BYTES = L1_V + KEYS * D;
constexpr uint32_t KEY_FRACS = KEYS / 16;  // fractal rows of the K / V tiles
}  // namespace

extern "C" __global__ __aicore__ void int8_digit_block(GM_ADDR qd, GM_ADDR pd, GM_ADDR k, GM_ADDR v, GM_ADDR s,
                                                       GM_ADDR o)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::A1> l1Buf;
    AscendC::TBuf<AscendC::TPosition::A2> l0aBuf;
    AscendC::TBuf<AscendC::TPosition::B2> l0bBuf;
    AscendC::TBuf<AscendC::TPosition::CO1> l0cBuf;
    pipe.InitBuffer(l1Buf, L1_BYTES);
    pipe.InitBuffer(l0aBuf, ROWS * D + ROWS * KEYS);
    pipe.InitBuffer(l0bBuf, 2 * KEYS * D);
    pipe.InitBuffer(l0cBuf, 2 * ROWS * D * sizeof(int32_t));
    AscendC::GlobalTensor<int8_t> qdGm;
    AscendC::GlobalTensor<int8_t> pdGm;
    AscendC::GlobalTensor<int8_t> kGm;
    AscendC::GlobalTensor<int8_t> vGm;
    AscendC::GlobalTensor<int32_t> sGm;
    AscendC::GlobalTensor<int32_t> oGm;
    qdGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(qd), ROWS * D);
    pdGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(pd), ROWS * KEYS);
    kGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(k), KEYS * D);
    vGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(v), KEYS * D);
    sGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(s), ROWS * KEYS);
    oGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(o), ROWS * D);
    AscendC::LocalTensor<int8_t> l1 = l1Buf.Get<int8_t>();
    AscendC::LocalTensor<int8_t> l0a = l0aBuf.Get<int8_t>();
    AscendC::LocalTensor<int8_t> l0b = l0bBuf.Get<int8_t>();
    AscendC::LocalTensor<int32_t> l0c = l0cBuf.Get<int32_t>();

    // Row-major GM -> Nz in L1: C0 = 32 int8 columns per chunk, chunks a tile height apart.
    AscendC::DataCopy(l1, qdGm, AscendC::Nd2NzParams(1, ROWS, D, 0, D, ROWS, 1, 0));
    AscendC::DataCopy(l1[L1_PD], pdGm, AscendC::Nd2NzParams(1, ROWS, KEYS, 0, KEYS, ROWS, 1, 0));
    AscendC::DataCopy(l1[L1_K], kGm, AscendC::Nd2NzParams(1, KEYS, D, 0, D, KEYS, 1, 0));
    AscendC::DataCopy(l1[L1_V], vGm, AscendC::Nd2NzParams(1, KEYS, D, 0, D, KEYS, 1, 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);

    // One row of 16-row fractals each: an Nz tile of 16 rows is its own Zz order.
    AscendC::LoadData(l0a, l1, AscendC::LoadData2DParams(0, D / 32, 1, 0, 0, false, 0));
    AscendC::LoadData(l0a[ROWS * D], l1[L1_PD], AscendC::LoadData2DParams(0, KEYS / 32, 1, 0, 0, false, 0));
    // K's Nz fractal (d / 32, key / 16) holds 16 keys x 32 channels: B = K^T's Zn fractal (k1, n1).
    AscendC::LoadData(l0b, l1[L1_K], AscendC::LoadData2DParams(0, KEY_FRACS * (D / 32), 1, 0, 0, false, 0));
    // V: the square of Nz fractals (c1, 2q), (c1, 2q + 1) = keys 32q.. x channels 32c1.. becomes
    // the Zn fractals (k1 = q, n1 = 2c1) and (q, 2c1 + 1); one call per 32 keys walks c1.
    for (uint16_t q = 0; q < KEYS / 32; ++q) {
        AscendC::LoadDataWithTranspose(l0b[KEYS * D + q * (D / 16) * FRAC], l1[L1_V],
                                       AscendC::LoadData2dTransposeParams(q, D / 32, KEY_FRACS / 2, 1, 0));
    }
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID1);
    AscendC::MmadParams mm;
    mm.m = ROWS;
    mm.n = KEYS;
    mm.k = D;
    AscendC::Mmad(l0c, l0a, l0b, mm);
    mm.n = D;
    mm.k = KEYS;
    AscendC::Mmad(l0c[ROWS * KEYS], l0a[ROWS * D], l0b[KEYS * D], mm);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID2);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID2);
    AscendC::FixpipeParamsV220 fix;
    fix.nSize = KEYS;
    fix.mSize = ROWS;
    fix.srcStride = ROWS;
    fix.dstStride = KEYS;
    AscendC::Fixpipe(sGm, l0c, fix);
    fix.nSize = D;
    fix.dstStride = D;
    AscendC::Fixpipe(oGm, l0c[ROWS * KEYS], fix);
}
