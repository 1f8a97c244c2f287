// Vector instructions CATLASS's A2 tiles use, on one AIV core with the whole UB as one buffer:
// TransDataTo5HD in its tensor-list form (y = x^T for a 16 x 16 fp16 tile) and in its address
// form (`bytes + tensor.GetPhyAddr()` and `tensor.GetPhyAddr() + bytes`, z = y^T = x), ShiftLeft
// of uint16_t, RepeatReduceSum of 4 x 64 floats, and MulAddDst of fp16 sources into a float
// accumulator.
#include "kernel_operator.h"

namespace {
constexpr uint32_t X = 0, Y = 512, Z = 1024, U = 1536, F = 2048, SUM = 3072, P = 3104, Q = 3232, D = 3360;  // UB bytes
}  // namespace

extern "C" __global__ __aicore__ void vec_5hd(GM_ADDR x, GM_ADDR u, GM_ADDR f, GM_ADDR pq, GM_ADDR out)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> ubBuf;
    pipe.InitBuffer(ubBuf, 192 * 1024);
    AscendC::LocalTensor<uint8_t> ub = ubBuf.Get<uint8_t>();
    AscendC::LocalTensor<half> xUb = ub[X].ReinterpretCast<half>();
    AscendC::LocalTensor<half> yUb = ub[Y].ReinterpretCast<half>();
    AscendC::LocalTensor<half> zUb = ub[Z].ReinterpretCast<half>();
    AscendC::LocalTensor<uint16_t> uUb = ub[U].ReinterpretCast<uint16_t>();
    AscendC::LocalTensor<float> fUb = ub[F].ReinterpretCast<float>();
    AscendC::LocalTensor<float> sumUb = ub[SUM].ReinterpretCast<float>();
    AscendC::LocalTensor<half> pUb = ub[P].ReinterpretCast<half>();
    AscendC::LocalTensor<half> qUb = ub[Q].ReinterpretCast<half>();
    AscendC::LocalTensor<float> dUb = ub[D].ReinterpretCast<float>();
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<uint16_t> uGm;
    AscendC::GlobalTensor<float> fGm;
    AscendC::GlobalTensor<half> pqGm;
    AscendC::GlobalTensor<uint8_t> outGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(x), 256);
    uGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint16_t *>(u), 256);
    fGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(f), 256);
    pqGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(pq), 128);
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(out), D + 256);

    AscendC::DataCopy(xUb, xGm, 256);
    AscendC::DataCopy(uUb, uGm, 256);
    AscendC::DataCopy(fUb, fGm, 256);
    AscendC::DataCopy(pUb, pqGm, 64);
    AscendC::DataCopy(qUb, pqGm[64], 64);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);

    AscendC::LocalTensor<half> src[16];
    AscendC::LocalTensor<half> dst[16];
    for (uint32_t i = 0; i < 16; ++i) {
        src[i] = xUb[i * 16];
        dst[i] = yUb[i * 16];
    }
    AscendC::TransDataTo5HD<half>(dst, src, AscendC::TransDataTo5HDParams(false, false, 1, 0, 0));
    pipe_barrier(PIPE_V);
    uint64_t srcAddr[16];
    uint64_t dstAddr[16];
    for (uint32_t i = 0; i < 16; ++i) {
        srcAddr[i] = i * 32 + yUb.GetPhyAddr();
        dstAddr[i] = zUb.GetPhyAddr() + i * 32;
    }
    AscendC::TransDataTo5HD<half>(dstAddr, srcAddr, AscendC::TransDataTo5HDParams(false, false, 1, 0, 0));
    AscendC::ShiftLeft(uUb, uUb, static_cast<uint16_t>(3), 256);
    AscendC::RepeatReduceSum<float, true>(sumUb, fUb, 4, 64, 0, 1, 1, 8);
    AscendC::Duplicate(dUb, 1.0f, 64);
    pipe_barrier(PIPE_V);
    AscendC::MulAddDst(dUb, pUb, qUb, 64);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(outGm, ub, D + 256);
}
