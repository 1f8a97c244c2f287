// The hazard checker on global memory (ASCEND_EMU_RACECHECK=1; emu/race.h): small kernels that
// share a GM slot between cores (or between two pipes of one core), ordered or not. Run as
// `race_gm_tests <case>` by test_race_gm.py; a case exits 0 when its kernel ran clean.
#include "race_case_main.h"

using namespace AscendC;

namespace {

constexpr uint16_t FLAG_READY = 1, FLAG_CONSUMED = 2;

void Run(emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    race_cases::Launch("race_gm", mix, blockDim, body);
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

// Two group sets of one mode-0 flag are pending when a core waits once: the wait consumes the
// first (FIFO), which does not publish the write behind the second. Every vector core (two
// blocks) writes its own row, sets, and core 0 then overwrites row 2 and sets again; core 1
// waits once (or twice, `waitBoth`) and reads row 2.
void FifoOfSets(bool waitBoth)
{
    auto *g = static_cast<float *>(GmAlloc(4 * 64 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g, waitBoth] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 4 * 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 1024);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, static_cast<float>(i), 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(gt[i * 64], t, 64);
        CrossCoreSetFlag<0, PIPE_MTE3>(FLAG_READY);
        if (i == 0) DataCopy(gt[2 * 64], t, 64);
        CrossCoreSetFlag<0, PIPE_MTE3>(FLAG_READY);
        if (i == 1) {
            CrossCoreWaitFlag(FLAG_READY);
            if (waitBoth) CrossCoreWaitFlag(FLAG_READY);
            DataCopy(t[64], gt[2 * 64], 64);
        }
        if (i == 0) {  // every set bumps every core of the kind: consume both
            CrossCoreWaitFlag(FLAG_READY);
            CrossCoreWaitFlag(FLAG_READY);
        }
    });
    GmFree(g);
}
void fifo_wait_consumes_first_set() { FifoOfSets(false); }
void fifo_both_sets_consumed() { FifoOfSets(true); }

// Ordering is transitive across cores: the cube of block 0 writes a tile (Fixpipe) and tells
// its vector cores (mode 2); every vector core of both blocks then sets a mode-0 flag, which
// publishes what each knows; the vector cores of block 1 wait for it and read the tile. With
// `linkMissing` block 0's vector cores set the mode-0 flag before they waited for the cube.
void TransitiveOrder(bool linkMissing)
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 2, [slot, linkMissing] {
        GlobalTensor<float> g;
        g.SetGlobalBuffer(slot, 256);
        TPipe pipe;
        const int b = static_cast<int>(GetBlockIdx());
        if ASCEND_IS_AIC {
            if (b != 0) return;
            TBuf<TPosition::A2> a;
            TBuf<TPosition::B2> bb;
            TBuf<TPosition::CO1> c;
            pipe.InitBuffer(a, 512);
            pipe.InitBuffer(bb, 512);
            pipe.InitBuffer(c, 1024);
            MmadParams mm;
            mm.m = 16;
            mm.n = 16;
            mm.k = 16;
            Mmad(c.Get<float>(), a.Get<half>(), bb.Get<half>(), mm);
            SetFlag<HardEvent::M_FIX>(EVENT_ID0);
            WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
            FixpipeParamsV220 fix;
            fix.nSize = 16;
            fix.mSize = 16;
            fix.srcStride = 16;
            fix.dstStride = 16;
            Fixpipe(g, c.Get<float>(), fix);
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);
        }
        if ASCEND_IS_AIV {
            const int blk = b / 2;  // a vector core's GetBlockIdx() counts vector cores
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 1024);
            if (blk == 0 && !linkMissing) CrossCoreWaitFlag(FLAG_READY);
            CrossCoreSetFlag<0, PIPE_MTE3>(FLAG_CONSUMED);
            if (blk == 0 && linkMissing) CrossCoreWaitFlag(FLAG_READY);
            CrossCoreWaitFlag(FLAG_CONSUMED);
            if (blk == 1) DataCopy(ub.Get<float>(), g[GetSubBlockIdx() * 128], 128);
        }
    });
    GmFree(slot);
}
void transitive_order_across_three_cores() { TransitiveOrder(false); }
void transitive_link_missing() { TransitiveOrder(true); }

// Scalar GM accesses (GlobalTensor SetValue / GetValue) take part: core 0 sets an element that
// core 1 reads, with or without a SyncAll in between.
void ScalarAcrossCores(bool synced)
{
    auto *g = static_cast<int32_t *>(GmAlloc(64 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g, synced] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<int32_t> gt;
        gt.SetGlobalBuffer(g, 64);
        if (i == 0) gt.SetValue(3, 7);
        if (synced) SyncAll();
        if (i == 1) (void)gt.GetValue(3);
    });
    GmFree(g);
}
void scalar_set_get_unordered() { ScalarAcrossCores(false); }
void scalar_set_get_after_syncall() { ScalarAcrossCores(true); }

// More blocks than vector cores run in waves, in any order on the hardware: a block of a later
// wave writing the row a block of the first wave wrote races with it.
void cross_wave_same_row()
{
    constexpr int kBlocks = 130;  // more than the vector cores of any A2 SoC
    auto *g = static_cast<float *>(GmAlloc(kBlocks * 64 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, kBlocks, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, kBlocks * 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 256);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, static_cast<float>(i), 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopy(gt[(i == kBlocks - 1 ? 0 : i) * 64], t, 64);
    });
    GmFree(g);
}

// Neighbouring vector cores write 6 floats each 5 apart: one float of one granule is written
// by both.
void neighbours_overlap_one_float()
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
        DataCopyPad(gt[i * 5], t, DataCopyExtParams(1, 6 * sizeof(float), 0, 0, 0));
    });
    GmFree(g);
}

// A page written whole (one shadow record) and then in part by another core after a SyncAll
// splits into granules that keep both writes: a third core reading the page with no ordering
// after the partial write races with it; reading only the rest of the page does not.
void SplitPage(bool readAll)
{
    constexpr uint32_t kFloats = 4096 / sizeof(float);
    auto *g = static_cast<float *>(GmAlloc(2 * 4096));
    // a page-aligned page inside the allocation
    const uint64_t base = (reinterpret_cast<uint64_t>(g) + 4095) / 4096 * 4096;
    auto *page = reinterpret_cast<float *>(base);
    Run(emu::CoreMix::AIV_ONLY, 3, [page, readAll] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(page, kFloats);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 4096);
        LocalTensor<float> t = ub.Get<float>();
        if (i == 0) {
            Duplicate(t, 1.0f, kFloats);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(gt, t, kFloats);
        }
        SyncAll();
        if (i == 1) {
            Duplicate(t, 2.0f, 8);
            SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
            WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
            DataCopy(gt[16], t, 8);  // bytes [64, 96)
        }
        if (i == 2) {
            if (readAll)
                DataCopy(t, gt, kFloats);
            else
                DataCopy(t, gt[32], kFloats - 32);  // bytes [128, 4096)
        }
    });
    GmFree(g);
}
void split_page_partial_write_races() { SplitPage(true); }
void split_page_rest_is_clean() { SplitPage(false); }

// Two vector cores write interleaved 64-byte rows of one region (rows 128 bytes apart): no
// byte is written twice.
void strided_rows_interleave()
{
    auto *g = static_cast<float *>(GmAlloc(32 * 32 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 32 * 32);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 4096);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, static_cast<float>(i), 16 * 16);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopyPad(gt[i * 16], t, DataCopyExtParams(16, 16 * sizeof(float), 0, 16 * sizeof(float), 0));
    });
    for (int r = 0; r < 32; ++r)
        for (int k = 0; k < 32; ++k)
            if (r < 16 && g[r * 32 + k] != k / 16) std::printf("FAIL: row %d element %d is %g\n", r, k, g[r * 32 + k]);
    GmFree(g);
}

// One core adds into a row atomically, another overwrites it plainly with no ordering.
void atomic_then_plain_write()
{
    auto *g = static_cast<float *>(GmAlloc(64 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<float> gt;
        gt.SetGlobalBuffer(g, 64);
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 256);
        LocalTensor<float> t = ub.Get<float>();
        Duplicate(t, 1.0f, 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        if (i == 0) SetAtomicAdd<float>();
        DataCopy(gt, t, 64);
        if (i == 0) SetAtomicNone();
    });
    GmFree(g);
}

// Cross-core waits hold only their pipe. The vector cores read a slot the cube wrote (Fixpipe)
// and hand it back (FLAG_CONSUMED, set on MTE2, the pipe that read); the cube waits for that on
// `waitPipe` and overwrites the slot with Fixpipe. A wait on MTE2 orders MTE2 only: FIX needs it
// passed on (SetFlag/WaitFlag<MTE2_FIX> with `passOn`) or a wait on FIX or PIPE_S.
template <pipe_t waitPipe> void CubeReusesSlot(bool passOn)
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot, passOn] {
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
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);
            CrossCoreWaitFlag<2, waitPipe>(FLAG_CONSUMED);
            if (passOn) {
                SetFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
                WaitFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
            }
            Fixpipe(g, c.Get<float>(), fix);
        }
        if ASCEND_IS_AIV {
            TBuf<TPosition::VECCALC> ub;
            pipe.InitBuffer(ub, 1024);
            CrossCoreWaitFlag(FLAG_READY);
            DataCopy(ub.Get<float>(), g[GetSubBlockIdx() * 128], 128);
            CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_CONSUMED);
        }
    });
    GmFree(slot);
}
void wait_mte2_then_fix_overwrites() { CubeReusesSlot<PIPE_MTE2>(false); }
void wait_mte2_passed_on_to_fix() { CubeReusesSlot<PIPE_MTE2>(true); }
void wait_fix_then_fix_overwrites() { CubeReusesSlot<PIPE_FIX>(false); }

// The vector cores write a slot (MTE3) and tell the cube, which waits on MTE2 and then reads the
// slot with MTE2 (ordered) or with the scalar unit (GetValue: not ordered by a wait on MTE2).
void CubeReadsAfterMte2Wait(bool scalar)
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot, scalar] {
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
            CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_READY);
        }
        if ASCEND_IS_AIC {
            TBuf<TPosition::A1> l1;
            pipe.InitBuffer(l1, 1024);
            CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_READY);
            if (scalar)
                (void)g.GetValue(200);
            else
                DataCopy(l1.Get<float>(), g, 256);
        }
    });
    GmFree(slot);
}
void wait_mte2_then_scalar_reads() { CubeReadsAfterMte2Wait(true); }
void wait_mte2_then_mte2_reads() { CubeReadsAfterMte2Wait(false); }

// The cube reads a slot (MTE2) and hands it back on MTE2; each vector core waits on `waitPipe`
// and overwrites its half with MTE3. With `queue` the wait's row reaches MTE3 through the
// vector core's own work: MTE2 loads a tile (TQue VECIN hand-over to V), V adds, V hands it to
// MTE3 (TQue VECOUT), which writes it to the slot.
template <pipe_t waitPipe> void VectorReusesSlot(bool queue)
{
    auto *slot = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    auto *src = static_cast<float *>(GmAlloc(256 * sizeof(float)));
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [slot, src, queue] {
        GlobalTensor<float> g, gs;
        g.SetGlobalBuffer(slot, 256);
        gs.SetGlobalBuffer(src, 256);
        TPipe pipe;
        if ASCEND_IS_AIC {
            TBuf<TPosition::A1> l1;
            pipe.InitBuffer(l1, 1024);
            DataCopy(l1.Get<float>(), g, 256);
            CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_CONSUMED);
        }
        if ASCEND_IS_AIV {
            const int me = static_cast<int>(GetSubBlockIdx());
            TQue<TPosition::VECIN, 1> in;
            TQue<TPosition::VECOUT, 1> out;
            pipe.InitBuffer(in, 1, 512);
            pipe.InitBuffer(out, 1, 512);
            CrossCoreWaitFlag<2, waitPipe>(FLAG_CONSUMED);
            LocalTensor<float> o = out.AllocTensor<float>();
            if (queue) {
                LocalTensor<float> x = in.AllocTensor<float>();
                DataCopy(x, gs[me * 128], 128);
                in.EnQue(x);
                x = in.DeQue<float>();
                Adds(o, x, 1.0f, 128);
                in.FreeTensor(x);
            } else {
                Duplicate(o, 1.0f, 128);
            }
            out.EnQue(o);
            o = out.DeQue<float>();
            DataCopy(g[me * 128], o, 128);
            out.FreeTensor(o);
        }
    });
    GmFree(slot);
    GmFree(src);
}
void wait_mte2_then_mte3_overwrites() { VectorReusesSlot<PIPE_MTE2>(false); }
void wait_mte2_queued_to_mte3() { VectorReusesSlot<PIPE_MTE2>(true); }
void wait_mte3_then_mte3_overwrites() { VectorReusesSlot<PIPE_MTE3>(false); }

// GlobalTensor::operator() hands out a writable reference: core 0 writes an element through it,
// core 1 reads the element, with or without a SyncAll in between.
void RefWriteAcrossCores(bool synced)
{
    auto *g = static_cast<int32_t *>(GmAlloc(64 * sizeof(int32_t)));
    Run(emu::CoreMix::AIV_ONLY, 2, [g, synced] {
        const int i = static_cast<int>(GetBlockIdx());
        GlobalTensor<int32_t> gt;
        gt.SetGlobalBuffer(g, 64);
        if (i == 0) gt(5) = 9;
        if (synced) SyncAll();
        if (i == 1) (void)gt.GetValue(5);
    });
    if (synced && g[5] != 9) std::printf("FAIL: element 5 is %d\n", g[5]);
    GmFree(g);
}
void ref_write_unordered() { RefWriteAcrossCores(false); }
void ref_write_after_syncall() { RefWriteAcrossCores(true); }

// Both cores read one element through operator() at once: two reads, not a race.
void ref_reads_concurrent()
{
    auto *g = static_cast<int32_t *>(GmAlloc(64 * sizeof(int32_t)));
    g[5] = 4;
    Run(emu::CoreMix::AIV_ONLY, 2, [g] {
        GlobalTensor<int32_t> gt;
        gt.SetGlobalBuffer(g, 64);
        const int32_t v = gt(5);
        if (v != 4) std::printf("FAIL: element 5 reads %d\n", v);
    });
    GmFree(g);
}

// A local SetFlag no WaitFlag consumed at the end of the kernel.
void local_flag_never_waited()
{
    Run(emu::CoreMix::AIV_ONLY, 1, [] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> ub;
        pipe.InitBuffer(ub, 256);
        Duplicate(ub.Get<float>(), 1.0f, 64);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID2);
    });
}

// A cross-core set the target core never waits for.
void cross_flag_never_waited()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIC {
            CrossCoreSetFlag<2, PIPE_FIX>(FLAG_READY);
        }
    });
}

// A mode-1 group set only one of the two vector cores makes.
void group_set_incomplete()
{
    Run(emu::CoreMix::MIX_AIC_1_2, 1, [] {
        if ASCEND_IS_AIV {
            if (GetSubBlockIdx() == 0) CrossCoreSetFlag<1, PIPE_MTE3>(FLAG_READY);
        }
    });
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
    const race_cases::Cases cases = {
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
        {"fifo_wait_consumes_first_set", fifo_wait_consumes_first_set},
        {"fifo_both_sets_consumed", fifo_both_sets_consumed},
        {"transitive_order_across_three_cores", transitive_order_across_three_cores},
        {"transitive_link_missing", transitive_link_missing},
        {"scalar_set_get_unordered", scalar_set_get_unordered},
        {"scalar_set_get_after_syncall", scalar_set_get_after_syncall},
        {"cross_wave_same_row", cross_wave_same_row},
        {"neighbours_overlap_one_float", neighbours_overlap_one_float},
        {"split_page_partial_write_races", split_page_partial_write_races},
        {"split_page_rest_is_clean", split_page_rest_is_clean},
        {"strided_rows_interleave", strided_rows_interleave},
        {"atomic_then_plain_write", atomic_then_plain_write},
        {"wait_mte2_then_fix_overwrites", wait_mte2_then_fix_overwrites},
        {"wait_mte2_passed_on_to_fix", wait_mte2_passed_on_to_fix},
        {"wait_fix_then_fix_overwrites", wait_fix_then_fix_overwrites},
        {"wait_mte2_then_scalar_reads", wait_mte2_then_scalar_reads},
        {"wait_mte2_then_mte2_reads", wait_mte2_then_mte2_reads},
        {"wait_mte2_then_mte3_overwrites", wait_mte2_then_mte3_overwrites},
        {"wait_mte2_queued_to_mte3", wait_mte2_queued_to_mte3},
        {"wait_mte3_then_mte3_overwrites", wait_mte3_then_mte3_overwrites},
        {"ref_write_unordered", ref_write_unordered},
        {"ref_write_after_syncall", ref_write_after_syncall},
        {"ref_reads_concurrent", ref_reads_concurrent},
        {"local_flag_never_waited", local_flag_never_waited},
        {"cross_flag_never_waited", cross_flag_never_waited},
        {"group_set_incomplete", group_set_incomplete},
    };
    return race_cases::Main("race_gm_tests", cases, argc, argv);
}
