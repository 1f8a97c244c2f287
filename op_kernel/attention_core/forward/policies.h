// The seams of the shared attention core (docs/attention_core.md). Each seam is a primary
// template over a tag that static_asserts: an operator picks one implemented tag per seam, and
// a combination nobody implemented fails to compile instead of running a wrong kernel. Every
// policy inherits its seam's base below, which holds the seam's defaults (a policy overrides a
// default by declaring the same member); the stages call only members, so one mechanism
// carries all variation.
//
// Parameters: a policy is initialised with Init(tiling, tensors), where tiling is the
// operator's tiling data composed of the core's ForwardParams (`params`) and the Params of
// its element-wise policies (`score`, `mask`, `softmax`; policy_params.h). A score, mask or
// softmax policy names its Params (`using Params`) and reads only that member, so the backward,
// whose BackwardParams embeds the same members, runs the same policies; a work split or K/V
// source reads the core's geometry (`params`) and its variant's own piece (decode: `decode`).
// GM addresses are composed the same way (ForwardTensors<Variant>): the core's (CoreTensors)
// and per seam the piece its policy names (`using Tensors`, NoTensors by default), in the
// members `split`, `kv`, `score`, `mask` and `softmax`; a policy reads its own piece and, where
// it needs scratch, the core's workspace.
//
// Index of every tag (tests/ops/attention_core/test_policy_index.py keeps it true):
//
//   seam        tag                    file (in attention_core/)   operators
//   WorkSplit   SplitQBlocks           forward/policies.h          PFA
//               SplitTnd               variants/varlen_policies.h  FA varlen, FAG V5 (recompute)
//               SplitKvCombine         variants/decode_policies.h  IFA V4
//   KvSource    KvStrided              forward/policies.h          PFA, FA varlen
//               KvDecode               variants/decode_policies.h  IFA V4
//               KvDecodeRing<T>        variants/kv_ring.h          IFA V4 (fp16 / bf16 K/V)
//               KvDecodeInt8<T>        variants/kv_antiquant.h     IFA V4 (int8 K/V)
//               KvDecodeInt8Digits<T>  variants/int8_digit_core.h  IFA V4 (int8 K/V, int8 x int8 core)
//   ScoreMod    ScoreScale             forward/policies.h          PFA
//               ScorePse               variants/varlen_policies.h  FA varlen, FAG V5
//               ScoreDecodePse         variants/decode_policies.h  IFA V4
//   MaskMod     MaskTensorBand         forward/mask_band.h         PFA (IFA V4: its pad columns)
//               MaskTensorBandSummary  forward/mask_band.h         PFA, a mask plane shared by all (b, n)
//               MaskSparseMode         variants/varlen_policies.h  FA varlen, FAG V5
//               MaskDecode             variants/decode_policies.h  IFA V4
//   SoftmaxMod  SoftmaxPlain           forward/policies.h          PFA, IFA V4
//               SoftmaxDropout         variants/varlen_policies.h  FA varlen, FAG V5
#pragma once
#include "kernel_operator.h"
#include "forward_params.h"
#include "../common/sync.h"

namespace AttentionCore {

template <class Tag> struct AlwaysFalse {
    static constexpr bool value = false;
};

// ------------------------------------------------------------------------- tags
struct SplitQBlocks {};
struct KvStrided {};
struct ScoreScale {};
struct MaskTensorBand {};
struct MaskTensorBandSummary {};
struct SoftmaxPlain {};
struct SplitTnd {};        // varlen_policies.h
struct ScorePse {};        // varlen_policies.h
struct MaskSparseMode {};  // varlen_policies.h
struct SoftmaxDropout {};  // varlen_policies.h

// ---------------------------------------------------------------------- tensors
// The GM tensors of one forward launch (absent optional tensors are null): the core's, and per
// seam its policy's own piece (the policies' Tensors structs sit next to them).
struct NoTensors {};

struct CoreTensors {
    GM_ADDR query = nullptr;
    GM_ADDR key = nullptr;
    GM_ADDR value = nullptr;
    GM_ADDR out = nullptr;
    GM_ADDR workspace = nullptr;   // the user workspace (after GetUserWorkspace)
    GM_ADDR softmaxMax = nullptr;  // the statistics (ForwardParams::hasSoftmaxStats)
    GM_ADDR softmaxSum = nullptr;
};

template <class Variant> struct ForwardTensors : CoreTensors {
    typename Variant::Split::Tensors split;
    typename Variant::Kv::Tensors kv;
    typename Variant::Score::Tensors score;
    typename Variant::Mask::Tensors mask;
    typename Variant::Softmax::Tensors softmax;
};

// WorkSplit<SplitQBlocks>: the query lengths (int64, count 1 = one value for all batches).
struct SeqLengthsTensors {
    GM_ADDR actualSeqLengths = nullptr;
    GM_ADDR unitOrder = nullptr;  // uint32 unit per position, read with ForwardParams UNITS_TABLE
};

// MaskMod<MaskTensorBand> and MaskMod<MaskTensorBandSummary>: the 1-byte mask.
struct MaskTensors {
    GM_ADDR mask = nullptr;
};

// One unit of work: query rows [q0, q0 + rows) of head n in batch b; rows >= qValid are
// padding (beyond actual_seq_lengths) and output zeros; keys [kvBegin, kvEnd) are visible.
struct WorkUnit {
    uint32_t b;
    uint32_t n;
    uint32_t q0;
    uint32_t rows;
    uint32_t qValid;
    int64_t kvBegin;
    int64_t kvEnd;
    // Token offsets of batch b in a TND tensor (0 for padded layouts, where b strides apply)
    // and the batch's query / key lengths (what masks and pse align to).
    uint64_t qBase;
    uint64_t kvBase;
    int64_t seqQ;
    int64_t seqKv;
    // SplitQBlocks' split-KV tail (ForwardParams::tailSplits): piece + 1 (TailItem), 0 for a
    // whole unit; set by that split's Decode only.
    uint32_t piece;
    // The unit's first `reuse` key blocks are blocks reuseEnd - 1, ..., reuseEnd - reuse (with
    // reuseUp: reuseEnd - reuse, ..., reuseEnd - 1), the K/V the cube's cache still holds from
    // the unit before (PlanKvReuse, set by the stages after Decode); then the others in order
    // (UnitBlockAt).
    uint32_t reuse;
    uint32_t reuseEnd;
    uint32_t reuseUp;
};

// The index of the key block unit u runs j-th (WorkUnit::reuse).
__aicore__ inline uint32_t UnitBlockIndex(const WorkUnit &u, uint32_t j)
{
    if (u.reuse == 0) {
        return j;
    }
    if (j < u.reuse) {
        return u.reuseUp != 0 ? u.reuseEnd - u.reuse + j : u.reuseEnd - 1 - j;
    }
    return j - u.reuse < u.reuseEnd - u.reuse ? j - u.reuse : j;
}

// The position at which unit u runs its key block `idx` (the inverse of UnitBlockIndex).
__aicore__ inline uint32_t UnitBlockPos(const WorkUnit &u, uint32_t idx)
{
    if (u.reuse == 0) {
        return idx;
    }
    const uint32_t first = u.reuseEnd - u.reuse;
    if (idx >= first && idx < u.reuseEnd) {
        return u.reuseUp != 0 ? idx - first : u.reuseEnd - 1 - idx;
    }
    return idx < first ? idx + u.reuse : idx;
}

// Key block j of unit u in the order the stages run them (WorkUnit::reuse).
__aicore__ inline KvBlock UnitBlockAt(const WorkUnit &u, uint32_t blockKv, uint32_t j)
{
    return KvBlockAt(u.kvBegin, u.kvEnd, blockKv, UnitBlockIndex(u, j));
}

// Sets cur's reuse (WorkUnit::reuse): how many key blocks unit `cur` takes first from the
// cube's K/V cache (ForwardParams::kvCacheTiles) where it runs right after unit `prev` on a
// core (null: none). Where both read the same (batch, KV head) keys from the same first key and
// cur's keys hold all of prev's (causal: a later q-block of the head, e.g. the second member of
// a folded pair; without a mask: the next q-block of the head), the cache holds prev's last
// kvCacheTiles blocks: the full blocks it ran last, which cur then runs first, in reverse. A
// short last block of prev that is a full block of cur was loaded as a full tile (the cube's
// WideTail: its keys past prev's end are cur's), so it counts too; otherwise its tile holds
// nothing cur reads. Not where some of cur's rows see no key of those blocks (the mask's
// RowsBefore: a causal GQA group's heads of one q-block, whose last blocks are diagonal tiles),
// cur runs those blocks in ascending order instead (reuseUp), from the first, which all its rows
// see: its first block would otherwise leave those rows without a reference max, and their first
// scores would flush the accumulator. All hits come before cur's first load either way, so the
// order does not change what the cache holds for them. Both stages call this after KvRange and
// ClipKeys, so they run cur's blocks in one order; the cube looks every block up in its cache,
// so the order only decides how many loads it saves.
template <class Mask>
__aicore__ inline void PlanKvReuse(const ForwardParams &p, const Mask &mask, const WorkUnit *prev, WorkUnit &cur)
{
    cur.reuse = 0;
    cur.reuseEnd = 0;
    cur.reuseUp = 0;
    if (prev == nullptr || p.kvCacheTiles == 0 || prev->b != cur.b || prev->n / p.groupSize != cur.n / p.groupSize ||
        prev->kvBase != cur.kvBase || prev->kvBegin != cur.kvBegin || prev->kvEnd > cur.kvEnd || prev->piece != 0 ||
        cur.piece != 0 || prev->kvEnd <= prev->kvBegin) {
        return;
    }
    const int64_t keys = prev->kvEnd - prev->kvBegin;
    uint32_t full = static_cast<uint32_t>(keys / p.blockKv);
    // K's tiles: with one more K tile than V tiles the run's last block finds its K cached and
    // loads only its V.
    uint32_t tiles = p.kvCacheKeyTiles > p.kvCacheTiles ? p.kvCacheKeyTiles : p.kvCacheTiles;
    if (keys % p.blockKv != 0) {
        // prev's short last block: a full tile where cur reads the whole block (with one Q and P
        // copy only, ForwardParams::kvCacheTiles: elsewhere the wide load at prev's end and the
        // split K^T load cost more than it saved, modelled B1 N8/2 S2K causal 49.44 -> 49.49 us)
        const int64_t k0 = prev->kvBegin + static_cast<int64_t>(full) * p.blockKv;
        if (p.l1Bufs == 1 && cur.kvEnd >= k0 + p.blockKv && mask.RowsBefore(cur, cur.q0, cur.rows, k0) == 0) {
            ++full;
        } else {
            --tiles;
        }
    }
    if (full == 0 || tiles == 0) {
        return;
    }
    // The full blocks prev ran last (its short last block always runs last) as one ascending run
    // [end - run, end): prev's last full blocks, or where prev itself began with reused blocks,
    // the ones before those (so every unit of a run of a head's q-blocks finds its first blocks
    // cached, not only the second).
    const uint32_t end = UnitBlockIndex(*prev, full - 1) + 1;
    uint32_t run = 1;
    while (run < tiles && run < full && UnitBlockIndex(*prev, full - 1 - run) + run + 1 == end) {
        ++run;
    }
    if (mask.RowsBefore(cur, cur.q0, cur.rows, prev->kvBegin + static_cast<int64_t>(end - 1) * p.blockKv) != 0) {
        if (mask.RowsBefore(cur, cur.q0, cur.rows, prev->kvBegin + static_cast<int64_t>(end - run) * p.blockKv) != 0) {
            return;
        }
        cur.reuseUp = 1;
    }
    cur.reuse = run;
    cur.reuseEnd = end;
}

// Sets the first unit `cur` of core `core` to run its key blocks from block
// ForwardParams::kvRotateBlock on and then from the first, where the host asks for it for that
// core (kv_staging_tiling.cpp PlanKvRotation): as a reused ascending run of the blocks from
// there to the last (WorkUnit::reuse; nothing of it is cached, the cube looks every block up).
// The unit after it on the core then finds the blocks before kvRotateBlock cached
// (PlanKvReuse). Call after PlanKvReuse, for the core's first unit.
__aicore__ inline void PlanFirstRotation(const ForwardParams &p, uint32_t core, WorkUnit &cur)
{
    if (p.kvRotateBlock == 0 || core >= 64 || ((p.kvRotateCores >> core) & 1) == 0 || cur.reuse != 0) {
        return;
    }
    const uint32_t blocks = KvBlockCount(cur.kvBegin, cur.kvEnd, p.blockKv);
    if (blocks <= p.kvRotateBlock) {
        return;
    }
    cur.reuse = blocks - p.kvRotateBlock;
    cur.reuseEnd = blocks;
    cur.reuseUp = 1;
}

// ------------------------------------------------------------------ seam bases
// WorkSplit defaults. StorePartialOutput: a split that cuts a row's keys over several units
// (decode split-KV) takes the unit's unnormalised output rows with their running max and sum
// and returns true, and the vector stage then writes nothing (a combine pass merges them).
// ClipKeys: after the mask's KvRange, narrows a unit's keys to its piece's range (a no-op for
// whole units). PartialRows (lazy P.V): where the cube may write a unit's whole P.V sum (all
// u.rows rows, pitch headDimAlign) as its unnormalised partial output rows when no block of the
// unit flushed, so that the vector stage stores only the statistics (StorePartialStats); false:
// the rows go through the vector stage. A split that says yes has the cube join the barrier
// before its combine pass (SyncAll<false>) after the core: the core's last such write raises
// no FLAG_O_READY, the barrier orders it.
struct WorkSplitBase {
    using Tensors = NoTensors;
    __aicore__ inline void ClipKeys(WorkUnit &) const {}
    __aicore__ inline bool StorePartialOutput(const WorkUnit &, uint32_t, uint32_t, const AscendC::LocalTensor<float> &,
                                              const AscendC::LocalTensor<float> &,
                                              const AscendC::LocalTensor<float> &) const
    {
        return false;
    }
    __aicore__ inline bool PartialRows(const WorkUnit &, AscendC::GlobalTensor<float> &) const { return false; }
    __aicore__ inline void StorePartialStats(const WorkUnit &, uint32_t, uint32_t, const AscendC::LocalTensor<float> &,
                                             const AscendC::LocalTensor<float> &) const
    {
    }
};

// KvSource defaults: K/V read straight from GM at evenly spaced rows.
//   RowsInRun(b, token): how many key rows from `token` on are KvRowPitch apart (the cube
//     loads a key block as such runs; a paged cache is contiguous only to the end of a page).
//   StagedNz(): a key block's rows are already in the cube's Nz order (common/nz_handoff.h)
//     at KvOffset(b, n, k0), NzSlotRows() rows per column block: one plain copy, no Nd2Nz.
// Hooks for K/V produced on the chip while the core runs (the decode K/V ring): the cube
// calls BeforeLoad(u, blk, isValue) right before it loads a block's K (V) rows into L1 and
// AfterLoad(isValue) right after those loads are issued; the vector stage calls
// StreamInit(tiling, pipe, t) after its own buffers, StreamAhead(block) after the softmax of its
// block-th key block (counted over all its units) and the next block's first S load,
// StreamEnd() after the last unit, and
// FinishRows(u, rows, acc, sum) on a unit's unnormalised output rows (pitch headDimAlign) and
// softmax sums before they are normalised (rows stored as partials skip it: the split's combine
// pass does that part).
struct KvSourceBase {
    using Tensors = NoTensors;
    __aicore__ inline uint32_t RowsInRun(uint32_t, uint64_t) const { return 0xFFFFFFFFu; }
    __aicore__ inline static constexpr bool StagedNz() { return false; }
    // The int8 x int8 decode core's source (variants/int8_digit_core.h): the vector stage hands
    // S, P and O over as int8 digits and int32 products (forward_vector.h's digit hooks).
    __aicore__ inline static constexpr bool Int8Digits() { return false; }
    __aicore__ inline uint32_t NzSlotRows() const { return 0; }
    // Copies of a block's K and V in one L1 tile pair, loaded with one copy (a staged source
    // whose V slot follows the K slot); 0: K and V tiles of their own.
    __aicore__ inline uint32_t KvPairCopies() const { return 0; }
    __aicore__ inline void BeforeLoad(const WorkUnit &, const KvBlock &, bool) {}
    __aicore__ inline void AfterLoad(bool) {}
    template <class Tiling, class GmTensors>
    __aicore__ inline void StreamInit(const Tiling &, AscendC::TPipe *, const GmTensors &)
    {
    }
    __aicore__ inline void StreamAhead(uint64_t) {}
    __aicore__ inline void StreamEnd() {}
    __aicore__ inline void FinishRows(const WorkUnit &, uint32_t, const AscendC::LocalTensor<float> &,
                                      const AscendC::LocalTensor<float> &)
    {
    }
};

// ScoreMod / MaskMod defaults. UsesScratch(): whether Apply writes its scratch argument (the
// vector stage's P buffer, which the previous block's P store may still read).
struct ScoreModBase {
    using Tensors = NoTensors;
    __aicore__ inline bool UsesScratch() const { return false; }
    // The factor the K/V staging (kv_nz.h) multiplies K by, so that Apply need not scale S (1:
    // none).
    __aicore__ inline float KeyScale() const { return 1.0f; }
};

// HasPrepass/Prepare: a pass over the mask before the main loop (the PFA mask summary; the
// cube and vector cores meet in a SyncAll after it), a compile-time trait; Load: the mask rows
// of a block into UB ahead of its Apply. None by default.
struct MaskModBase {
    using Tensors = NoTensors;
    __aicore__ inline bool UsesScratch() const { return false; }
    __aicore__ inline static constexpr bool HasPrepass() { return false; }
    __aicore__ inline void Prepare(const AscendC::LocalTensor<uint8_t> &, uint32_t, uint32_t, uint32_t) {}
    __aicore__ inline void Load(const AscendC::LocalTensor<uint8_t> &, const WorkUnit &, uint32_t, uint32_t, int64_t,
                                uint32_t, uint32_t)
    {
    }
    // Whether Load reads rows from GM for every block: the vector cores' mask work per block
    // then tends to pace the pipeline (forward_vector_softmax.h SoftmaxBlock loads S ahead across blocks for it).
    __aicore__ inline bool LoadsRows() const { return false; }
    // How many of the query rows [row0, row0 + rows) come first and see no key from k0 on
    // (a diagonal tile's upper rows): at most that many, 0 when unknown.
    __aicore__ inline uint32_t RowsBefore(const WorkUnit &, uint32_t, uint32_t, int64_t) const { return 0; }
    // Whether RowsBefore can be non-zero at all: only then does lazy P.V need the workspace's
    // zero fractal (forward_vector.h Init), which a short kernel would otherwise pay for.
    __aicore__ inline bool HasRowsBefore() const { return false; }
    // How many of the keys [k0, k0 + cols) come first and hold every key some query row up to
    // lastRow sees (a diagonal tile's band end); the others are MASKED_SCORE after Apply whatever
    // the scores held. `cols` when unknown.
    __aicore__ inline uint32_t KeysSeen(const WorkUnit &, uint32_t, int64_t, uint32_t cols) const { return cols; }
};

// Lazy P.V's Q.K^T leaves out the leading rows of a unit that see no key of the block (a
// diagonal tile's upper rows, RowsBefore) in whole 16-row fractals: the cube computes and
// writes only S rows [SkippedSRows, rows) of the block, and the vector cores load only those and
// give the others P = 0. Only for units of whole fractals, so that with either vector core's
// half (a multiple of 8 rows) and sub-blocks the skipped rows end on 8-row (32-byte) statistics.
template <class Mask> __aicore__ inline uint32_t SkippedSRows(const Mask &mask, const WorkUnit &u, int64_t k0)
{
    if (u.rows % 16 != 0) {
        return 0;
    }
    return mask.RowsBefore(u, u.q0, u.rows, k0) / 16 * 16;
}

// Lazy P.V's S columns of the unit rows [row0, row0 + rows) of a block of `cols` keys from k0:
// the keys some of those rows see (KeysSeen), in whole 16-column fractals. The cube writes no
// S past them and the vector cores read none: Apply's band sets those scores whatever they hold.
template <class Mask>
__aicore__ inline uint32_t SeenSCols(const Mask &mask, const WorkUnit &u, uint32_t row0, uint32_t rows, int64_t k0,
                                     uint32_t cols)
{
    const uint32_t seen = (mask.KeysSeen(u, u.q0 + row0 + rows - 1, k0, cols) + 15) / 16 * 16;
    return seen == 0 ? 16 : (seen < cols ? seen : cols);
}

// Lazy P.V with P in Nz order hands over only part of a diagonal tile's P, the rest being 0:
// the rows the S left out (SkippedSRows; but the last fractal row, so that every block has a P
// load), which the cube zeroes in L0A from a zero fractal in L1, and the columns past the last
// key any row of the unit sees (SeenSCols over all its rows), which P.V leaves out of its k.
template <class Mask> __aicore__ inline uint32_t SkippedPRows(const Mask &mask, const WorkUnit &u, int64_t k0)
{
    const uint32_t skip = SkippedSRows(mask, u, k0);
    return skip < u.rows ? skip : u.rows - 16;
}
template <class Mask>
__aicore__ inline uint32_t SeenPCols(const Mask &mask, const WorkUnit &u, int64_t k0, uint32_t cols)
{
    return SeenSCols(mask, u, 0, u.rows, k0, cols);
}

// Lazy P.V with P in Nz order: the P columns a sub-block of the unit's rows up to rowEnd hands
// over, those its rows' whole 16-row fractals see (so every fractal row of P the cube loads
// holds all the columns it sees: FractalPCols), a multiple of 16. A diagonal tile's upper
// sub-blocks then leave the staircase past their band edge out of the hand-off.
template <class Mask>
__aicore__ inline uint32_t SubBlockPCols(const Mask &mask, const WorkUnit &u, uint32_t rowEnd, int64_t k0,
                                         uint32_t cols)
{
    const uint32_t end = (rowEnd + 15) / 16 * 16;
    return (SeenSCols(mask, u, 0, end < u.rows ? end : u.rows, k0, cols) + 15) / 16 * 16;
}
// The 16-column fractals of P that the unit's 16-row fractal row at `row0` (a multiple of 16)
// sees: the cube takes those from the hand-off and zeroes the others up to the block's k.
template <class Mask>
__aicore__ inline uint32_t FractalPCols(const Mask &mask, const WorkUnit &u, uint32_t row0, int64_t k0, uint32_t cols)
{
    return SubBlockPCols(mask, u, row0 + 1, k0, cols) / 16;
}

// SoftmaxMod default: nothing between exp and the P.V product. AfterExp(P, byte scratch
// (rows x cols), unit, row0, rows, k0, colsValid, cols) acts on the exponentiated scores after
// their row sums were taken (dropout).
struct SoftmaxModBase {
    using Tensors = NoTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &, const GmTensors &) {}
    // Whether AfterExp uses its byte buffer (the stage's mask buffer): if not, the stage loads
    // the next rows' mask into it as soon as the mask policy's Apply is done with it.
    __aicore__ inline static constexpr bool UsesMaskBuffer() { return true; }
    __aicore__ inline void AfterExp(const AscendC::LocalTensor<float> &, const AscendC::LocalTensor<uint8_t> &,
                                    const WorkUnit &, uint32_t, uint32_t, int64_t, uint32_t, uint32_t)
    {
    }
};

// ------------------------------------------------------------------- work split
template <class Tag> struct WorkSplit {
    static_assert(AlwaysFalse<Tag>::value, "WorkSplit: this split is not implemented");
};

// The q-block at position pos of a head's `count` in the folded order (ForwardParams::
// foldQBlocks): 0, count - 1, 1, count - 2, ... (a bijection; op_host/common/tiling/
// forward_work_split.cpp orders its costs alike).
__aicore__ inline uint64_t FoldedQBlock(uint64_t pos, uint64_t count)
{
    return pos % 2 == 0 ? pos / 2 : count - 1 - pos / 2;
}

// Units (b, n, q-block) in that order, or (b, q-block, n) where the host planned so (heads
// sharing a mask plane: ForwardParams::foldQBlocks), a head's q-blocks folded where it planned
// so (a causal mask's light early q-blocks next to its heavy late ones), or (b, folded pair,
// n, member) with UNITS_PAIRED: each head takes both q-blocks of a folded pair in a row, so
// the units do not come in runs of equal cost that the contiguous ranges cut unevenly, and a
// core still takes the heads of its q-blocks one after another; the host balanced
// contiguous ranges by cost (number of key blocks in the band), so causal/band shapes spread
// evenly over the cores even with one or two heads. With UNITS_TABLE (causal GQA) position i
// is unit table[i] of the (b, n, q-block) order instead: the host dealt the units to the cores
// by cost and lists each core's by (b, KV head, q-block, n), so a group's heads of a q-block
// run in a row and each one after the first finds the key blocks the one before ran last in
// the cube's K/V cache (PlanKvReuse). With UNITS_SHORT_LAST (a split-KV tail of short q-blocks)
// every head's last q-block comes after all others, (b, n).
template <> struct WorkSplit<SplitQBlocks> : WorkSplitBase {
    using Tensors = SeqLengthsTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.params;
        workspace_ = t.workspace;
        if (p_->hasActualSeqLengths != 0) {
            lens_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.split.actualSeqLengths));
        }
        table_ = (p_->foldQBlocks & UNITS_TABLE) != 0;
        if (table_) {
            order_.SetGlobalBuffer(reinterpret_cast<__gm__ uint32_t *>(t.split.unitOrder));
        }
    }
    __aicore__ inline uint64_t Begin(uint32_t core) const { return p_->coreUnitStart[core]; }
    __aicore__ inline uint64_t End(uint32_t core) const { return p_->coreUnitStart[core + 1]; }
    __aicore__ inline void Decode(uint64_t item, WorkUnit &u) const
    {
        uint64_t unit = item;
        u.piece = p_->tailSplits > 1 ? TailItem(*p_, item, unit) : 0;
        uint64_t pos = 0;
        if (table_) {  // position item is unit table[item] of the (b, n, q-block) order
            unit = order_.GetValue(item);
        }
        if (!table_ && (p_->foldQBlocks & UNITS_HEADS_INNER) != 0) {  // (b, q-block, n)
            const uint64_t perBatch = static_cast<uint64_t>(p_->qBlocksPerHead) * p_->numHeads;
            const uint64_t r = unit % perBatch;
            u.b = static_cast<uint32_t>(unit / perBatch);
            if ((p_->foldQBlocks & UNITS_PAIRED) != 0) {  // (b, folded pair, n, member)
                const uint64_t pair = r / (2 * p_->numHeads);
                const uint64_t rem = r % (2 * p_->numHeads);
                const bool whole = 2 * pair + 1 < p_->qBlocksPerHead;  // else the odd last q-block alone
                u.n = static_cast<uint32_t>(whole ? rem / 2 : rem);
                pos = 2 * pair + (whole ? rem % 2 : 0);
            } else {
                u.n = static_cast<uint32_t>(r % p_->numHeads);
                pos = r / p_->numHeads;
            }
        } else {  // (b, n, q-block)
            uint64_t bn = unit / p_->qBlocksPerHead;
            pos = unit % p_->qBlocksPerHead;
            if ((p_->foldQBlocks & UNITS_SHORT_LAST) != 0) {  // every head's last q-block after the others
                const uint64_t whole = p_->qBlocksPerHead - 1;
                const uint64_t lead = static_cast<uint64_t>(p_->batch) * p_->numHeads * whole;
                bn = unit < lead ? unit / whole : unit - lead;
                pos = unit < lead ? unit % whole : whole;
            }
            u.n = static_cast<uint32_t>(bn % p_->numHeads);
            u.b = static_cast<uint32_t>(bn / p_->numHeads);
        }
        const uint64_t qb = (p_->foldQBlocks & UNITS_FOLDED) != 0 ? FoldedQBlock(pos, p_->qBlocksPerHead) : pos;
        // With UNITS_TAIL_FIRST the short q-block (if any) comes first: under a causal band it
        // then sees a few keys, where last it would stream all of K and V for a few rows.
        const uint32_t shift =
            (p_->foldQBlocks & UNITS_TAIL_FIRST) != 0 ? p_->qBlocksPerHead * p_->blockQ - p_->seqQ : 0;
        const uint32_t end = static_cast<uint32_t>(qb + 1) * p_->blockQ - shift;
        u.q0 = qb == 0 ? 0 : static_cast<uint32_t>(qb) * p_->blockQ - shift;
        u.rows = (end < p_->seqQ ? end : p_->seqQ) - u.q0;
        int64_t len = p_->seqQ;
        if (p_->hasActualSeqLengths != 0) {
            len = lens_.GetValue(p_->actualSeqLengthsCount == 1 ? 0 : u.b);
        }
        const int64_t valid = len - static_cast<int64_t>(u.q0);
        u.qValid = valid <= 0 ? 0 : (valid >= u.rows ? u.rows : static_cast<uint32_t>(valid));
        u.qBase = 0;
        u.kvBase = 0;
        u.seqQ = len;
        u.seqKv = p_->seqKv;
    }
    // A split-KV tail piece: its tailPieceBlocks key blocks of the unit.
    __aicore__ inline void ClipKeys(WorkUnit &u) const
    {
        if (u.piece == 0) {
            return;
        }
        const int64_t keys = static_cast<int64_t>(p_->tailPieceBlocks) * p_->blockKv;
        const int64_t lo = static_cast<int64_t>((u.piece - 1) % p_->tailSplits) * keys;
        u.kvBegin = lo > u.kvBegin ? lo : u.kvBegin;
        u.kvEnd = lo + keys < u.kvEnd ? lo + keys : u.kvEnd;
        if (u.kvEnd < u.kvBegin) {
            u.kvEnd = u.kvBegin;
        }
    }
    // Its rows go to the combine pass as partials (defined in split_kv_combine.h).
    __aicore__ inline bool StorePartialOutput(const WorkUnit &u, uint32_t rowOff, uint32_t rows,
                                              const AscendC::LocalTensor<float> &acc,
                                              const AscendC::LocalTensor<float> &m,
                                              const AscendC::LocalTensor<float> &l) const;

    const ForwardParams *p_ = nullptr;
    AscendC::GlobalTensor<int64_t> lens_;
    AscendC::GlobalTensor<uint32_t> order_;
    bool table_ = false;
    GM_ADDR workspace_ = nullptr;
};

// -------------------------------------------------------------------- KV source
template <class Tag> struct KvSource {
    static_assert(AlwaysFalse<Tag>::value, "KvSource: this K/V layout is not implemented");
};

// Dense Q/K/V/O addressed by (batch, head, token) element strides: BSH, BSND, BNSD and
// BNSD_BSND are all one rule. GQA: query head n reads KV head n / groupSize.
template <> struct KvSource<KvStrided> : KvSourceBase {
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &)
    {
        p_ = &tiling.params;
    }
    __aicore__ inline uint64_t QOffset(uint32_t b, uint32_t n, uint32_t row) const
    {
        return b * p_->qStrideB + n * p_->qStrideN + row * p_->qStrideS;
    }
    __aicore__ inline uint64_t KvOffset(uint32_t b, uint32_t n, uint32_t row) const
    {
        return b * p_->kvStrideB + (n / p_->groupSize) * p_->kvStrideN + row * p_->kvStrideS;
    }
    __aicore__ inline uint64_t OutOffset(uint32_t b, uint32_t n, uint32_t row) const
    {
        return b * p_->oStrideB + n * p_->oStrideN + row * p_->oStrideS;
    }
    __aicore__ inline uint32_t QRowPitch() const { return static_cast<uint32_t>(p_->qStrideS); }
    __aicore__ inline uint32_t KvRowPitch() const { return static_cast<uint32_t>(p_->kvStrideS); }
    __aicore__ inline uint32_t OutRowPitch() const { return static_cast<uint32_t>(p_->oStrideS); }

    const ForwardParams *p_ = nullptr;
};

// ---------------------------------------------------------------- score modifier
template <class Tag> struct ScoreMod {
    static_assert(AlwaysFalse<Tag>::value, "ScoreMod: this score modifier is not implemented");
};

// S = scale * Q.K^T (fp32, in UB). The Apply interface: s holds `rows` x `cols` fp32 scores
// of query rows [row0, row0 + rows) of unit u and keys [k0, k0 + colsValid); tmp (fp32) and
// scratch (input type) are rows x cols scratch buffers. Where the host folded the scale into
// the staged K (ScaleParams::scaleInKey: a power of two, so Q.(scale K) equals scale (Q.K)
// bit for bit in fp32) S arrives scaled and the vector pass goes.
template <> struct ScoreMod<ScoreScale> : ScoreModBase {
    using Params = ScaleParams;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &)
    {
        scale_ = tiling.score.scaleValue;
        inKey_ = tiling.score.scaleInKey != 0;
    }
    __aicore__ inline float KeyScale() const { return inKey_ ? scale_ : 1.0f; }
    template <typename T>
    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &,
                                 const AscendC::LocalTensor<T> &, const WorkUnit &, uint32_t, uint32_t rows, int64_t,
                                 uint32_t, uint32_t cols) const
    {
        if (inKey_) {
            return;
        }
        const uint32_t count = rows * cols;
        AscendC::Muls(s, s, scale_, static_cast<int32_t>(count));
        AscendC::PipeBarrier<PIPE_V>();
    }
    float scale_ = 1.0f;
    bool inKey_ = false;
};

// ---------------------------------------------------------------- softmax extras
template <class Tag> struct SoftmaxMod {
    static_assert(AlwaysFalse<Tag>::value, "SoftmaxMod: this softmax extra is not implemented");
};

// Plain softmax: the base's defaults.
template <> struct SoftmaxMod<SoftmaxPlain> : SoftmaxModBase {
    __aicore__ inline static constexpr bool UsesMaskBuffer() { return false; }
};

}  // namespace AttentionCore

#include "mask_band.h"
#include "../variants/varlen_policies.h"
