// C (32 x 48, fp32) = A (32 x 32, fp16) * B (32 x 48, fp16) on one AIC core with every operand
// moved L1 -> L0 by LoadData 3D v2, as CATLASS's A2 tiles use it for 2D matrices (a 1 x W
// feature map, a 1x1 filter): A from zN to zZ with the feature map of SetFmatrix
// (IsResetLoad3dConfig {false, false}); B from the zN layout of B^T into L0B (transposed by the
// path); and A again from the zN layout of A^T into L0A with enTranspose. Both products go out.
#include "kernel_operator.h"

namespace {
constexpr uint16_t M = 32, K = 32, N = 48;
constexpr uint32_t A_T = 4096, B_T = 8192;  // L1 byte offsets of A^T and B^T
constexpr AscendC::IsResetLoad3dConfig USE_REGISTERS = {false, false};
}  // namespace

extern "C" __global__ __aicore__ void load3d_layouts(GM_ADDR a, GM_ADDR aT, GM_ADDR bT, GM_ADDR c, GM_ADDR c2)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::A1> l1Buf;
    AscendC::TBuf<AscendC::TPosition::A2> l0aBuf;
    AscendC::TBuf<AscendC::TPosition::B2> l0bBuf;
    AscendC::TBuf<AscendC::TPosition::CO1> l0cBuf;
    pipe.InitBuffer(l1Buf, 16384);
    pipe.InitBuffer(l0aBuf, 2 * M * K * sizeof(half));
    pipe.InitBuffer(l0bBuf, K * N * sizeof(half));
    pipe.InitBuffer(l0cBuf, M * N * sizeof(float));
    AscendC::GlobalTensor<half> aGm;
    AscendC::GlobalTensor<half> aTGm;
    AscendC::GlobalTensor<half> bTGm;
    AscendC::GlobalTensor<float> cGm;
    AscendC::GlobalTensor<float> c2Gm;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(a), M * K);
    aTGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(aT), K * M);
    bTGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(bT), N * K);
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(c), M * N);
    c2Gm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(c2), M * N);
    AscendC::LocalTensor<uint8_t> l1 = l1Buf.Get<uint8_t>();
    AscendC::LocalTensor<half> aL1 = l1.ReinterpretCast<half>();
    AscendC::LocalTensor<half> aTL1 = l1[A_T].ReinterpretCast<half>();
    AscendC::LocalTensor<half> bTL1 = l1[B_T].ReinterpretCast<half>();
    AscendC::LocalTensor<half> a2 = l0aBuf.Get<half>();
    AscendC::LocalTensor<half> a2T = a2[M * K];
    AscendC::LocalTensor<half> b2 = l0bBuf.Get<half>();
    AscendC::LocalTensor<float> c1 = l0cBuf.Get<float>();

    // Row-major GM -> zN in L1 (C0 = 16 columns per chunk, chunks a matrix height apart).
    AscendC::DataCopy(aL1, aGm, AscendC::Nd2NzParams(1, M, K, 0, K, M, 1, 0));
    AscendC::DataCopy(aTL1, aTGm, AscendC::Nd2NzParams(1, K, M, 0, M, K, 1, 0));
    AscendC::DataCopy(bTL1, bTGm, AscendC::Nd2NzParams(1, N, K, 0, K, N, 1, 0));
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);

    const uint8_t noPad[4] = {0, 0, 0, 0};
    AscendC::SetFmatrix(1, M, noPad, AscendC::FmatrixMode::FMATRIX_LEFT);
    AscendC::SetLoadDataPaddingValue(static_cast<half>(0.0f));
    AscendC::LoadData3DParamsV2<half> loadA;
    loadA.kExtension = K;
    loadA.mExtension = M;
    loadA.channelSize = K;
    AscendC::LoadData<half, USE_REGISTERS>(a2, aL1, loadA);

    AscendC::LoadData3DParamsV2<half> loadAT(noPad, 1, K, M, M, K, 0, 0, 1, 1, 1, 1, 1, 1, true, false,
                                             static_cast<half>(0.0f));
    AscendC::LoadData(a2T, aTL1, loadAT);
    AscendC::LoadData3DParamsV2<half> loadB(noPad, 1, N, K, K, N, 0, 0, 1, 1, 1, 1, 1, 1, false, false,
                                            static_cast<half>(0.0f));
    AscendC::LoadData(b2, bTL1, loadB);
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);

    AscendC::FixpipeParamsV220 fix(N, M, M, N, false);
    AscendC::MmadParams mm(M, N, K, 0, false, true);
    AscendC::Mmad(c1, a2, b2, mm);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::Fixpipe(cGm, c1, fix);
    AscendC::SetFlag<AscendC::HardEvent::FIX_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(EVENT_ID0);
    AscendC::Mmad(c1, a2T, b2, mm);
    AscendC::SetFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::M_FIX>(EVENT_ID0);
    AscendC::Fixpipe(c2Gm, c1, fix);
}
