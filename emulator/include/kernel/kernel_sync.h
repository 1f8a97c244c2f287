// Synchronisation (asc-devkit `include/basic_api/kernel_operator_block_sync_intf.h`, `impl/basic_api/kernel_event.h`): SetFlag/WaitFlag inside a core, PipeBarrier,
// SyncAll, IBSet/IBWait and the cross-core flags. The emulator executes every instruction at issue, so a
// correctly synchronised kernel computes what the hardware computes; a WaitFlag that no
// SetFlag can satisfy is reported (on the hardware the core would hang).
#pragma once
#include "emu/race.h"
#include "kernel/kernel_tensor.h"

// pipe_t and event_t are built into the CANN kernel compiler (bisheng), global and unscoped;
// kernels pass event_t ids (EVENT_ID0..EVENT_ID7) to SetFlag/WaitFlag(int32_t).
enum pipe_t : uint8_t {
    PIPE_S = 0,
    PIPE_V,
    PIPE_M,
    PIPE_MTE1,
    PIPE_MTE2,
    PIPE_MTE3,
    PIPE_ALL,
    PIPE_MTE4,
    PIPE_MTE5,
    PIPE_V2,
    PIPE_FIX
};
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };
enum class MemDsbT : uint8_t { ALL = 0, DDR, UB, SEQ };

// Compiler built-ins with the same meaning as PipeBarrier<pipe> and ICachePreLoad.
inline void pipe_barrier(pipe_t pipe)
{
    if (pipe == PIPE_ALL) emu::RaceBarrierAll();
}
inline void icache_preload(int64_t preFetchLen) { (void)preFetchLen; }

namespace AscendC {

const char *HardEventName(HardEvent e);
// Whether `e` has an event-id pool on the current core kind: e.g. V_MTE3 exists only on
// the AIV, M_FIX only on the AIC.
bool HardEventOnThisCore(HardEvent e);

template <HardEvent event> void SetFlag(int32_t eventID)
{
    if (eventID < 0 || eventID >= emu::kEventIds)
        emu::Fail("SetFlag", "event %s id %d is outside [0, 7]", HardEventName(event), eventID);
    if (!HardEventOnThisCore(event))
        emu::Fail("SetFlag", "event %s does not exist on this core type", HardEventName(event));
    ++emu::Ctx().flags[static_cast<int>(event)][eventID];
    emu::RaceFlagSet(static_cast<int>(event), eventID);
}
template <HardEvent event> void WaitFlag(int32_t eventID)
{
    if (eventID < 0 || eventID >= emu::kEventIds)
        emu::Fail("WaitFlag", "event %s id %d is outside [0, 7]", HardEventName(event), eventID);
    if (!HardEventOnThisCore(event))
        emu::Fail("WaitFlag", "event %s does not exist on this core type", HardEventName(event));
    int &f = emu::Ctx().flags[static_cast<int>(event)][eventID];
    if (f == 0)
        emu::Fail("WaitFlag", "event %s id %d was never set by a SetFlag on this core: the hardware would hang here",
                  HardEventName(event), eventID);
    --f;
    emu::RaceFlagWait(static_cast<int>(event), eventID);
}

template <pipe_t src, pipe_t dst> class TQueSync {
public:
    void SetFlag(TEventID id);
    void WaitFlag(TEventID id);
};

// Instructions of one pipe already complete in order; only PIPE_ALL orders across pipes.
template <pipe_t pipe> void PipeBarrier()
{
    static_assert(pipe != PIPE_S, "PipeBarrier<PIPE_S> is not supported");
    if (pipe == PIPE_ALL) emu::RaceBarrierAll();
}
template <MemDsbT arg0> void DataSyncBarrier() {}

// Instruction-cache prefetch (kernel_operator_cache_intf.h): no instruction cache is modelled.
inline void ICachePreLoad(const int64_t preFetchLen) { (void)preFetchLen; }
inline int64_t GetICachePreloadStatus() { return 0; }

// The base address of the cross-core (FFTS) flag table (kernel_operator_sync_impl.h for 2201);
// the emulator's cross-core flags need none.
inline void SetSyncBaseAddr(uint64_t config) { (void)config; }
// The scalar data cache is not modelled: scalar GM accesses go straight to memory.
enum class CacheLine : uint8_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst : uint8_t { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };
template <typename T, CacheLine entireType, DcciDst dcciDst> void DataCacheCleanAndInvalid(const GlobalTensor<T> &) {}
template <typename T, CacheLine entireType, DcciDst dcciDst> void DataCacheCleanAndInvalid(const LocalTensor<T> &) {}
template <typename T, CacheLine entireType> void DataCacheCleanAndInvalid(const GlobalTensor<T> &) {}

struct SyncAllConfig {
    pipe_t triggerPipe;
    pipe_t waitPipe;
};
constexpr SyncAllConfig DEFAULT_SYNC_ALL_CONFIG = {PIPE_ALL, PIPE_ALL};

template <bool isAIVOnly = true> void SyncAll() { emu::SyncAllCores(isAIVOnly); }
template <bool isAIVOnly = true>
void SyncAll(const GlobalTensor<int32_t> &gmWorkspace, const LocalTensor<int32_t> &ubWorkspace,
             const int32_t usedCores = 0)
{
    (void)ubWorkspace;
    (void)usedCores;
    emu::CheckGm("SyncAll", "gmWorkspace", gmWorkspace.GetPhyAddr(), static_cast<uint64_t>(GetBlockNum()) * 32);
    emu::SyncAllCores(true);
}

// IBSet / IBWait: a semaphore between two vector cores in GM, the 32-byte slot
// gmWorkspace[blockNum * 8 * eventID + blockIdx * 8] (blockNum = GetBlockNum(), twice that
// when !isAIVOnly: a MIX kernel's vector cores). IBSet waits until slot[0] == 0 and writes 1,
// IBWait waits until slot[0] == 1 and writes 0; each polls the slot through ubWorkspace (a GM->UB
// DataCopy, a scalar read) between two PipeBarrier<PIPE_ALL>, as the Atlas A2 implementation
// does. The slot is the kernel's GM: what the kernel or the host wrote there is what the calls
// see. On an AIC both return at once. A wait no core can end is reported as a deadlock naming
// the call, blockIdx and eventID; under the hazard checker a completed call orders everything the
// core that wrote the slot last did before that write before everything this core does after.
template <bool isAIVOnly = true>
void IBSet(const GlobalTensor<int32_t> &gmWorkspace, const LocalTensor<int32_t> &ubWorkspace, int32_t blockIdx,
           int32_t eventID)
{
    emu::InterBlockSync(true, isAIVOnly, gmWorkspace.GetPhyAddr(), gmWorkspace.GetSize(), ubWorkspace.EmuAddr(),
                        ubWorkspace.GetSize(), static_cast<int>(ubWorkspace.EmuBuf()), blockIdx, eventID);
}
template <bool isAIVOnly = true>
void IBWait(const GlobalTensor<int32_t> &gmWorkspace, const LocalTensor<int32_t> &ubWorkspace, int32_t blockIdx,
            int32_t eventID)
{
    emu::InterBlockSync(false, isAIVOnly, gmWorkspace.GetPhyAddr(), gmWorkspace.GetSize(), ubWorkspace.EmuAddr(),
                        ubWorkspace.GetSize(), static_cast<int>(ubWorkspace.EmuBuf()), blockIdx, eventID);
}

template <uint8_t modeId, pipe_t pipe> void CrossCoreSetFlag(uint16_t flagId)
{
    static_assert(pipe != PIPE_S && pipe != PIPE_ALL, "CrossCoreSetFlag: pipe must not be PIPE_S or PIPE_ALL");
    emu::CrossCoreSet(modeId, flagId, static_cast<int>(pipe));
}
template <uint8_t modeId = 0, pipe_t pipe = PIPE_S> void CrossCoreWaitFlag(uint16_t flagId)
{
    emu::CrossCoreWait(flagId, static_cast<int>(pipe));
}

}  // namespace AscendC
