// Local memory: InitBuffer past each buffer's physical size, the launch's buffer peaks, local
// bounds and alignment, and an empty queue.
#include <cstring>

#include "api_case.h"

// The launch's counters report, per core and as the maximum over cores, the highest byte of each
// local buffer handed out (InitBuffer, also before a Reset; LocalTensor's address constructor).
static void buffer_peaks()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [] {
        TPipe pipe;
        if ASCEND_IS_AIV {
            TQue<TPosition::VECIN, 2> q;
            pipe.InitBuffer(q, 2, 1000);  // 2 x 1024 B
            if (GetBlockIdx() == 3) {
                LocalTensor<float> t(TPosition::VECCALC, 8192, 100);  // bytes up to 8592
                (void)t;
            }
        } else {
            TBuf<TPosition::A1> l1, small;
            pipe.InitBuffer(l1, 512 * 1024);  // all of L1, then released
            pipe.Reset();
            pipe.InitBuffer(small, 100);
            TBuf<TPosition::A2> a;
            TBuf<TPosition::B2> b;
            TBuf<TPosition::CO1> c;
            pipe.InitBuffer(a, 64 * 1024);
            pipe.InitBuffer(b, GetBlockIdx() == 1 ? 40 * 1024 : 1000);
            pipe.InitBuffer(c, 128 * 1024);
        }
    });
    const std::string j = emu::LastLaunchCountersJson();
    const char *launch = "\"peak\":{\"UB\":8592,\"L1\":524288,\"L0A\":65536,\"L0B\":40960,\"L0C\":131072,\"BT\":0,"
                         "\"FB\":0}}";
    EXPECT(j.size() > std::strlen(launch) && j.compare(j.size() - std::strlen(launch), std::string::npos, launch) == 0,
           "launch peak: %s", j.c_str());
    const std::string profile = emu::LastLaunchProfileJson();
    EXPECT(profile.find(std::string(launch, std::strlen(launch) - 1) + ",\"cores\":[") != std::string::npos,
           "profile peak: %s", profile.c_str());
    EXPECT(j.find("\"sub\":\"aiv0\",") != std::string::npos && j.find("\"peak\":{\"UB\":2048}") != std::string::npos,
           "an AIV's peak: %s", j.c_str());
    EXPECT(j.find("\"peak\":{\"L1\":524288,\"L0A\":65536,\"L0B\":1024,\"L0C\":131072,\"BT\":0,\"FB\":0}") !=
               std::string::npos,
           "an AIC's peak: %s", j.c_str());
}

// ---- misuse: each must abort with a message naming the API ----
static void misuse_initbuffer_fb()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::C2PIPE2GM> fb;
        pipe.InitBuffer(fb, 7 * 1024 + 32);
    });
}
// Each buffer of the cube core past its physical size (UB and FB: misuse_initbuffer_overflow/_fb).
template <TPosition P> static void OverfillOneAic(uint32_t bytes)
{
    Run(emu::CoreMix::AIC_ONLY, 1, [bytes] {
        TPipe pipe;
        TBuf<P> full, more;
        pipe.InitBuffer(full, bytes);
        pipe.InitBuffer(more, 32);
    });
}
static void misuse_initbuffer_l1() { OverfillOneAic<TPosition::A1>(512 * 1024); }
static void misuse_initbuffer_l0a() { OverfillOneAic<TPosition::A2>(64 * 1024); }
static void misuse_initbuffer_l0b() { OverfillOneAic<TPosition::B2>(64 * 1024); }
static void misuse_initbuffer_l0c() { OverfillOneAic<TPosition::CO1>(128 * 1024); }

static void misuse_local_out_of_range()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> t = q.AllocTensor<float>();
        Exp(t, t, 300);  // 300 floats in a 256-float buffer
    });
}
static void misuse_initbuffer_overflow()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 100 * 1024);
    });
}
static void misuse_misaligned()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<float> t = buf.Get<float>();
        Add(t[3], t[64], t[128], 64);
    });
}
static void misuse_deque_empty()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TQue<TPosition::VECIN, 1> q;
        pipe.InitBuffer(q, 1, 1024);
        LocalTensor<float> t = q.DeQue<float>();
        (void)t;
    });
}

void AddBufferCases(ApiCases &cases)
{
    const ApiCases mine = {
        {"misuse_initbuffer_fb", misuse_initbuffer_fb},
        {"misuse_initbuffer_l1", misuse_initbuffer_l1},
        {"misuse_initbuffer_l0a", misuse_initbuffer_l0a},
        {"misuse_initbuffer_l0b", misuse_initbuffer_l0b},
        {"misuse_initbuffer_l0c", misuse_initbuffer_l0c},
        {"buffer_peaks", buffer_peaks},
        {"misuse_local_out_of_range", misuse_local_out_of_range},
        {"misuse_initbuffer_overflow", misuse_initbuffer_overflow},
        {"misuse_misaligned", misuse_misaligned},
        {"misuse_deque_empty", misuse_deque_empty},
    };
    AddCases(cases, mine);
}
