// A 3x3 convolution (pad 1, stride 1) of a 4x4x16 fp16 feature map into 16 output channels on
// one AIC core, the way CATLASS's conv and matmul tiles do it: every buffer takes the whole
// physical memory (TPipe::InitBuffer up to the CPU twin's limits), the feature map arrives one
// row at a time (Nd2Nz with nValue 1 and srcDValue 0), LoadData 3D v2 expands it into L0A, the
// Mmad -> Fixpipe hand-off uses unitFlag instead of M_FIX/FIX_M events, and a second Mmad adds
// a bias from the bias table (L1 -> BT converts it to float). Fill initialises part of L1.
#include "kernel_operator.h"

namespace {
constexpr uint32_t H = 4, W = 4, C = 16, N = 16;
constexpr uint32_t M = H * W;       // output positions (pad 1 keeps 4x4)
constexpr uint32_t K = 9 * C;       // 3x3 filter x channels
constexpr uint32_t WEIGHTS = 4096;  // L1 byte offsets
constexpr uint32_t BIAS = 12288;
constexpr uint32_t FILLED = 16384;
}  // namespace

extern "C" __global__ __aicore__ void conv_unit_flag(GM_ADDR fmap, GM_ADDR weights, GM_ADDR bias, GM_ADDR out,
                                                     GM_ADDR outBias, GM_ADDR filled)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::A1> l1Buf;
    AscendC::TBuf<AscendC::TPosition::A2> l0aBuf;
    AscendC::TBuf<AscendC::TPosition::B2> l0bBuf;
    AscendC::TBuf<AscendC::TPosition::CO1> l0cBuf;
    AscendC::TBuf<AscendC::TPosition::C2> btBuf;
    AscendC::TBuf<AscendC::TPosition::C2PIPE2GM> fbBuf;
    pipe.InitBuffer(l1Buf, 512 * 1024);
    pipe.InitBuffer(l0aBuf, 64 * 1024);
    pipe.InitBuffer(l0bBuf, 64 * 1024);
    pipe.InitBuffer(l0cBuf, 128 * 1024);
    pipe.InitBuffer(btBuf, 1024);
    pipe.InitBuffer(fbBuf, 7 * 1024);
    AscendC::GlobalTensor<half> fmapGm;
    AscendC::GlobalTensor<half> weightsGm;
    AscendC::GlobalTensor<half> biasGm;
    AscendC::GlobalTensor<float> outGm;
    AscendC::GlobalTensor<float> outBiasGm;
    AscendC::GlobalTensor<half> filledGm;
    fmapGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(fmap), M * C);
    weightsGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(weights), K * N);
    biasGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(bias), 32);
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(out), M * N);
    outBiasGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(outBias), M * N);
    filledGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(filled), 48);
    AscendC::LocalTensor<uint8_t> l1 = l1Buf.Get<uint8_t>();
    AscendC::LocalTensor<half> fmapL1 = l1.ReinterpretCast<half>();
    AscendC::LocalTensor<half> weightsL1 = l1[WEIGHTS].ReinterpretCast<half>();
    AscendC::LocalTensor<half> biasL1 = l1[BIAS].ReinterpretCast<half>();
    AscendC::LocalTensor<half> filledL1 = l1[FILLED].ReinterpretCast<half>();
    AscendC::LocalTensor<half> a2 = l0aBuf.Get<half>();
    AscendC::LocalTensor<half> b2 = l0bBuf.Get<half>();
    AscendC::LocalTensor<float> c1 = l0cBuf.Get<float>();
    AscendC::LocalTensor<float> bt = btBuf.Get<float>();

    // NC1HWC0 with C1 = 1: one 32-byte row of channels per position, copied row by row.
    AscendC::Nd2NzParams row(1, 1, C, 0, 0, 1, 0, 0);
    for (uint32_t p = 0; p < M; ++p) {
        AscendC::DataCopy(fmapL1[p * C], fmapGm[p * C], row);
    }
    AscendC::DataCopy(weightsL1, weightsGm, K * N);  // already in the L0B (Zn) fractal order
    AscendC::DataCopy(biasL1, biasGm, 32);
    AscendC::DataCopy(filledL1, filledGm, 48);
    AscendC::InitConstValueParams<half> fill(2, 1, 1, static_cast<half>(2.5f));  // blocks 0 and 2 of 3
    AscendC::InitConstValue(filledL1, fill);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID0);
    AscendC::DataCopy(filledGm, filledL1, 48);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE1>(EVENT_ID0);

    uint8_t padList[4] = {1, 1, 1, 1};
    AscendC::LoadData3DParamsV2<half> img2col(padList, H, W, C, K, M, 0, 0, 1, 1, 3, 3, 1, 1, false, false,
                                              static_cast<half>(0.0f));
    AscendC::LoadData(a2, fmapL1, img2col);
    AscendC::LoadData(b2, weightsL1, AscendC::LoadData2DParams(0, K / 16, 1, 0, 0, false, 0));
    AscendC::DataCopy(bt, biasL1, AscendC::DataCopyParams(1, 1, 0, 0));  // 32 halves -> 32 floats
    AscendC::SetFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE1_M>(EVENT_ID0);

    AscendC::MmadParams mm(M, N, K, 3, false, true);  // unitFlag 3: the last (only) Mmad of the tile
    AscendC::Mmad(c1, a2, b2, mm);
    AscendC::FixpipeParamsV220 fix(N, M, M, N, false);
    fix.unitFlag = 3;  // waits for the Mmad's blocks, then frees them for the next Mmad
    AscendC::Fixpipe(outGm, c1, fix);
    mm.cmatrixInitVal = false;
    AscendC::Mmad(c1, a2, b2, bt, mm);
    AscendC::Fixpipe(outBiasGm, c1, fix);
}
