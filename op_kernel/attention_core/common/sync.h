// Synchronisation vocabulary of the core: the cross-core flag ids of the cube <-> vector
// hand-off and a helper for an in-order dependency between two pipes of one core.
#pragma once
#include "kernel_operator.h"
#include "../forward/forward_params.h"

namespace AttentionCore {

// ---------------------------------------------------------------- cross-core flags
// Every cross-core flag id of the core, one table (mode 2: one cube set pairs with one wait on
// each of its two vector cores, the two vector sets pair with one cube wait). Ids 1-10 are the
// user range on Atlas A2 (0 is left alone). Ids are unique within a phase; phases that run in
// one launch (FAG V5's recompute forward, then its backward) are separated by SyncAll, which
// leaves no flag pending, so ids may repeat across phases.
//
// Forward (forward_cube.h, forward_vector.h, kv_antiquant.h):
constexpr uint16_t FLAG_S_READY = 1;  // cube -> vector: S block is in its workspace slot
constexpr uint16_t FLAG_O_READY = 2;  // cube -> vector: P.V block is in its O slot
// vector -> cube: P block of slot s written (S slot consumed). One id per slot: a vector core
// may already announce block g+1 while its partner is still on block g, and a shared id would
// let the two announcements of one core stand for the pair.
constexpr uint16_t FLAG_P_READY0 = 3;  // + slot, WS_SLOTS ids
__aicore__ inline uint16_t FlagPReady(uint32_t slot) { return static_cast<uint16_t>(FLAG_P_READY0 + slot); }
// K/V produced on the chip (KvSourceBase hooks, int8 decode cache): vector -> cube "the next key
// block's K and V are in the ring" (both vector cores set, the cube waits once), cube -> vector
// "the oldest ring slot is loaded into L1 and may be overwritten".
constexpr uint16_t FLAG_KV_READY = FLAG_P_READY0 + WS_SLOTS;
constexpr uint16_t FLAG_KV_FREE = FLAG_KV_READY + 1;
//
// Backward (backward_cube.h, backward_vector.h):
constexpr uint16_t FLAG_BWD_SDP = 5;  // cube -> vector: S and dP of the next step are in their slot
// vector -> cube: P and dS of slot `slot` are written. One id per slot (up to 3 slots): with the
// pipelined cube a vector core may finish step i + 1 while its partner is still on step i, and
// a shared id would let the fast core's two announcements stand for the pair.
constexpr uint16_t FLAG_BWD_GRAD0 = 6;
constexpr uint16_t FLAG_BWD_GRAD1 = 7;
constexpr uint16_t FLAG_BWD_GRAD2 = 10;
__aicore__ inline uint16_t FlagBwdGrad(uint32_t slot)
{
    return slot == 0 ? FLAG_BWD_GRAD0 : (slot == 1 ? FLAG_BWD_GRAD1 : FLAG_BWD_GRAD2);
}
constexpr uint16_t FLAG_BWD_DQ = 9;  // cube -> vector: the step's dQ partial is in its dQ slot
//
// Sparse backward (sparse_backward_cube.h, sparse_backward_vector.h):
constexpr uint16_t FLAG_SPARSE_SDP = 7;   // cube -> vector: S and dP of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_GRAD = 8;  // vector -> cube: P and dS of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_KV = 9;    // vector -> cube: the chunk's K/V rows are in their slots

// Compile-time checks of the table: every id of a phase in 1-10 and no two alike.
struct FlagRange {
    uint16_t first;
    uint16_t count;
};
template <uint32_t N> constexpr bool FlagsValid(const FlagRange (&ranges)[N])
{
    for (uint32_t i = 0; i < N; ++i) {
        if (ranges[i].first < 1 || ranges[i].first + ranges[i].count - 1 > 10) return false;
        for (uint32_t j = 0; j < i; ++j) {
            const bool apart = ranges[i].first >= ranges[j].first + ranges[j].count ||
                               ranges[j].first >= ranges[i].first + ranges[i].count;
            if (!apart) return false;
        }
    }
    return true;
}
constexpr FlagRange FORWARD_FLAGS[] = {
    {FLAG_S_READY, 1}, {FLAG_O_READY, 1}, {FLAG_P_READY0, WS_SLOTS}, {FLAG_KV_READY, 1}, {FLAG_KV_FREE, 1}};
constexpr FlagRange BACKWARD_FLAGS[] = {
    {FLAG_BWD_SDP, 1}, {FLAG_BWD_GRAD0, 1}, {FLAG_BWD_GRAD1, 1}, {FLAG_BWD_GRAD2, 1}, {FLAG_BWD_DQ, 1}};
constexpr FlagRange SPARSE_BACKWARD_FLAGS[] = {{FLAG_SPARSE_SDP, 1}, {FLAG_SPARSE_GRAD, 1}, {FLAG_SPARSE_KV, 1}};
static_assert(FlagsValid(FORWARD_FLAGS), "forward cross-core flag ids overlap or leave 1-10");
static_assert(FlagsValid(BACKWARD_FLAGS), "backward cross-core flag ids overlap or leave 1-10");
static_assert(FlagsValid(SPARSE_BACKWARD_FLAGS), "sparse backward cross-core flag ids overlap or leave 1-10");

// Event ids of the vector cores' MTE2 <-> V hand-offs (HardEvent MTE2_V and V_MTE2; ids
// 0-7, 0 is PipeSync's), one table so that no two users of a kernel share an id.
constexpr int32_t VEC_EVT_S = 1;      // forward_vector.h: the two S buffers (1, 2)
constexpr int32_t VEC_EVT_MASK = 3;   // mask_band.h: a block's mask rows loaded ahead of Apply
constexpr int32_t VEC_EVT_KV_IN = 4;  // kv_antiquant.h: the int8 in-copies (ANTI_IN_COPIES ids)

// Pipe `evt`'s consumer waits for everything its producer issued so far (event id 0 is
// reserved for these strictly paired uses).
template <AscendC::HardEvent evt> __aicore__ inline void PipeSync()
{
    AscendC::SetFlag<evt>(0);
    AscendC::WaitFlag<evt>(0);
}

// Double buffering: the copy (0 or 1) the next operation takes, advancing `idx`; with one copy
// it is always 0.
__aicore__ inline uint32_t NextCopy(uint32_t &idx, uint32_t copies)
{
    const uint32_t cur = idx;
    idx = copies == 2 ? idx ^ 1u : 0u;
    return cur;
}

// Control words of the lazy P.V hand-off (forward_params.h), as word offsets into the control
// lines: vector core `sub`'s "rescaled" word and the cube's "flushed" word of slot `slot`.
__aicore__ inline uint32_t CtrlRescaled(uint32_t slot, uint32_t sub) { return (slot * 3 + sub) * CTRL_LINE_WORDS; }
__aicore__ inline uint32_t CtrlFlushed(uint32_t slot) { return (slot * 3 + 2) * CTRL_LINE_WORDS; }

// A control word written by one core and read by another: the scalar unit's data cache is
// written back after a store and invalidated before a load.
__aicore__ inline int32_t ReadCtrl(const AscendC::GlobalTensor<int32_t> &ctrl, uint32_t word)
{
    AscendC::GlobalTensor<int32_t> w = ctrl[word];
    AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE, AscendC::DcciDst::CACHELINE_OUT>(
        w);
    return w.GetValue(0);
}

__aicore__ inline void WriteCtrl(const AscendC::GlobalTensor<int32_t> &ctrl, uint32_t word, int32_t value)
{
    AscendC::GlobalTensor<int32_t> w = ctrl[word];
    w.SetValue(0, value);
    AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE, AscendC::DcciDst::CACHELINE_OUT>(
        w);
}

// Block index of a unit's key range [kvBegin, kvEnd): blocks start at kvBegin, so a band
// costs no more key columns than it needs.
struct KvBlock {
    int64_t k0;
    uint32_t cols;  // valid keys in the block
};

__aicore__ inline uint32_t KvBlockCount(int64_t kvBegin, int64_t kvEnd, uint32_t blockKv)
{
    return kvEnd <= kvBegin ? 0 : static_cast<uint32_t>((kvEnd - kvBegin + blockKv - 1) / blockKv);
}

__aicore__ inline KvBlock KvBlockAt(int64_t kvBegin, int64_t kvEnd, uint32_t blockKv, uint32_t j)
{
    KvBlock blk;
    blk.k0 = kvBegin + static_cast<int64_t>(j) * blockKv;
    const int64_t left = kvEnd - blk.k0;
    blk.cols = left < blockKv ? static_cast<uint32_t>(left) : blockKv;
    return blk;
}

__aicore__ inline uint32_t AlignUp(uint32_t x, uint32_t a) { return (x + a - 1) / a * a; }

}  // namespace AttentionCore
