// Emulator micro-benchmarks: Mmad throughput (one AIC thread), a level-2 vector op (one AIV
// thread) and the launch overhead of an empty MIX kernel. Prints one "key value" per line;
// benchmarks/emulator_bench.py turns them into [PERF] lines.
#include <chrono>
#include <cstdio>
#include <functional>

#include "tikicpulib.h"

using namespace AscendC;
using Clock = std::chrono::steady_clock;

static double Seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

// Built with the emulator, so the launch carries the stamp of the headers it runs with.
static void Run(const emu::LaunchConfig &cfg, const std::function<void()> &body)
{
    emu::Launch(cfg, body, ASCEND_EMU_ABI_STAMP);
}

int main()
{
    emu::LaunchConfig cfg;
    cfg.name = "bench";
    cfg.blockDim = 1;
    const int mmadIters = 40;
    double mmadSec = 0;
    cfg.mix = emu::CoreMix::AIC_ONLY;
    Run(cfg, [&] {
        TPipe pipe;
        TBuf<TPosition::A2> a;
        TBuf<TPosition::B2> b;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a, 128 * 128 * 2);
        pipe.InitBuffer(b, 128 * 256 * 2);
        pipe.InitBuffer(c, 128 * 256 * 4);
        LocalTensor<half> at = a.Get<half>(), bt = b.Get<half>();
        for (uint32_t i = 0; i < at.GetSize(); ++i) at.SetValue(i, half(0.01f * (i % 7)));
        for (uint32_t i = 0; i < bt.GetSize(); ++i) bt.SetValue(i, half(0.02f * (i % 5)));
        MmadParams mm;
        mm.m = 128;
        mm.n = 256;
        mm.k = 128;
        const auto t0 = Clock::now();
        for (int i = 0; i < mmadIters; ++i) {
            mm.cmatrixInitVal = i == 0;
            Mmad(c.Get<float>(), at, bt, mm);
        }
        mmadSec = Seconds(t0);
    });
    std::printf("mmad_gflops %.3f\n", 2.0 * 128 * 256 * 128 * mmadIters / mmadSec / 1e9);

    const int vecIters = 200;
    const int n = 16384;
    double vecSec = 0;
    cfg.mix = emu::CoreMix::AIV_ONLY;
    Run(cfg, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 3 * n * 2);
        LocalTensor<half> all = buf.Get<half>();
        Duplicate(all, half(1.0f), 3 * n);
        const auto t0 = Clock::now();
        for (int i = 0; i < vecIters; ++i) Add(all[2 * n], all, all[n], n);
        vecSec = Seconds(t0);
    });
    std::printf("vec_add_half_melems %.3f\n", double(n) * vecIters / vecSec / 1e6);
    const auto t1 = Clock::now();
    double expSec = 0;
    Run(cfg, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 2 * n * 4);
        LocalTensor<float> all = buf.Get<float>();
        Duplicate(all, 0.5f, 2 * n);
        const auto t0 = Clock::now();
        for (int i = 0; i < vecIters; ++i) Exp(all[n], all, n);
        expSec = Seconds(t0);
    });
    (void)t1;
    std::printf("vec_exp_float_melems %.3f\n", double(n) * vecIters / expSec / 1e6);

    cfg.mix = emu::CoreMix::MIX_AIC_1_2;
    cfg.blockDim = 24;
    const int launches = 20;
    const auto t2 = Clock::now();
    for (int i = 0; i < launches; ++i) Run(cfg, [] {});
    std::printf("launch_overhead_ms %.3f\n", Seconds(t2) / launches * 1e3);
    return 0;
}
