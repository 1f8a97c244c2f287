// Synchronisation vocabulary of the core: the cross-core flag ids of the cube <-> vector
// hand-off, the in-core event ids of every stage (one table each, checked at compile time) and
// a helper for an in-order dependency between two pipes of one core.
#pragma once
#include "kernel_operator.h"
#include "../forward/forward_params.h"
#include "../variants/decode_params.h"

namespace AttentionCore {

// ---------------------------------------------------------------- cross-core flags
// Every cross-core flag id of the core, one table (mode 2: one cube set pairs with one wait on
// each of its two vector cores, the two vector sets pair with one cube wait). Ids 1-10 are the
// user range on Atlas A2 (0 is left alone). Ids are unique within a phase; phases that run in
// one launch (FAG V5's recompute forward, then its backward) are separated by SyncAll, which
// leaves no flag pending, so ids may repeat across phases.
//
// Forward (forward_cube.h, forward_vector.h, kv_ring.h):
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
// vector -> cube "this core's Q rows in the workspace are written": int8 decode (kv_antiquant.h),
// before the core, Q * scale_k; PFA with K/V staged in pairs (kv_nz.h QStart), the Nz copies of
// the Q blocks of its later units (both vector cores set once, the cube waits once, at its end
// where it loaded none).
constexpr uint16_t FLAG_Q_SCALED = FLAG_KV_FREE + 1;
// K/V staged per core (kv_nz.h, ForwardParams::kvNzOwnRows): vector -> cube "the next of this
// core's own K/V regions is staged" (both vector cores set once per region, the cube waits once).
constexpr uint16_t FLAG_KV_STAGED = FLAG_Q_SCALED + 1;
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
constexpr uint16_t FLAG_SPARSE_SDP = 7;     // cube -> vector: S and dP of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_GRAD = 8;    // vector -> cube: P and dS of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_KV = 9;      // vector -> cube: the chunk's K/V rows are in their slots
constexpr uint16_t FLAG_SPARSE_DQ = 10;     // cube -> vector: the dQ rows of a token held whole are out
constexpr uint16_t FLAG_SPARSE_SORTED = 6;  // vector -> cube: a token's list sorted in the main loop is stored

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
constexpr FlagRange FORWARD_FLAGS[] = {{FLAG_S_READY, 1},  {FLAG_O_READY, 1}, {FLAG_P_READY0, WS_SLOTS},
                                       {FLAG_KV_READY, 1}, {FLAG_KV_FREE, 1}, {FLAG_Q_SCALED, 1},
                                       {FLAG_KV_STAGED, 1}};
constexpr FlagRange BACKWARD_FLAGS[] = {
    {FLAG_BWD_SDP, 1}, {FLAG_BWD_GRAD0, 1}, {FLAG_BWD_GRAD1, 1}, {FLAG_BWD_GRAD2, 1}, {FLAG_BWD_DQ, 1}};
constexpr FlagRange SPARSE_BACKWARD_FLAGS[] = {
    {FLAG_SPARSE_SDP, 1}, {FLAG_SPARSE_GRAD, 1}, {FLAG_SPARSE_KV, 1}, {FLAG_SPARSE_DQ, 1}, {FLAG_SPARSE_SORTED, 1}};
static_assert(FlagsValid(FORWARD_FLAGS), "forward cross-core flag ids overlap or leave 1-10");
static_assert(FlagsValid(BACKWARD_FLAGS), "backward cross-core flag ids overlap or leave 1-10");
static_assert(FlagsValid(SPARSE_BACKWARD_FLAGS), "sparse backward cross-core flag ids overlap or leave 1-10");

// ---------------------------------------------------------------- in-core events
// Every SetFlag/WaitFlag event id of the stages, one table (an event id belongs to one
// HardEvent, i.e. one producer -> consumer pipe pair; ids 0-7 on Atlas A2, 0 is PipeSync's).
// A `+ copy` id takes one id per copy of a double-buffered tile. Each stage's list below is
// checked at compile time: every id in 1-7, and no two ranges of one HardEvent overlap.
//
// Forward cube (forward_cube.h):
constexpr int32_t FWD_EVT_K = 1;   // + copy: the K tile in L1 (MTE1_MTE2 free / MTE2_MTE1 loaded)
constexpr int32_t FWD_EVT_PV = 3;  // + copy: the P and V tiles in L1 (same pair)
// K/V pairs (the K/V source's KvPairCopies(), lazy P.V): pair copy c (K and V of one block,
// WS_SLOTS copies) takes id FWD_EVT_K + c, the K and P/V ranges together, and P its own:
constexpr int32_t FWD_EVT_P = 7;    // the P tile in L1 with K/V pairs (same pair)
constexpr int32_t FWD_EVT_QL1 = 5;  // + copy: the Q block in L1 (same pair)
constexpr int32_t FWD_EVT_L0 = 5;   // + copy: L0A/L0B operands (M_MTE1 / MTE1_M), L0C results (FIX_M /
                                    // M_FIX); lazy P.V: + 0 K^T, + 1 the P and V regions, S chunks
constexpr int32_t FWD_EVT_Q = 1;    // + copy: lazy P.V's Q chunk copies in L0A (M_MTE1 / MTE1_M)
constexpr int32_t FWD_EVT_ACC = 2;  // FIX_M: lazy P.V's accumulator written out
//
// Forward vector (forward_vector.h, mask_band.h, kv_ring.h):
constexpr int32_t VEC_EVT_S = 1;       // + buffer: the two S buffers (MTE2_V loaded / V_MTE2 free); before the
                                       // main loop also kv_nz.h's two staging in-copies
constexpr int32_t VEC_EVT_MASK = 3;    // MTE2_V: a block's mask rows loaded ahead of Apply
constexpr int32_t VEC_EVT_KV_IN = 4;   // + copy: the K/V ring's in-copies (MTE2_V / V_MTE2, KV_RING_IN_COPIES)
constexpr int32_t VEC_EVT_KV_OUT = 1;  // + copy: the K/V ring's Nz out-copies (V_MTE3 / MTE3_V, KV_RING_OUT_COPIES);
                                       // kv_nz.h's two staging out-copies (before the main loop)
constexpr int32_t VEC_EVT_P = 5;       // MTE3_V: the P buffer's store is done
constexpr int32_t VEC_EVT_FINISH = 6;  // MTE3_V: a unit's finish stores from the O-slot rows are done
// kv_nz.h's own staging in the main loop, in kernels with K/V staged (KV_NZ), which never hold
// the K/V ring: its two in-copies on the ring's in-copy ids (MTE2_V loaded / V_MTE2 free), its
// Nz copy on id 7 (V_MTE3 arranged / MTE3_V stored).
constexpr int32_t VEC_EVT_OWN_IN = VEC_EVT_KV_IN;
constexpr int32_t VEC_EVT_OWN_OUT = 7;
//
// Split-KV combine (split_kv_combine.h; after the forward vector stage, whose ids are all
// waited for by then):
constexpr int32_t COMBINE_EVT_STATS = 1;  // MTE2_V: a row group's statistics are in (its partial rows load behind)
//
// Backward cube (backward_cube.h):
constexpr int32_t BWD_EVT_L0 = 1;      // + copy: L0A/L0B (M_MTE1 / MTE1_M), L0C results (FIX_M / M_FIX)
constexpr int32_t BWD_EVT_ACC = 3;     // FIX_M / M_FIX: the dK/dV accumulators between units
constexpr int32_t BWD_EVT_STAGED = 1;  // MTE2_MTE1: a step's staged tiles are in L1
//
// Backward vector (backward_vector.h; with the forward's mask policies, VEC_EVT_MASK):
constexpr int32_t BWD_EVT_CAST = 1;  // + set: the cast-out's two buffer sets (V_MTE2, MTE2_V,
                                     // MTE3_V, V_MTE3)
constexpr int32_t BWD_EVT_SDP = 4;   // + 0 S, + 1 dP: a step's S / dP rows are in (MTE2_V)
//
// Sparse backward cube (sparse_backward_cube.h):
constexpr int32_t SPARSE_EVT_K = 1;       // + copy: MTE1_MTE2, the two K copies (the dQ pass's halves)
constexpr int32_t SPARSE_EVT_V = 3;       // MTE1_MTE2: V
constexpr int32_t SPARSE_EVT_PDS = 4;     // MTE1_MTE2: P/dS
constexpr int32_t SPARSE_EVT_STAGED = 1;  // + half: MTE2_MTE1, the dQ pass's staging half is loaded
constexpr int32_t SPARSE_EVT_QK = 3;      // MTE2_MTE1: a token's Q and its first chunk's K are loaded
constexpr int32_t SPARSE_EVT_L0A = 1;     // + copy: M_MTE1, L0A
constexpr int32_t SPARSE_EVT_L0B = 3;     // + copy: M_MTE1, L0B
constexpr int32_t SPARSE_EVT_TILE = 1;    // + tile: FIX_M, an L0C tile written out (SPARSE_MAX_TILES)
constexpr uint32_t SPARSE_MAX_TILES = 3;

struct EventRange {
    AscendC::HardEvent evt;
    int32_t first;
    int32_t count;
};
template <uint32_t N> constexpr bool EventsValid(const EventRange (&ranges)[N])
{
    for (uint32_t i = 0; i < N; ++i) {
        if (ranges[i].first < 1 || ranges[i].first + ranges[i].count - 1 > 7) return false;
        for (uint32_t j = 0; j < i; ++j) {
            const bool apart = ranges[i].evt != ranges[j].evt || ranges[i].first >= ranges[j].first + ranges[j].count ||
                               ranges[j].first >= ranges[i].first + ranges[i].count;
            if (!apart) return false;
        }
    }
    return true;
}
using HE = AscendC::HardEvent;
constexpr EventRange FORWARD_CUBE_EVENTS[] = {
    {HE::MTE1_MTE2, FWD_EVT_K, 2},   {HE::MTE2_MTE1, FWD_EVT_K, 2}, {HE::MTE1_MTE2, FWD_EVT_PV, 2},
    {HE::MTE2_MTE1, FWD_EVT_PV, 2},  {HE::M_MTE1, FWD_EVT_L0, 2},   {HE::MTE1_M, FWD_EVT_L0, 2},
    {HE::FIX_M, FWD_EVT_L0, 2},      {HE::M_FIX, FWD_EVT_L0, 2},    {HE::M_MTE1, FWD_EVT_Q, 2},
    {HE::MTE1_M, FWD_EVT_Q, 2},      {HE::FIX_M, FWD_EVT_ACC, 1},   {HE::MTE1_MTE2, FWD_EVT_QL1, 2},
    {HE::MTE2_MTE1, FWD_EVT_QL1, 2}, {HE::MTE1_MTE2, FWD_EVT_P, 1}, {HE::MTE2_MTE1, FWD_EVT_P, 1}};
static_assert(FWD_EVT_PV == FWD_EVT_K + 2 && WS_SLOTS == 4, "K/V pair copies take the K and P/V ids");
constexpr EventRange FORWARD_VECTOR_EVENTS[] = {{HE::MTE2_V, VEC_EVT_S, 2},
                                                {HE::V_MTE2, VEC_EVT_S, 2},
                                                {HE::MTE2_V, VEC_EVT_MASK, 1},
                                                {HE::MTE2_V, VEC_EVT_KV_IN, static_cast<int32_t>(KV_RING_IN_COPIES)},
                                                {HE::V_MTE2, VEC_EVT_KV_IN, static_cast<int32_t>(KV_RING_IN_COPIES)},
                                                {HE::V_MTE3, VEC_EVT_KV_OUT, static_cast<int32_t>(KV_RING_OUT_COPIES)},
                                                {HE::MTE3_V, VEC_EVT_KV_OUT, static_cast<int32_t>(KV_RING_OUT_COPIES)},
                                                {HE::MTE3_V, VEC_EVT_P, 1},
                                                {HE::MTE3_V, VEC_EVT_FINISH, 1}};
// With K/V staged (KV_NZ): kv_nz.h's Prepare on the ring's out-copy ids, its own staging on
// the in-copy ids and id 7, no ring.
constexpr EventRange FORWARD_VECTOR_KV_NZ_EVENTS[] = {
    {HE::MTE2_V, VEC_EVT_S, 2},      {HE::V_MTE2, VEC_EVT_S, 2},       {HE::MTE2_V, VEC_EVT_MASK, 1},
    {HE::MTE2_V, VEC_EVT_OWN_IN, 2}, {HE::V_MTE2, VEC_EVT_OWN_IN, 2},  {HE::V_MTE3, VEC_EVT_KV_OUT, 2},
    {HE::MTE3_V, VEC_EVT_KV_OUT, 2}, {HE::V_MTE3, VEC_EVT_OWN_OUT, 1}, {HE::MTE3_V, VEC_EVT_OWN_OUT, 1},
    {HE::MTE3_V, VEC_EVT_P, 1},      {HE::MTE3_V, VEC_EVT_FINISH, 1}};
constexpr EventRange BACKWARD_CUBE_EVENTS[] = {{HE::M_MTE1, BWD_EVT_L0, 2},       {HE::MTE1_M, BWD_EVT_L0, 2},
                                               {HE::FIX_M, BWD_EVT_L0, 2},        {HE::M_FIX, BWD_EVT_L0, 2},
                                               {HE::FIX_M, BWD_EVT_ACC, 1},       {HE::M_FIX, BWD_EVT_ACC, 1},
                                               {HE::MTE2_MTE1, BWD_EVT_STAGED, 1}};
constexpr EventRange BACKWARD_VECTOR_EVENTS[] = {
    {HE::V_MTE2, BWD_EVT_CAST, 2}, {HE::MTE2_V, BWD_EVT_CAST, 2}, {HE::MTE3_V, BWD_EVT_CAST, 2},
    {HE::V_MTE3, BWD_EVT_CAST, 2}, {HE::MTE2_V, BWD_EVT_SDP, 2},  {HE::MTE2_V, VEC_EVT_MASK, 1}};  // the mask policies
constexpr EventRange SPARSE_BACKWARD_CUBE_EVENTS[] = {
    {HE::MTE1_MTE2, SPARSE_EVT_K, 2},      {HE::MTE1_MTE2, SPARSE_EVT_V, 1},
    {HE::MTE1_MTE2, SPARSE_EVT_PDS, 1},    {HE::M_MTE1, SPARSE_EVT_L0A, 2},
    {HE::M_MTE1, SPARSE_EVT_L0B, 2},       {HE::FIX_M, SPARSE_EVT_TILE, static_cast<int32_t>(SPARSE_MAX_TILES)},
    {HE::MTE2_MTE1, SPARSE_EVT_STAGED, 2}, {HE::MTE2_MTE1, SPARSE_EVT_QK, 1}};
static_assert(EventsValid(FORWARD_CUBE_EVENTS), "forward cube event ids overlap or leave 1-7");
static_assert(EventsValid(FORWARD_VECTOR_EVENTS), "forward vector event ids overlap or leave 1-7");
static_assert(EventsValid(FORWARD_VECTOR_KV_NZ_EVENTS), "forward vector (K/V staged) event ids overlap or leave 1-7");
static_assert(EventsValid(BACKWARD_CUBE_EVENTS), "backward cube event ids overlap or leave 1-7");
static_assert(EventsValid(BACKWARD_VECTOR_EVENTS), "backward vector event ids overlap or leave 1-7");
static_assert(EventsValid(SPARSE_BACKWARD_CUBE_EVENTS), "sparse backward cube event ids overlap or leave 1-7");

// Pipe `evt`'s consumer waits for everything its producer issued so far (event id 0 is
// reserved for these strictly paired uses).
template <AscendC::HardEvent evt> __aicore__ inline void PipeSync()
{
    AscendC::SetFlag<evt>(0);
    AscendC::WaitFlag<evt>(0);
}

// Double buffering: the copy (0 .. copies - 1, in turn) the next operation takes, advancing
// `idx`; with one copy it is always 0.
__aicore__ inline uint32_t NextCopy(uint32_t &idx, uint32_t copies)
{
    const uint32_t cur = idx;
    idx = idx + 1 < copies ? idx + 1 : 0u;
    return cur;
}

// Control words of the lazy P.V hand-off (forward_params.h), as word offsets into the control
// lines: vector core `sub`'s "rescaled" word and the cube's "flushed" word of slot `slot`.
__aicore__ inline uint32_t CtrlRescaled(uint32_t slot, uint32_t sub) { return (slot * 3 + sub) * CTRL_LINE_WORDS; }
__aicore__ inline uint32_t CtrlFlushed(uint32_t slot) { return (slot * 3 + 2) * CTRL_LINE_WORDS; }
// Vector core `sub`'s largest |V| of the rows it staged (fp32 bits): in the middle of its own
// "rescaled" line of slot 0, which only it writes (word 0, unchanged by this). No line of its
// own: the workspace keeps its size and layout (one more line per core moved the per-core
// workspaces and made modelled B4 N16 S1K 149.4 -> 153.0 us).
__aicore__ inline uint32_t CtrlVMax(uint32_t sub) { return CtrlRescaled(0, sub) + CTRL_LINE_WORDS / 2; }
// Bits of the lazy P.V words: "rescaled" / "flushed" (bit 0); in a unit's last block's
// "rescaled" word, this core's rows are not safe for an fp16 final sum (CTRL_UNSAFE); in its
// "flushed" word, the cube wrote the final sum in fp16 (CTRL_FP16).
constexpr int32_t CTRL_MOVED = 1, CTRL_UNSAFE = 2, CTRL_FP16 = 2;

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
