// More cases of the GM hazard checker (ASCEND_EMU_RACECHECK=1; emu/race.h): the per-pipe views
// relayed through a third core, single-pipe barriers, a GlobalTensor::operator() reference kept
// across a SyncAll, and the run-list shadow (partial overlaps, accesses across a page, a whole
// write over many runs). Run as `race_gm_review_tests <case>` by test_race_gm_review.py.
#include "race_case_main.h"

using namespace AscendC;

namespace {

constexpr uint16_t FLAG_A = 3, FLAG_B = 4;

void Run(emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    race_cases::Launch("race_gm_review", mix, blockDim, body);
}

// Each vector core writes its half of a slot (MTE3) and tells the cube (FLAG_A, set on MTE3).
// The cube waits for both on `waitPipe` and relays with a set on FIX (FLAG_B); each vector core
// then reads the other core's half. A wait on MTE2 does not hold FIX: the relay carries nothing.
template <pipe_t waitPipe> void RelayThroughCube()
{
    auto *slot = static_cast<float *>(GmAlloc(128 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(slot, 128);
        TPipe pipe;
        if ASCEND_IS_AIV {
            const int me = static_cast<int>(GetSubBlockIdx());
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 512);
            LocalTensor<float> t = ub.Get<float>();
            Duplicate(t, static_cast<float>(me + 1), 64);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(g[me * 64], t, 64);
            CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_A);
            CrossCoreWaitFlag(FLAG_B);
            DataCopy(t[64], g[(1 - me) * 64], 64);
        }
        if ASCEND_IS_AIC {
            CrossCoreWaitFlag<2, waitPipe>(FLAG_A);
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_B);
        }
    });
    GmFree(slot);
}
void relay_wait_mte2_set_fix() { RelayThroughCube<PIPE_MTE2>(); }
void relay_wait_s_set_fix() { RelayThroughCube<PIPE_S>(); }

// The cube reads a slot (MTE2) and hands it back on MTE2; each vector core, its tile ready in UB
// before, waits on MTE2 and overwrites its half with MTE3 after a barrier: PipeBarrier<PIPE_MTE3>
// orders MTE3 only after MTE3, PipeBarrier<PIPE_ALL> every pipe after every pipe.
template <pipe_t barrier> void VectorOverwritesAfterBarrier()
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(slot, 256);
        TPipe pipe;
        if ASCEND_IS_AIC {
            TBuf<TPosition::A1> l1;
            pipe.InitBuffer(l1, 1024);
            DataCopy(l1.Get<float>(), g, 256);
            CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_A);
        }
        if ASCEND_IS_AIV {
            const int me = static_cast<int>(GetSubBlockIdx());
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 512);
            LocalTensor<float> t = ub.Get<float>();
            Duplicate(t, 1.0f, 128);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_A);
            PipeBarrier<barrier>();
            DataCopy(g[me * 128], t, 128);
        }
    });
    GmFree(slot);
}
void wait_mte2_barrier_mte3_overwrites() { VectorOverwritesAfterBarrier<PIPE_MTE3>(); }
void wait_mte2_barrier_all_overwrites() { VectorOverwritesAfterBarrier<PIPE_ALL>(); }

// Core 0 takes a reference to element 5 through operator(), passes a SyncAll and only then
// writes through it; core 1 reads the element after the SyncAll: unordered on the hardware.
void ref_held_across_syncall()
{
    auto *g = static_cast<int32_t *>(GmAlloc(64 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<int32_t> gt;
        gt.SetGlobalBuffer(g, 64);
        auto &&r = gt(5);
        SyncAll();
        if (i == 0) r = 9;
        if (i == 1) (void)gt.GetValue(5);
    });
    GmFree(g);
}

// Core 0 writes floats [0, 64) whole; after a SyncAll core 1 reads floats [16, 48) and core 2,
// unordered with it, writes 8 floats from `from` (inside the read: a race; past it: clean).
void PartialOverlap(int from)
{
    auto *g = static_cast<float *>(GmAlloc(1024 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 3, [g, from] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 1024);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 512);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, 2.0f, 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        if (i == 0) DataCopy(gt, t, 64);
        SyncAll();
        if (i == 1) DataCopy(t[64], gt[16], 32);
        if (i == 2) DataCopy(gt[from], t, 8);
    });
    GmFree(g);
}
void run_split_inside_a_read_races() { PartialOverlap(32); }
void run_split_past_a_read_is_clean() { PartialOverlap(48); }

// Core 0 writes floats [1016, 1032) (bytes 4064..4127: across the 4 KiB page boundary); core 1,
// unordered, reads 8 floats from `from` (the second page's part: a race; after it: clean).
void AcrossPages(int from)
{
    auto *g = static_cast<float *>(GmAlloc(2048 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g, from] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 2048);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 512);
        LocalTensor<float> t = ub.Get<float>();
        if (i == 0) {
            Duplicate(t, 3.0f, 16);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(gt[1016], t, 16);
        }
        if (i == 1) DataCopy(t, gt[from], 8);
    });
    GmFree(g);
}
void write_across_pages_races_on_the_second() { AcrossPages(1024); }
void write_across_pages_rest_is_clean() { AcrossPages(1032); }

// Core 0 writes 16 rows of 8 floats, 16 floats apart (32 runs on the page); after a SyncAll core
// 1 writes floats [0, 256) whole and core 2, unordered with it, reads floats [8, 16) (a gap no
// one wrote before): the whole write must have replaced every run.
void whole_write_over_runs_races()
{
    auto *g = static_cast<float *>(GmAlloc(1024 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 3, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 1024);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 2048);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, 4.0f, 256);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        if (i == 0) DataCopy(gt, t, DataCopyParams(16, 1, 0, 1));
        SyncAll();
        if (i == 1) DataCopy(gt, t, 256);
        if (i == 2) DataCopy(t[256], gt[8], 8);
    });
    GmFree(g);
}

}  // namespace

int main(int argc, char **argv)
{
    const race_cases::Cases cases = {
        {"relay_wait_mte2_set_fix", relay_wait_mte2_set_fix},
        {"relay_wait_s_set_fix", relay_wait_s_set_fix},
        {"wait_mte2_barrier_mte3_overwrites", wait_mte2_barrier_mte3_overwrites},
        {"wait_mte2_barrier_all_overwrites", wait_mte2_barrier_all_overwrites},
        {"ref_held_across_syncall", ref_held_across_syncall},
        {"run_split_inside_a_read_races", run_split_inside_a_read_races},
        {"run_split_past_a_read_is_clean", run_split_past_a_read_is_clean},
        {"write_across_pages_races_on_the_second", write_across_pages_races_on_the_second},
        {"write_across_pages_rest_is_clean", write_across_pages_rest_is_clean},
        {"whole_write_over_runs_races", whole_write_over_runs_races},
    };
    return race_cases::Main("race_gm_review_tests", cases, argc, argv);
}
