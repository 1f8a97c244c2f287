// Small Ascend C kernels whose modelled time can be computed by hand from the cost table, and a
// driver that runs one of them and prints {"profile": ..., "costs": ..., "counters": ...}.
// usage: timing_kernels <scenario> <n> <param> [bufferNum]
//   mmad_loop       AIC only: n back-to-back Mmad of param x param x param fp16 (no flags)
//   stream_copy     AIV only: n DataCopy GM->UB of `param` bytes over fresh GM, then the same again
//   exp_loop        AIV only: n level-2 Exp over `param` fp32 elements
//   copy_compute    AIV only: n tiles of `param` fp32: TQue<VECIN, bufferNum> DataCopy -> Exp in place
//   sync_all        AIV only, 2 blocks: block 0 runs n Exp over `param` fp32, block 1 none; SyncAll;
//                   then one Exp each
//   or_branch       AIV only: 512 bytes GM->UB (byte n is 1 when n < 512, the rest 0), or-folded as
//                   uint16 into one 32-byte block; when any bit is set, `param` Exp over 4096 fp32
//   (exp_loop and sync_all take an optional 5th argument: blockDim)
//   ib_sync         AIV only, 2 blocks: block 0 runs n Exp over `param` fp32 and IBSet's its slot;
//                   block 1 runs bufferNum Exp, IBWait's block 0's slot, then one Exp
//   cube_to_vector  MIX 1:2: n rounds of Mmad param^3 on the AIC, CrossCoreSetFlag<2, PIPE_M>;
//                   each AIV waits for the flag and runs one Exp over 4096 fp32
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernel_operator.h"
#include "tikicpulib.h"
#include "emu/cost_table.h"

using namespace AscendC;

struct TimingTiling {
    uint32_t n;
    uint32_t param;
    uint32_t bufferNum;
};

extern "C" __global__ __aicore__ void mmad_loop(GM_ADDR x, GM_ADDR tiling)
{
    (void)x;
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    TBuf<TPosition::A2> a;
    TBuf<TPosition::B2> b;
    TBuf<TPosition::CO1> c;
    const uint32_t s = t.param;
    pipe.InitBuffer(a, s * s * 2);
    pipe.InitBuffer(b, s * s * 2);
    pipe.InitBuffer(c, s * s * 4);
    LocalTensor<half> la = a.Get<half>(), lb = b.Get<half>();
    LocalTensor<float> lc = c.Get<float>();
    MmadParams p;
    p.m = s;
    p.n = s;
    p.k = s;
    for (uint32_t i = 0; i < t.n; ++i) {
        p.cmatrixInitVal = i == 0;
        Mmad(lc, la, lb, p);
    }
}

extern "C" __global__ __aicore__ void stream_copy(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.param);
    LocalTensor<uint8_t> ub = buf.Get<uint8_t>();
    GlobalTensor<uint8_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(x));
    const uint64_t first = static_cast<uint64_t>(GetBlockIdx()) * t.n;  // each block streams its own rows
    for (int pass = 0; pass < 2; ++pass)
        for (uint32_t i = 0; i < t.n; ++i) DataCopy(ub, gm[(first + i) * t.param], t.param);
}

extern "C" __global__ __aicore__ void exp_loop(GM_ADDR x, GM_ADDR tiling)
{
    (void)x;
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.param * 4);
    LocalTensor<float> v = buf.Get<float>();
    for (uint32_t i = 0; i < t.n; ++i) Exp(v, v, static_cast<int32_t>(t.param));
}

extern "C" __global__ __aicore__ void sync_all(GM_ADDR x, GM_ADDR tiling)
{
    (void)x;
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, t.param * 4);
    LocalTensor<float> v = buf.Get<float>();
    if (GetBlockIdx() == 0)
        for (uint32_t i = 0; i < t.n; ++i) Exp(v, v, static_cast<int32_t>(t.param));
    SyncAll();
    Exp(v, v, static_cast<int32_t>(t.param));
}

extern "C" __global__ __aicore__ void ib_sync(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf, poll;
    pipe.InitBuffer(buf, t.param * 4);
    pipe.InitBuffer(poll, 32);
    GlobalTensor<int32_t> slots;
    slots.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(x), 16);
    LocalTensor<float> v = buf.Get<float>();
    if (GetBlockIdx() == 0) {
        for (uint32_t i = 0; i < t.n; ++i) Exp(v, v, static_cast<int32_t>(t.param));
        IBSet(slots, poll.Get<int32_t>(), 0, 0);
    } else {
        for (uint32_t i = 0; i < t.bufferNum; ++i) Exp(v, v, static_cast<int32_t>(t.param));
        IBWait(slots, poll.Get<int32_t>(), 0, 0);
        Exp(v, v, static_cast<int32_t>(t.param));
    }
}

template <int BUFS> void CopyCompute(GM_ADDR x, const TimingTiling &t)
{
    TPipe pipe;
    TQue<TPosition::VECIN, BUFS> in;
    pipe.InitBuffer(in, BUFS, t.param * 4);
    GlobalTensor<float> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x));
    for (uint32_t i = 0; i < t.n; ++i) {
        LocalTensor<float> tile = in.template AllocTensor<float>();
        DataCopy(tile, gm[static_cast<uint64_t>(i) * t.param], t.param);
        in.EnQue(tile);
        LocalTensor<float> ready = in.template DeQue<float>();
        Exp(ready, ready, static_cast<int32_t>(t.param));
        in.FreeTensor(ready);
    }
}

extern "C" __global__ __aicore__ void copy_compute(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    if (t.bufferNum == 2)
        CopyCompute<2>(x, t);
    else
        CopyCompute<1>(x, t);
}

extern "C" __global__ __aicore__ void cube_to_vector(GM_ADDR x, GM_ADDR tiling)
{
    (void)x;
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    const uint32_t s = t.param;
    if ASCEND_IS_AIC {
        TBuf<TPosition::A2> a;
        TBuf<TPosition::B2> b;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a, s * s * 2);
        pipe.InitBuffer(b, s * s * 2);
        pipe.InitBuffer(c, s * s * 4);
        LocalTensor<half> la = a.Get<half>(), lb = b.Get<half>();
        LocalTensor<float> lc = c.Get<float>();
        MmadParams p;
        p.m = s;
        p.n = s;
        p.k = s;
        p.cmatrixInitVal = true;
        for (uint32_t i = 0; i < t.n; ++i) {
            Mmad(lc, la, lb, p);
            CrossCoreSetFlag<2, PIPE_M>(3);
        }
    }
    if ASCEND_IS_AIV {
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096 * 4);
        LocalTensor<float> v = buf.Get<float>();
        for (uint32_t i = 0; i < t.n; ++i) {
            CrossCoreWaitFlag(3);
            Exp(v, v, 4096);
        }
    }
}

extern "C" __global__ __aicore__ void or_branch(GM_ADDR x, GM_ADDR tiling)
{
    GET_TILING_DATA_WITH_STRUCT(TimingTiling, t, tiling);
    TPipe pipe;
    TBuf<TPosition::VECCALC> bytes, fold, work;
    pipe.InitBuffer(bytes, 512);
    pipe.InitBuffer(fold, 256);
    pipe.InitBuffer(work, 4096 * 4);
    GlobalTensor<uint8_t> gm;
    gm.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(x));
    LocalTensor<uint16_t> in = bytes.Get<uint16_t>(), f = fold.Get<uint16_t>();
    DataCopy(bytes.Get<uint8_t>(), gm, 512);
    SetFlag<HardEvent::MTE2_V>(1);
    WaitFlag<HardEvent::MTE2_V>(1);
    Or(f, in, in[128], 128);
    PipeBarrier<PIPE_V>();
    uint32_t n = 128;
    while (n > 16) {
        n /= 2;
        Or(f, f, f[n], static_cast<int32_t>(n));
        PipeBarrier<PIPE_V>();
    }
    SetFlag<HardEvent::V_S>(1);
    WaitFlag<HardEvent::V_S>(1);
    const LocalTensor<uint64_t> w = f.ReinterpretCast<uint64_t>();
    const bool any = (w.GetValue(0) | w.GetValue(1) | w.GetValue(2) | w.GetValue(3)) != 0;
    SetFlag<HardEvent::S_V>(1);
    WaitFlag<HardEvent::S_V>(1);
    if (any) {
        for (uint32_t i = 0; i < t.param; ++i) Exp(work.Get<float>(), work.Get<float>(), 4096);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    const std::string which = argv[1];
    TimingTiling tiling{static_cast<uint32_t>(std::atoi(argv[2])), static_cast<uint32_t>(std::atoi(argv[3])),
                        static_cast<uint32_t>(argc > 4 ? std::atoi(argv[4]) : 1)};  // ib_sync: may be 0
    auto *tilingGm = static_cast<uint8_t *>(AscendC::GmAlloc(sizeof tiling));
    std::memcpy(tilingGm, &tiling, sizeof tiling);
    const uint32_t blockDim = argc > 5 ? static_cast<uint32_t>(std::atoi(argv[5])) : 1;
    const uint64_t xBytes = which == "stream_copy"    ? static_cast<uint64_t>(tiling.n) * tiling.param * blockDim
                            : which == "copy_compute" ? static_cast<uint64_t>(tiling.n) * tiling.param * 4
                            : which == "or_branch"    ? 512
                                                      : 64;
    auto *x = static_cast<uint8_t *>(AscendC::GmAlloc(xBytes));
    if (which == "or_branch") {
        std::memset(x, 0, 512);
        if (tiling.n < 512) x[tiling.n] = 1;
    }
    if (which == "mmad_loop") {
        AscendC::SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(mmad_loop, 1, x, tilingGm);
    } else if (which == "stream_copy") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(stream_copy, blockDim, x, tilingGm);
    } else if (which == "exp_loop") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(exp_loop, blockDim, x, tilingGm);
    } else if (which == "sync_all") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(sync_all, blockDim, x, tilingGm);
    } else if (which == "ib_sync") {
        std::memset(x, 0, 64);
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(ib_sync, 2, x, tilingGm);
    } else if (which == "or_branch") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(or_branch, 1, x, tilingGm);
    } else if (which == "copy_compute") {
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(copy_compute, 1, x, tilingGm);
    } else if (which == "cube_to_vector") {
        AscendC::SetKernelMode(KernelMode::MIX_MODE);
        ICPU_RUN_KF(cube_to_vector, 1, x, tilingGm);
    } else {
        return 2;
    }
    std::printf("{\"profile\":%s,\"costs\":%s,\"counters\":%s}\n", emu::LastLaunchProfileJson().c_str(),
                emu::CostTableJson().c_str(), emu::LastLaunchCountersJson().c_str());
    AscendC::GmFree(x);
    AscendC::GmFree(tilingGm);
    return 0;
}
