// IBSet / IBWait (kernel_operator_block_sync_intf.h): small kernels that hand GM data from one
// vector core to another through a slot, ordered or not, and the misuses the emulator reports
// (a wait no core ends, a slot outside the workspace, a short ubWorkspace). Run as
// `ib_sync_tests <case>` by test_ib_sync.py; a case prints "DONE <case>" when its kernel ran clean.
#include <chrono>
#include <cstring>
#include <thread>

#include "race_case_main.h"

using namespace AscendC;

namespace {

constexpr uint32_t N = 64;  // floats handed over

void Run(emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    race_cases::Launch("ib_sync", mix, blockDim, body);
}

int32_t *NewSync(uint32_t ints)
{
    auto *s = static_cast<int32_t *>(GmAlloc(ints * sizeof(int32_t)));
    std::memset(s, 0, ints * sizeof(int32_t));
    return s;
}

// The tiles of one vector core: `data` (N floats) and the 32-byte poll buffer.
struct Tiles {
    TPipe pipe;
    TBuf<TPosition::VECCALC> data, poll;
    Tiles()
    {
        pipe.InitBuffer(data, N * sizeof(float));
        pipe.InitBuffer(poll, 32);
    }
};

// Block 0 writes `slot` (DataCopy UB->GM); `rounds` times block 1 reads it. `sync` says how block
// 1 learns the data is there: 0 not at all (a race), 1 IBWait on block 0's IBSet, 2 a ping-pong
// that reuses the slot every round (block 1 IBSet's slot 1 back once it has read).
void Handover(int sync, int rounds, float *out)
{
    float *data = static_cast<float *>(GmAlloc(N * sizeof(float)));
    int32_t *ws = NewSync(2 * 8);
    Run(emu::CoreMix::AIV_ONLY, 2, [=] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(data, N);
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 2 * 8);
        Tiles t;
        LocalTensor<float> v = t.data.Get<float>();
        LocalTensor<int32_t> ub = t.poll.Get<int32_t>();
        for (int r = 0; r < rounds; ++r) {
            if (GetBlockIdx() == 0) {
                if (r > 0 && sync == 2) IBWait(s, ub, 1, 0);  // block 1 has read the previous round
                Duplicate(v, static_cast<float>(r + 1), N);
                SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
                WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
                DataCopy(g, v, N);
                SetFlag<HardEvent::MTE3_V>(EVENT_ID0);
                WaitFlag<HardEvent::MTE3_V>(EVENT_ID0);
                if (sync != 0) IBSet(s, ub, 0, 0);
            } else {
                if (sync != 0) IBWait(s, ub, 0, 0);
                DataCopy(v, g, N);
                SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
                WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
                if (out != nullptr) out[r] = v.GetValue(N - 1);
                if (sync == 2 && r + 1 < rounds) IBSet(s, ub, 1, 0);
            }
        }
    });
    GmFree(data);
    GmFree(ws);
}

void handover_ordered()
{
    float got[1] = {0};
    Handover(1, 1, got);
    if (got[0] != 1.0f) std::printf("FAIL: block 1 read %g, not 1\n", got[0]);
}

void handover_without_ibwait() { Handover(0, 1, nullptr); }

void handover_ping_pong()
{
    float got[3] = {0, 0, 0};
    Handover(2, 3, got);
    for (int r = 0; r < 3; ++r)
        if (got[r] != r + 1.0f) std::printf("FAIL: round %d read %g\n", r, got[r]);
}

// The slot reused without the consumer's "read" back: block 0's second write is not ordered
// after block 1's first read (its second IBSet waits for block 1's IBWait, which came before the read).
void reuse_without_ack() { Handover(1, 2, nullptr); }

// The slot initialised by the host to 1: the IBWait passes at once (no IBSet in the launch).
void host_preset_slot()
{
    int32_t *ws = NewSync(8);
    ws[0] = 1;
    Run(emu::CoreMix::AIV_ONLY, 1, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 8);
        Tiles t;
        IBWait(s, t.poll.Get<int32_t>(), 0, 0);
    });
    if (ws[0] != 0) std::printf("FAIL: the slot holds %d after the IBWait\n", ws[0]);
    GmFree(ws);
}

// IBSet / IBWait on the cube core return at once (Atlas A2), whatever the slot holds.
void aic_is_a_no_op()
{
    int32_t *ws = NewSync(8);
    ws[0] = 1;
    Run(emu::CoreMix::AIC_ONLY, 1, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 8);
        LocalTensor<int32_t> none;
        IBSet(s, none, 0, 0);  // would wait for 0 on a vector core
        IBWait<false>(s, none, 5, 3);
    });
    if (ws[0] != 1) std::printf("FAIL: the cube core wrote the slot\n");
    GmFree(ws);
}

// Every vector core of two AI cores (isAIVOnly = false: 4 slots per event) IBSet's its slot of
// eventID 2; the host sees them at 4 * 8 * 2 + idx * 8.
void mix_slots_of_every_vector_core()
{
    int32_t *ws = NewSync(4 * 8 * 3);
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 4 * 8 * 3);
        if ASCEND_IS_AIV {
            Tiles t;
            IBSet<false>(s, t.poll.Get<int32_t>(), static_cast<int32_t>(GetBlockIdx()), 2);
        }
    });
    for (int i = 0; i < 4 * 8 * 3; ++i)
        if (ws[i] != (i >= 64 && i % 8 == 0 ? 1 : 0)) std::printf("FAIL: int32 %d holds %d\n", i, ws[i]);
    GmFree(ws);
}

// 49 vector blocks on the 48 vector cores: block 48 runs in the second wave and IBWait's the slot
// block 0 IBSet in the first; the data block 0 wrote before is ordered before block 48's read.
void across_waves()
{
    constexpr uint32_t blocks = 49;
    float *data = static_cast<float *>(GmAlloc(N * sizeof(float)));
    int32_t *ws = NewSync(blocks * 8);
    float got = 0;
    float *out = &got;
    Run(emu::CoreMix::AIV_ONLY, blocks, [=] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(data, N);
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, blocks * 8);
        Tiles t;
        LocalTensor<float> v = t.data.Get<float>();
        if (GetBlockIdx() == 0) {
            Duplicate(v, 3.0f, N);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(g, v, N);
            IBSet(s, t.poll.Get<int32_t>(), 0, 0);
        } else if (GetBlockIdx() == blocks - 1) {
            IBWait(s, t.poll.Get<int32_t>(), 0, 0);
            DataCopy(v, g, N);
            SetFlag<HardEvent::MTE2_S>(EVENT_ID0);
            WaitFlag<HardEvent::MTE2_S>(EVENT_ID0);
            *out = v.GetValue(0);
        }
    });
    if (got != 3.0f) std::printf("FAIL: block 48 read %g, not 3\n", got);
    GmFree(data);
    GmFree(ws);
}

// Misuses.
void wait_never_set()
{
    int32_t *ws = NewSync(2 * 8 * 3);
    try {
        Run(emu::CoreMix::AIV_ONLY, 2, [=] {
            GlobalTensor<int32_t> s;
            s.SetGlobalBuffer(ws, 2 * 8 * 3);
            Tiles t;
            if (GetBlockIdx() == 0) IBWait(s, t.poll.Get<int32_t>(), 1, 2);  // block 1 never IBSet's
        });
    } catch (const emu::LaunchFault &) {  // FaultMode kRaise: the launch ended, the memory is still ours
        GmFree(ws);
        throw;
    }
    GmFree(ws);
}

void set_twice_never_waited()
{
    int32_t *ws = NewSync(8);
    Run(emu::CoreMix::AIV_ONLY, 1, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 8);
        Tiles t;
        IBSet(s, t.poll.Get<int32_t>(), 0, 0);
        IBSet(s, t.poll.Get<int32_t>(), 0, 0);
    });
    GmFree(ws);
}

// The workspace holds the slots of eventID 0 only (2 blocks x 8 int32).
void slot_outside_workspace()
{
    int32_t *ws = NewSync(2 * 8);
    Run(emu::CoreMix::AIV_ONLY, 2, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 2 * 8);
        Tiles t;
        if (GetBlockIdx() == 1) IBSet(s, t.poll.Get<int32_t>(), 1, 1);
    });
    GmFree(ws);
}

// The same workspace without a size: eventID 1's slot of block 1 is past the allocation.
void slot_outside_allocation()
{
    int32_t *ws = NewSync(2 * 8);
    Run(emu::CoreMix::AIV_ONLY, 2, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws);
        Tiles t;
        if (GetBlockIdx() == 1) IBWait(s, t.poll.Get<int32_t>(), 1, 1);
    });
    GmFree(ws);
}

void ub_workspace_too_small()
{
    int32_t *ws = NewSync(8);
    Run(emu::CoreMix::AIV_ONLY, 1, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 8);
        Tiles t;
        LocalTensor<int32_t> ub = t.poll.Get<int32_t>();
        ub.SetSize(4);
        IBSet(s, ub, 0, 0);
    });
    GmFree(ws);
}

// Block 0 writes `v` into `slot` with a plain DataCopy after a while (another core of the
// launch is by then blocked in its IBWait or SyncAll).
void PlainSlotWrite(const GlobalTensor<int32_t> &slot, Tiles &t, int32_t v)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    LocalTensor<int32_t> w = t.data.Get<int32_t>();
    Duplicate(w, v, 8);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
    DataCopy(slot, w, 8);
    PipeBarrier<PIPE_ALL>();
}

// A slot made ready by a plain kernel write releases its IBWait, also when the writer then
// blocks (here in SyncAll) before the waiter looked again: no core is stuck.
void plain_write_releases_wait()
{
    int32_t *ws = NewSync(2 * 8);
    Run(emu::CoreMix::AIV_ONLY, 2, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 16);
        Tiles t;
        if (GetBlockIdx() == 0) {
            PlainSlotWrite(s, t, 1);
        } else {
            IBWait(s, t.poll.Get<int32_t>(), 0, 0);
        }
        SyncAll<true>();
    });
    GmFree(ws);
}

// Block 0 writes data and IBSet's the slot, block 1 IBWait's it (the slot is 0 again); then
// block 2, never ordered after block 0, sets the slot with a plain write, and block 3's IBWait
// passes on that write and reads block 0's data: a race (the slot's earlier hand-over orders
// nothing for block 3).
void stale_handover_orders_nothing()
{
    float *data = static_cast<float *>(GmAlloc(N * sizeof(float)));
    int32_t *ws = NewSync(4 * 8);
    Run(emu::CoreMix::AIV_ONLY, 4, [=] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(data, N);
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 32);
        Tiles t;
        LocalTensor<int32_t> ub = t.poll.Get<int32_t>();
        LocalTensor<float> v = t.data.Get<float>();
        const int64_t b = GetBlockIdx();
        if (b == 0) {
            Duplicate(v, 1.0f, N);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(g, v, N);
            IBSet(s, ub, 0, 0);
        } else if (b == 1) {
            IBWait(s, ub, 0, 0);
        } else if (b == 2) {
            PlainSlotWrite(s, t, 1);
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            IBWait(s, ub, 0, 0);
            DataCopy(v, g, N);
            PipeBarrier<PIPE_ALL>();
        }
    });
    GmFree(data);
    GmFree(ws);
}

// The poll is a DataCopy of a 32-byte block: ubWorkspace must start 32-byte aligned.
void ub_workspace_misaligned()
{
    int32_t *ws = NewSync(8);
    Run(emu::CoreMix::AIV_ONLY, 1, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, 8);
        Tiles t;
        IBSet(s, t.data.Get<int32_t>()[1], 0, 0);
    });
    GmFree(ws);
}

// Block 0 waits for block 48, which runs in the second wave here: reported as a deadlock that
// says so.
void wait_on_later_wave()
{
    constexpr uint32_t blocks = 49;
    int32_t *ws = NewSync(blocks * 8);
    Run(emu::CoreMix::AIV_ONLY, blocks, [=] {
        GlobalTensor<int32_t> s;
        s.SetGlobalBuffer(ws, blocks * 8);
        Tiles t;
        if (GetBlockIdx() == 0) IBWait(s, t.poll.Get<int32_t>(), 48, 0);
        if (GetBlockIdx() == 48) IBSet(s, t.poll.Get<int32_t>(), 48, 0);
    });
    GmFree(ws);
}

// A wait no core can end in FaultMode kRaise ends the launch with LaunchFault naming the call;
// the process survives and its next launch runs.
void deadlock_in_raise_mode_survives()
{
    emu::SetFaultMode(emu::FaultMode::kRaise);
    bool raised = false;
    try {
        wait_never_set();
    } catch (const emu::LaunchFault &e) {
        raised = std::strstr(e.what(), "IBWait(blockIdx 1, eventID 2)") != nullptr;
        if (!raised) std::printf("FAIL: unexpected message: %s\n", e.what());
    }
    if (!raised) std::printf("FAIL: no LaunchFault\n");
    handover_ordered();
    std::printf("survived\n");
}

}  // namespace

int main(int argc, char **argv)
{
    const race_cases::Cases cases = {
        {"handover_ordered", handover_ordered},
        {"handover_without_ibwait", handover_without_ibwait},
        {"handover_ping_pong", handover_ping_pong},
        {"reuse_without_ack", reuse_without_ack},
        {"host_preset_slot", host_preset_slot},
        {"aic_is_a_no_op", aic_is_a_no_op},
        {"mix_slots_of_every_vector_core", mix_slots_of_every_vector_core},
        {"across_waves", across_waves},
        {"wait_never_set", wait_never_set},
        {"set_twice_never_waited", set_twice_never_waited},
        {"slot_outside_workspace", slot_outside_workspace},
        {"slot_outside_allocation", slot_outside_allocation},
        {"ub_workspace_too_small", ub_workspace_too_small},
        {"deadlock_in_raise_mode_survives", deadlock_in_raise_mode_survives},
        {"plain_write_releases_wait", plain_write_releases_wait},
        {"stale_handover_orders_nothing", stale_handover_orders_nothing},
        {"ub_workspace_misaligned", ub_workspace_misaligned},
        {"wait_on_later_wave", wait_on_later_wave},
    };
    return race_cases::Main("ib_sync_tests", cases, argc, argv);
}
