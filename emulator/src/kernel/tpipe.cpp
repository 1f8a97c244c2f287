// TPipe buffer carving and event-id pools (asc-devkit `include/basic_api/kernel_tpipe.h`).
#include "emu/core.h"
#include "emu/soc.h"
#include <mutex>

#include "emu/device_memory.h"
#include "kernel_operator.h"

namespace AscendC {

namespace {
// Bytes a TPipe may hand out per physical buffer: the whole buffer, as CANN's CPU twin checks
// InitBuffer (asc-devkit impl/basic_api/utils/kernel_utils_mode_cpu.h, bufferInitLen for arch
// 2201: UB 192 KiB, L1 512 KiB, FB 7 KiB). The NPU build does not check at all; the parts the
// compiler and the API reserve (UB's top 8 KiB for some APIs, 256 B of UB and L1 in mixed
// kernels, which GetCoreMemSize already leaves out) are the kernel's business there too.
uint64_t Capacity(emu::Buf b)
{
    const emu::SocSpec &s = emu::CurrentSoc();
    switch (b) {
        case emu::Buf::UB:
            return s.ubBytes;
        case emu::Buf::L1:
            return s.l1Bytes;
        case emu::Buf::L0A:
            return s.l0aBytes;
        case emu::Buf::L0B:
            return s.l0bBytes;
        case emu::Buf::L0C:
            return s.l0cBytes;
        case emu::Buf::BT:
            return s.btBytes;
        case emu::Buf::FB:
            return s.fbBytes;
        default:
            return 0;
    }
}
}  // namespace

const char *PositionName(TPosition p)
{
    static const char *n[] = {"GM",    "A1",     "A2",      "B1",  "B2",   "C1",        "C2",           "CO1", "CO2",
                              "VECIN", "VECOUT", "VECCALC", "SPM", "TSCM", "C2PIPE2GM", "C2PIPE2LOCAL", "MAX"};
    const int i = static_cast<int>(p);
    return i <= 16 ? n[i] : "?";
}

const char *HardEventName(HardEvent e)
{
    static const char *n[] = {
        "MTE2_MTE1", "MTE1_MTE2", "MTE1_M",    "M_MTE1",    "MTE2_V",   "V_MTE2",   "MTE3_V",   "V_MTE3",  "M_V",
        "V_M",       "V_V",       "MTE3_MTE1", "MTE1_MTE3", "MTE1_V",   "MTE2_M",   "M_MTE2",   "V_MTE1",  "M_FIX",
        "FIX_M",     "MTE3_MTE2", "MTE2_MTE3", "S_V",       "V_S",      "S_MTE2",   "MTE2_S",   "S_MTE3",  "MTE3_S",
        "MTE2_FIX",  "FIX_MTE2",  "FIX_S",     "M_S",       "FIX_MTE3", "MTE1_FIX", "FIX_MTE1", "FIX_FIX", "MAX"};
    return n[static_cast<int>(e)];
}

bool HardEventOnThisCore(HardEvent e)
{
    using H = HardEvent;
    static const H aiv[] = {H::MTE2_V, H::V_MTE2, H::MTE3_V, H::V_MTE3, H::V_V,    H::MTE3_MTE2, H::MTE2_MTE3,
                            H::S_V,    H::V_S,    H::S_MTE2, H::MTE2_S, H::S_MTE3, H::MTE3_S};
    static const H aic[] = {H::MTE2_MTE1, H::MTE1_MTE2, H::MTE1_M,   H::M_MTE1,   H::MTE3_MTE1, H::MTE1_MTE3,
                            H::MTE2_M,    H::M_MTE2,    H::M_FIX,    H::FIX_M,    H::MTE3_MTE2, H::MTE2_MTE3,
                            H::S_MTE2,    H::MTE2_S,    H::S_MTE3,   H::MTE3_S,   H::MTE2_FIX,  H::FIX_MTE2,
                            H::FIX_S,     H::M_S,       H::FIX_MTE3, H::MTE1_FIX, H::FIX_MTE1,  H::FIX_FIX};
    if (emu::Ctx().kind == emu::kAiv) {
        for (H h : aiv)
            if (h == e) return true;
    } else {
        for (H h : aic)
            if (h == e) return true;
    }
    return false;
}

TPipe::TPipe()
{
    emu::CoreCtx &c = emu::Ctx();
    c.tpipe = this;
    c.atomicOp = 0;  // set_atomic_none()
    c.maskCounterMode = false;
    c.maskHigh = c.maskLow = ~0ull;
    if (c.kind == emu::kAic) {
        // On the AIC the pipe pre-sets M_MTE1 ids 0..2 (kernel_tpipe_impl.h), for the Matmul API.
        for (int id = 0; id < 3; ++id) {
            eventUsed_[static_cast<int>(HardEvent::M_MTE1)] |= 1u << id;
            ++c.flags[static_cast<int>(HardEvent::M_MTE1)][id];
            emu::TimePresetFlag(static_cast<int>(HardEvent::M_MTE1), id);
        }
        presetPending_ = true;
    }
}

TPipe::~TPipe()
{
    emu::CoreCtx &c = emu::Ctx();
    if (c.tpipe == this) c.tpipe = nullptr;
    if (presetPending_)  // the pre-set M_MTE1 flags are the pipe's own, not the kernel's
        for (int id = 0; id < 3; ++id) {
            int &f = c.flags[static_cast<int>(HardEvent::M_MTE1)][id];
            if (f > 0) --f;
        }
}

void TPipe::Destroy()
{
    if (presetPending_) {
        for (int id = 0; id < 3; ++id) {
            WaitFlag<HardEvent::M_MTE1>(id);
            ReleaseId(HardEvent::M_MTE1, static_cast<TEventID>(id));
        }
        presetPending_ = false;
    }
    emu::RaceBarrierAll();
}

void TPipe::Reset()
{
    for (auto &u : used_) u = 0;
    buffers_ = 0;
}

void TPipe::Carve(TQueBindBase &q, TPosition pos, uint32_t num, uint32_t len, const char *api)
{
    const emu::Buf b = PhysicalOf(pos);
    if (b == emu::Buf::GM) emu::Fail(api, "position %s has no local buffer", PositionName(pos));
    if (num < 1 || num > QBUF_MAX_LEN) emu::Fail(api, "num %u is outside [1, %d]", num, QBUF_MAX_LEN);
    if (buffers_ + num > static_cast<uint32_t>(QBUF_MAX_LEN))
        emu::Fail(api, "the pipe would manage %u buffers, more than QBUF_MAX_LEN %d", buffers_ + num, QBUF_MAX_LEN);
    if (len == 0) emu::Fail(api, "len 0 bytes for position %s", PositionName(pos));
    const uint64_t aligned = (static_cast<uint64_t>(len) + 31) / 32 * 32;
    uint64_t &used = used_[static_cast<int>(b)];
    // L0 buffers start at 512 B (L0A/L0B) or 1024 B (L0C) boundaries so Mmad/LoadData see aligned fractals.
    const uint64_t start = used;
    const uint64_t cap = Capacity(b);
    if (start + aligned * num > cap)
        emu::Fail(api, "%u x %llu bytes at %s (physical %s) exceed the buffer: %llu already used of %llu", num,
                  (unsigned long long)aligned, PositionName(pos), emu::BufName(b), (unsigned long long)start,
                  (unsigned long long)cap);
    uint8_t *base =
        reinterpret_cast<uint8_t *>(reinterpret_cast<uintptr_t>(emu::Ctx().mem[static_cast<int>(b)]) + start);
    q.EmuInit(pos, base, num, static_cast<uint32_t>(aligned));
    used = start + aligned * num;
    buffers_ += num;
    emu::NoteLocalUse(b, used);
}

TEventID TPipe::AllocId(HardEvent evt, bool mark)
{
    uint8_t &m = eventUsed_[static_cast<int>(evt)];
    for (int id = 0; id < QUE_MAX_EVENT; ++id)
        if (!(m & (1u << id))) {
            if (mark) m |= static_cast<uint8_t>(1u << id);
            return static_cast<TEventID>(id);
        }
    emu::Fail("TPipe::AllocEventID", "all %d ids of event %s are in use", QUE_MAX_EVENT, HardEventName(evt));
}

void TPipe::ReleaseId(HardEvent evt, TEventID id)
{
    if (id < 0 || id >= QUE_MAX_EVENT)
        emu::Fail("TPipe::ReleaseEventID", "id %d of event %s is outside [0, 7]", id, HardEventName(evt));
    eventUsed_[static_cast<int>(evt)] &= static_cast<uint8_t>(~(1u << id));
}

__gm__ uint8_t *GetSysWorkSpacePtr()
{
    // The system workspace is the first RESERVED_WORKSPACE bytes of the workspace on the NPU;
    // kernels that use it get a per-process zeroed device buffer of that size.
    static uint8_t *sys = nullptr;
    static std::once_flag once;
    std::call_once(once,
                   [] { sys = static_cast<uint8_t *>(emu::DeviceAlloc(RESERVED_WORKSPACE, "GetSysWorkSpacePtr")); });
    return sys;
}

}  // namespace AscendC
