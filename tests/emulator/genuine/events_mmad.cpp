// C (32 x 32, fp32) = A (32 x 16, fp16) * B (16 x 32, fp16) on one AIC core: GM -> L1 (Nd2Nz),
// L1 -> L0A / L0B (LoadData 2D, B transposed into Zn), Mmad into L0C, Fixpipe to GM (ND),
// each stage handed to the next with an explicit event id.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void events_mmad(GM_ADDR a, GM_ADDR b, GM_ADDR c)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::A1> a1Buf;
    AscendC::TBuf<AscendC::TPosition::B1> b1Buf;
    AscendC::TBuf<AscendC::TPosition::A2> a2Buf;
    AscendC::TBuf<AscendC::TPosition::B2> b2Buf;
    AscendC::TBuf<AscendC::TPosition::CO1> c1Buf;
    pipe.InitBuffer(a1Buf, 32 * 16 * sizeof(half));
    pipe.InitBuffer(b1Buf, 16 * 32 * sizeof(half));
    pipe.InitBuffer(a2Buf, 32 * 16 * sizeof(half));
    pipe.InitBuffer(b2Buf, 16 * 32 * sizeof(half));
    pipe.InitBuffer(c1Buf, 32 * 32 * sizeof(float));
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> bGm;
    AscendC::GlobalTensor<float> cGm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(a), 32 * 16);
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(b), 16 * 32);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(c), 32 * 32);
    AscendC::LocalTensor<half> a1 = a1Buf.Get<half>();
    AscendC::LocalTensor<half> b1 = b1Buf.Get<half>();
    AscendC::LocalTensor<half> a2 = a2Buf.Get<half>();
    AscendC::LocalTensor<half> b2 = b2Buf.Get<half>();
    AscendC::LocalTensor<float> c1 = c1Buf.Get<float>();

    AscendC::DataCopy(a1, aGm, AscendC::Nd2NzParams(1, 32, 16, 0, 16, 32, 1, 0));
    AscendC::DataCopy(b1, bGm, AscendC::Nd2NzParams(1, 16, 32, 0, 32, 16, 1, 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    for (uint16_t i = 0; i < 2; ++i) {  // the two 16-row fractals of A, Zz in L0A
        AscendC::LoadData(a2[i * 256], a1, AscendC::LoadData2DParams(i, 1, 2, 0, 0, false, 0));
    }
    AscendC::LoadData(b2, b1, AscendC::LoadData2DParams(0, 2, 1, 0, 0, true, 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID1);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID1);
    AscendC::MmadParams mm;
    mm.m = 32;
    mm.n = 32;
    mm.k = 16;
    AscendC::Mmad(c1, a2, b2, mm);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID2);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID2);
    AscendC::FixpipeParamsV220 fix;
    fix.nSize = 32;
    fix.mSize = 32;
    fix.srcStride = 32;
    fix.dstStride = 32;
    AscendC::Fixpipe(cGm, c1, fix);
}
