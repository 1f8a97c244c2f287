// Cores, launches and synchronisation: cross-core flags, SyncAll, block identity, the SoC table,
// the hazard checker on local memory, event misuse, TILING_KEY_IS misuse and deadlocks.
#include "emu/soc.h"
#include "api_case.h"

// Cube and vector cores ping-pong 20 times through cross-core flags (mode 2).
static void cross_core_pingpong()
{
    auto *g = static_cast<int32_t *>(GmAlloc(64 * sizeof(int32_t)));
    Run(emu::CoreMix::MIX_AIC_1_2, 3, [g] {
        const int b = static_cast<int>(GetBlockIdx() / GetTaskRation());
        for (int it = 0; it < 20; ++it) {
            if ASCEND_IS_AIC {
                g[b * 16] = it;
                CrossCoreSetFlag<2, PIPE_FIX>(1);
                CrossCoreWaitFlag(2);
                EXPECT(g[b * 16 + 1] == it && g[b * 16 + 2] == it, "AIVs answered iteration %d", it);
            }
            if ASCEND_IS_AIV {
                CrossCoreWaitFlag(1);
                g[b * 16 + 1 + GetSubBlockIdx()] = g[b * 16];
                CrossCoreSetFlag<2, PIPE_MTE3>(2);
            }
        }
    });
    GmFree(g);
}

static void sync_all()
{
    auto *g = static_cast<int32_t *>(GmAlloc(48 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 40, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        for (int round = 1; round <= 5; ++round) {
            g[i] = round;
            SyncAll();
            for (int j = 0; j < 40; ++j)
                EXPECT(g[j] >= round, "core %d saw core %d at %d in round %d", i, j, g[j], round);
            SyncAll();
        }
    });
    GmFree(g);
}

static void identity()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [] {
        if ASCEND_IS_AIV {
            EXPECT(GetBlockIdx() == emu::Ctx().block * 2 + GetSubBlockIdx() && GetTaskRation() == 2 &&
                       GetBlockNum() == 2,
                   "AIV identity");
        } else {
            EXPECT(GetBlockIdx() == emu::Ctx().block && GetTaskRation() == 1 && GetSubBlockIdx() == 0, "AIC identity");
        }
    });
}

// The SoC in use (ASCEND_EMU_SOC) sizes the local memories; launches wider than the SoC run in waves.
static void soc_selection()
{
    const emu::SocSpec &soc = emu::CurrentSoc();
    std::printf("soc %s aic %u aiv %u ub %llu l1 %llu\n", soc.name, soc.aicCores, soc.aivCores,
                (unsigned long long)soc.ubBytes, (unsigned long long)soc.l1Bytes);
    Run(emu::CoreMix::AIV_ONLY, 1, [&soc] {
        EXPECT(emu::Ctx().memSize[static_cast<int>(emu::Buf::UB)] == soc.ubBytes, "UB sized from the SoC table");
    });
    auto *g = static_cast<int32_t *>(GmAlloc(100 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 100, [g] { g[GetBlockIdx()] = static_cast<int32_t>(GetBlockIdx()) + 1; });
    for (int i = 0; i < 100; ++i) EXPECT(g[i] == i + 1, "block %d of a 100-block launch ran (%d)", i, g[i]);
    GmFree(g);
}

// Hazard checker (run with ASCEND_EMU_RACECHECK=1): a DMA-in read by the vector unit, with
// and without the MTE2 -> V ordering; a Mmad result read by Fixpipe without M -> FIX.
static void race_vector(bool synced)
{
    auto *gm = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm, synced] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 256);
        LocalTensor<float> t = buf.Get<float>();
        DataCopy(t, g, 256);
        if (synced) {
            SetFlag<HardEvent::MTE2_V>(0);
            WaitFlag<HardEvent::MTE2_V>(0);
        }
        Adds(t[256], t, 1.0f, 256);
        if (synced) {
            SetFlag<HardEvent::V_MTE3>(0);
            WaitFlag<HardEvent::V_MTE3>(0);
        }
        DataCopy(g, t[256], 256);
    });
    GmFree(gm);
}
static void race_vector_synced() { race_vector(true); }
static void race_vector_missing_sync() { race_vector(false); }
static void race_cube_missing_sync()
{
    auto *gm = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::AIC_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::A2> a;
        TBuf<TPosition::B2> b;
        TBuf<TPosition::CO1> c;
        pipe.InitBuffer(a, 512);
        pipe.InitBuffer(b, 512);
        pipe.InitBuffer(c, 1024);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 256);
        MmadParams mm;
        mm.m = 16;
        mm.n = 16;
        mm.k = 16;
        Mmad(c.Get<float>(), a.Get<half>(), b.Get<half>(), mm);  // L0A/L0B hold whatever is there
        FixpipeParamsV220 fix;
        fix.nSize = 16;
        fix.mSize = 16;
        fix.srcStride = 16;
        fix.dstStride = 16;
        Fixpipe(g, c.Get<float>(), fix);  // no SetFlag/WaitFlag<M_FIX>
    });
    GmFree(gm);
}

// ---- misuse: each must abort with a message naming the API ----
static void misuse_tiling_key_not_a_literal()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        constexpr uint64_t key = 3;  // a constexpr name: CANN's kernel compiler cannot collect it
        if (TILING_KEY_IS(key)) std::printf("unreachable\n");
    });
}

static void misuse_waitflag_unset()
{
    OnOneAiv([](TPipe &, TBuf<TPosition::VECCALC> &) { WaitFlag<HardEvent::MTE2_V>(3); });
}
static void misuse_syncall_too_many_cores()
{
    Run(emu::CoreMix::AIV_ONLY, 60, [] { SyncAll(); });  // 60 > 48 AIVs of Ascend910B2
}
static void misuse_event_wrong_core()
{
    Run(emu::CoreMix::AIC_ONLY, 1, [] { SetFlag<HardEvent::V_MTE3>(0); });  // a vector-core event on the cube
}
static void deadlock_missing_set()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(5);
        }  // no vector core ever sets flag 5
    });
}
static void deadlock_cycle()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(1);
            CrossCoreSetFlag<2, PIPE_FIX>(2);
        }
        if ASCEND_IS_AIV {
            CrossCoreWaitFlag(2);
            CrossCoreSetFlag<2, PIPE_MTE3>(1);
        }
    });
}
// Each vector core's CrossCoreSetFlag is its own: two sets by AIV 0 are not one set by each AIV.
static void deadlock_mode2_one_aiv_sets_twice()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag(3);
        }  // needs a set from both AIVs of core 0
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0) {
                CrossCoreSetFlag<2, PIPE_MTE3>(3);
                CrossCoreSetFlag<2, PIPE_MTE3>(3);
            }
        }
    });
}
static void deadlock_mode1_one_aiv_sets_twice()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0) {
                CrossCoreSetFlag<1, PIPE_MTE3>(4);
                CrossCoreSetFlag<1, PIPE_MTE3>(4);
            } else {
                CrossCoreWaitFlag(4);
            }  // the group set needs AIV 1's own set too
        }
    });
}

void AddSyncCases(ApiCases &cases)
{
    const ApiCases mine = {
        {"cross_core_pingpong", cross_core_pingpong},
        {"sync_all", sync_all},
        {"identity", identity},
        {"soc_selection", soc_selection},
        {"race_vector_synced", race_vector_synced},
        {"race_vector_missing_sync", race_vector_missing_sync},
        {"race_cube_missing_sync", race_cube_missing_sync},
        {"misuse_tiling_key_not_a_literal", misuse_tiling_key_not_a_literal},
        {"misuse_syncall_too_many_cores", misuse_syncall_too_many_cores},
        {"misuse_waitflag_unset", misuse_waitflag_unset},
        {"misuse_event_wrong_core", misuse_event_wrong_core},
        {"deadlock_missing_set", deadlock_missing_set},
        {"deadlock_cycle", deadlock_cycle},
        {"deadlock_mode2_one_aiv_sets_twice", deadlock_mode2_one_aiv_sets_twice},
        {"deadlock_mode1_one_aiv_sets_twice", deadlock_mode1_one_aiv_sets_twice},
    };
    AddCases(cases, mine);
}
