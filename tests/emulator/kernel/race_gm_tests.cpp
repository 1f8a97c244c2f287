// The hazard checker on global memory (ASCEND_EMU_RACECHECK=1; emu/race.h): small kernels that
// share a GM slot between cores (or between two pipes of one core), ordered or not. Run as
// `race_gm_tests <case>` by test_race_gm.py; a case exits 0 when its kernel ran clean.
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "tikicpulib.h"

using namespace AscendC;

namespace {

constexpr uint16_t FLAG_READY = 1, FLAG_CONSUMED = 2;

void Run(emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    emu::LaunchConfig cfg;
    cfg.name = "race_gm";
    cfg.mix = mix;
    cfg.blockDim = blockDim;
    emu::Launch(cfg, body, ASCEND_EMU_ABI_STAMP);
}

// The cube computes a 16x16 fp32 tile (whatever L0A/L0B hold) and writes it to `slot` with
// Fixpipe, twice; each time it tells the vector cores (FLAG_READY), which read their half of the
// slot. With `backFlag` the vector cores report the read done (FLAG_CONSUMED, set on MTE2, the
// pipe that read) and the cube waits for it before it overwrites the slot.
void CubeSlotToVector(float *slot, bool backFlag)
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot, backFlag] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(slot, 256);
        TPipe pipe;
        if ASCEND_IS_AIC {
            TBuf<TPosition::A2> a;
            TBuf<TPosition::B2> b;
            TBuf<TPosition::CO1> c;
            pipe.InitBuffer(a, 512);
            pipe.InitBuffer(b, 512);
            pipe.InitBuffer(c, 1024);
            for (int it = 0; it < 2; ++it) {
                if (it > 0 && backFlag) CrossCoreWaitFlag(FLAG_CONSUMED);
                if (it > 0) WaitFlag<HardEvent::FIX_M>(EVENT_ID0);
                MmadParams mm;
                mm.m = 16;
                mm.n = 16;
                mm.k = 16;
                Mmad(c.Get<float>(), a.Get<half>(), b.Get<half>(), mm);
                SetFlag<HardEvent::M_FIX>(EVENT_ID0);
                WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
                FixpipeParamsV220 fix;
                fix.nSize = 16;
                fix.mSize = 16;
                fix.srcStride = 16;
                fix.dstStride = 16;
                Fixpipe(g, c.Get<float>(), fix);
                if (it == 0) SetFlag<HardEvent::FIX_M>(EVENT_ID0);
                CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);
            }
        }
        if ASCEND_IS_AIV {
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 1024);
            for (int it = 0; it < 2; ++it) {
                CrossCoreWaitFlag(FLAG_READY);
                DataCopy(ub.Get<float>()[it * 128], g[GetSubBlockIdx() * 128], 128);
                if (backFlag && it == 0) CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_CONSUMED);
            }
        }
    });
}

void war_cube_overwrites_unconsumed_slot()
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    CubeSlotToVector(slot, false);
    GmFree(slot);
}

void war_cube_waits_consumed()
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    CubeSlotToVector(slot, true);
    GmFree(slot);
}

// The vector cores write their half of a slot (MTE3) and raise FLAG_READY for the cube, which
// loads the slot into L1 (MTE2). The set must be queued on MTE3, the pipe that wrote.
void VectorSlotToCube(float *slot, bool flagWithoutSet, bool setOnMte3)
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot, flagWithoutSet, setOnMte3] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(slot, 256);
        TPipe pipe;
        if ASCEND_IS_AIV {
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 512);
            LocalTensor<float> t = ub.Get<float>();
            Duplicate(t, 1.0f, 128);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(g[GetSubBlockIdx() * 128], t, 128);
            if (flagWithoutSet) return;
            if (setOnMte3)
                CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_READY);
            else
                CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_READY);  // MTE2 is not ordered after the MTE3 write
        }
        if ASCEND_IS_AIC {
            TBuf<TPosition::A1> l1;
            pipe.InitBuffer(l1, 1024);
            if (!flagWithoutSet) CrossCoreWaitFlag(FLAG_READY);
            DataCopy(l1.Get<float>(), g, 256);
        }
    });
}

void raw_no_flag()
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    VectorSlotToCube(slot, true, true);
    GmFree(slot);
}

void raw_flag_on_wrong_pipe()
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    VectorSlotToCube(slot, false, false);
    GmFree(slot);
}

void raw_flag_on_writing_pipe()
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    VectorSlotToCube(slot, false, true);
    GmFree(slot);
}

// Every vector core copies its row of `in` to `out` and, after SyncAll, reads the row of its
// neighbour, then overwrites its own row again after a second SyncAll.
void syncall_producer_consumer()
{
    constexpr int kCores = 8;
    auto *in = static_cast<float *>(GmAlloc(kCores * 64 * sizeof(float)));
    auto *out = static_cast<float *>(GmAlloc(kCores * 64 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, kCores, [in, out] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gi, go;
        gi.SetGlobalBuffer(in, kCores * 64);
        go.SetGlobalBuffer(out, kCores * 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> t = ub.Get<float>();
        DataCopy(t, gi[i * 64], 64);
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopy(go[i * 64], t, 64);
        SyncAll();
        DataCopy(t[64], go[(i + 1) % kCores * 64], 64);
        SyncAll();
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        DataCopy(go[i * 64], t[64], 64);
    });
    GmFree(in);
    GmFree(out);
}

// The two vector cores of an AI core exchange halves of a row through GM, ordered by a mode-1
// flag (the group set completes when both have set it: it publishes both cores' writes).
void mode1_vector_pair_exchange()
{
    auto *g = static_cast<float *>(GmAlloc(128 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [g] {
        if ASCEND_IS_AIC {
            return;
        }
        const int me = static_cast<int>(GetSubBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 128);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, static_cast<float>(me + 1), 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(gt[me * 64], t, 64);
        CrossCoreSetFlag<1, PIPE_MTE3>(FLAG_READY);
        CrossCoreWaitFlag(FLAG_READY);
        DataCopy(t[64], gt[(1 - me) * 64], 64);
    });
    GmFree(g);
}

// Every vector core adds its row into one accumulator row with SetAtomicAdd; with `readBack`
// core 0 then reads the accumulator with no ordering after the other cores' adds.
void AtomicAccumulate(bool readBack)
{
    constexpr int kCores = 4;
    auto *in = static_cast<float *>(GmAlloc(kCores * 64 * sizeof(float)));
    auto *acc = static_cast<float *>(GmAlloc(64 * sizeof(float)));
    for (int k = 0; k < kCores * 64; ++k) in[k] = 1.0f;
    Run(emu::CoreMix::AIV_ONLY, kCores, [in, acc, readBack] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gi, ga;
        gi.SetGlobalBuffer(in, kCores * 64);
        ga.SetGlobalBuffer(acc, 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> t = ub.Get<float>();
        DataCopy(t, gi[i * 64], 64);
        SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
        SetAtomicAdd<float>();
        DataCopy(ga, t, 64);
        SetAtomicNone();
        if (readBack && i == 0) {
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            DataCopy(t[64], ga, 64);
        }
    });
    if (!readBack && acc[0] != kCores) std::printf("FAIL: the atomic sum is %g, not %d\n", acc[0], kCores);
    GmFree(in);
    GmFree(acc);
}

void atomic_adds_concurrent() { AtomicAccumulate(false); }
void atomic_add_then_plain_read() { AtomicAccumulate(true); }

// One vector core writes a GM row (MTE3) and reads it back (MTE2): the hardware needs MTE3_MTE2.
void SameCoreWriteRead(bool synced)
{
    auto *g = static_cast<float *>(GmAlloc(64 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 1, [g, synced] {
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, 2.0f, 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(gt, t, 64);
        if (synced) {
            SetFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
            WaitFlag<HardEvent::MTE3_MTE2>(EVENT_ID0);
        }
        DataCopy(t[64], gt, 64);
    });
    GmFree(g);
}
void same_core_write_read_unsynced() { SameCoreWriteRead(false); }
void same_core_write_read_synced() { SameCoreWriteRead(true); }

// Neighbouring vector cores write disjoint bytes of one 32-byte granule (DataCopyPad of 5
// floats each): not a race.
void neighbours_share_a_granule()
{
    auto *g = static_cast<float *>(GmAlloc(64 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 4, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, static_cast<float>(i), 8);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopyPad(gt[i * 5], t, DataCopyExtParams(1, 5 * sizeof(float), 0, 0, 0));
    });
    for (int i = 0; i < 20; ++i)
        if (g[i] != i / 5) std::printf("FAIL: element %d is %g\n", i, g[i]);
    GmFree(g);
}

// A race in FaultMode kRaise ends the launch with LaunchFault; the process and the next launch
// are unaffected.
void raise_mode_survives()
{
    emu::SetFaultMode(emu::FaultMode::kRaise);
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    bool raised = false;
    try {
        CubeSlotToVector(slot, false);
    } catch (const emu::LaunchFault &e) {
        raised = std::strstr(e.what(), "with no cross-core ordering in between") != nullptr;
        if (!raised) std::printf("FAIL: unexpected message: %s\n", e.what());
    }
    if (!raised) std::printf("FAIL: no LaunchFault\n");
    CubeSlotToVector(slot, true);
    GmFree(slot);
    std::printf("survived\n");
}

}  // namespace

int main(int argc, char **argv)
{
    const std::map<std::string, void (*)()> cases = {
        {"war_cube_overwrites_unconsumed_slot", war_cube_overwrites_unconsumed_slot},
        {"war_cube_waits_consumed", war_cube_waits_consumed},
        {"raw_no_flag", raw_no_flag},
        {"raw_flag_on_wrong_pipe", raw_flag_on_wrong_pipe},
        {"raw_flag_on_writing_pipe", raw_flag_on_writing_pipe},
        {"syncall_producer_consumer", syncall_producer_consumer},
        {"mode1_vector_pair_exchange", mode1_vector_pair_exchange},
        {"atomic_adds_concurrent", atomic_adds_concurrent},
        {"atomic_add_then_plain_read", atomic_add_then_plain_read},
        {"same_core_write_read_unsynced", same_core_write_read_unsynced},
        {"same_core_write_read_synced", same_core_write_read_synced},
        {"neighbours_share_a_granule", neighbours_share_a_granule},
        {"raise_mode_survives", raise_mode_survives},
    };
    if (argc != 2 || cases.count(argv[1]) == 0) {
        for (auto &c : cases) std::printf("%s\n", c.first.c_str());
        return argc == 2 && std::string(argv[1]) == "--list" ? 0 : 2;
    }
    cases.at(argv[1])();
    std::printf("DONE %s\n", argv[1]);
    return 0;
}
