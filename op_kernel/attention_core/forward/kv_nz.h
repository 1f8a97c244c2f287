// K and V staged once in the cube's Nz order (KV_NZ, the tiling key's mode; ForwardParams::kvNz).
// Every q-block of a head streams all of its keys again; from the caller's row-major K/V each of
// those loads is an Nd2Nz that converts every key row on the way. In this mode the vector cores
// convert K and V once before the main loop (GM -> UB rows, one Copy per row into Nz order, UB -> a workspace region)
// and the cube loads every key block from that region with one plain copy
// (docs/performance.md, "Sweep"); only a core's first S block, which the cube issues during the
// conversion where K is copied unchanged (forward_cube.h Run), reads the caller's K rows. The
// host may stage one tensor only (ForwardParams::kvNz): K (KV_NZ_K_ONLY) where the forward is
// bound by L2, as staging V would move its bytes twice more through L2 than the cube's loads of
// V's rows; V (KV_NZ_V_ONLY) where each key row is loaded only a few times, so the staging pass
// every core waits for is half as long. The tensor not staged loads from the caller's rows
// with Nd2Nz, and its region stays unused. The host may also stage only a head's first key rows
// (ForwardParams::kvNzStageKeys): the cube loads the blocks past them from the caller's rows.
//
// Region layout: per KV head h, batch b (one "batch" for TND, whose tokens are already one axis)
// and tensor (K, then V) a matrix of kvNzRows rows in Nz order: column block j (head-dim
// elements [16 j, 16 j + 16)) holds kvNzRows rows of 16 elements. V's region follows K's, so
// the two are one Nz matrix of 2 headDimAlign columns and a key block's K and V rows load with
// one copy (LoadPair). Rows past the tensor's kvNzSeq rows are
// zero: a key block whose padded extent runs past the end reads them (its pad columns of S are
// masked, P is zero there), and never NaN.
//
// Per core (ForwardParams::kvNzOwnRows != 0; the host plans it where a region's units are one
// run of the unit order and no unit is split, so a region is read by the cores whose runs it
// overlaps and no other): before the barrier every vector core stages its share of the regions
// that are some core's FIRST region (that of its first unit); a region read by two cores is the
// second one's first. Each core's other regions are read by it alone: its own two vector cores
// stage them in unit order during the main loop (OwnStep, a chunk after each softmax block, in
// UB the softmax leaves free) and raise FLAG_KV_STAGED per region, which the cube waits for
// before its first load from that region (OwnWait). A vector core finishes a region itself
// before it waits for the first S of a unit in it (OwnThrough): the cube's S of that unit waits
// for the region. Modelled B4 N16 S1K 156.0 -> 153.5 us: the barrier releases at 3.3 us, not
// 7.8 us (docs/performance.md, "Sweep"). Over a TND token axis (one matrix per KV head) a region
// is a batch's rows of it (kvNzOwnPerBatch): the host plans that where every batch but the last
// has a multiple of 16 keys, so no key block's pad rows reach into the next batch's rows (which
// another core may stage later); the last batch's region takes the zero rows.
#pragma once
#include "kernel_operator.h"
#include "forward_params.h"
#include "policies.h"
#include "../common/nz_handoff.h"
#include "../common/sync.h"
#include "v_abs_max.h"

namespace AttentionCore {

// A staged region (per-core staging): id (kv_nz.h RegionOf) and rows [row0, row0 + rows) of its
// KV head's matrix, the zero rows past the tensor's end included.
struct KvNzRegion {
    uint32_t id;
    uint32_t row0;
    uint32_t rows;
};

template <typename T> struct KvNz {
    __aicore__ inline void Init(const ForwardParams *p, GM_ADDR key, GM_ADDR value, GM_ADDR workspace)
    {
        p_ = p;
        src_[0].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(key));
        src_[1].SetGlobalBuffer(reinterpret_cast<__gm__ T *>(value));
        nz_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(workspace + p->kvNzOffset));
    }

    // Element offset of token `token` (of batch b's rows; TND: the token axis) of KV head kvHead.
    __aicore__ inline uint64_t Offset(uint32_t tensor, uint32_t b, uint32_t kvHead, uint64_t token) const
    {
        const uint64_t region = (uint64_t(kvHead) * p_->kvNzBatches + (p_->kvNzBatches == 1 ? 0 : b)) * 2 + tensor;
        return (region * (p_->headDimAlign / 16) * p_->kvNzRows + token) * 16;
    }

    // Whether the cube's first S blocks go out during the staging, from the caller's K rows
    // (forward_cube.h Run): only where the staging copies K unchanged (keyScale 1) and K does
    // not pair with V in one staged copy (lazy P.V's kvNzPairs). Then the cube does not join
    // the staging's SyncAll: the vector cores meet among themselves and each tells its own cube
    // (StagedSignal), so neither side waits for the other's start (the cube's first S, the
    // vector cores' staging).
    __aicore__ inline bool EarlyS(float keyScale, bool lazyPv) const
    {
        return keyScale == 1.0f && (!lazyPv || p_->kvNzPairs == 0 || p_->kvNzLate != 0);
    }

    // Whether K/V are staged during the first units (LateStart), on the cube and the vector cores
    // alike: planned (kvNzLate) and K staged unchanged, as the first units read the caller's K.
    __aicore__ inline bool Late(float keyScale) const { return p_->kvNzLate != 0 && keyScale == 1.0f; }

    // Vector cores, EarlyS: every vector core's staging is done (a barrier of the launch's
    // vector cores), then this core's cube may read the staged regions (FLAG_KV_STAGED, which
    // the cube waits for once before its per-region waits). The barrier's flag id is the same
    // number: the vector cores never wait for FLAG_KV_STAGED from the cube.
    __aicore__ inline void StagedSignal() const
    {
        AscendC::CrossCoreSetFlag<0, PIPE_MTE3>(FLAG_KV_STAGED);
        AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_STAGED);
    }

    // Whether tensor (0: K, 1: V) is staged.
    __aicore__ inline bool Staged(uint32_t tensor) const
    {
        return p_->kvNz == KV_NZ_BOTH || p_->kvNz == (tensor == 0 ? KV_NZ_K_ONLY : KV_NZ_V_ONLY);
    }

    // Whether key row `token` lies in the staged rows (ForwardParams::kvNzStageKeys).
    __aicore__ inline bool StagedRow(uint64_t token) const
    {
        return p_->kvNzStageKeys == 0 || token < p_->kvNzStageKeys;
    }

    // The rows of a region the pass before the main loop stages.
    __aicore__ inline uint32_t StagedRows() const
    {
        return p_->kvNzStageKeys != 0 && p_->kvNzStageKeys < p_->kvNzRows ? p_->kvNzStageKeys : p_->kvNzRows;
    }

    // Key rows [token, token + rowsPad) -> an Nz L1 tile of rowsPad rows (cube).
    __aicore__ inline void Load(const AscendC::LocalTensor<T> &dst, uint32_t tensor, uint32_t b, uint32_t kvHead,
                                uint64_t token, uint32_t rowsPad) const
    {
        NzHandoff<T>::Load(dst, nz_[Offset(tensor, b, kvHead, token)], rowsPad, p_->headDimAlign, p_->kvNzRows);
    }

    // K and V rows [token, token + rowsPad) -> one L1 tile: K's column blocks, then V's (rowsPad
    // rows each).
    __aicore__ inline void LoadPair(const AscendC::LocalTensor<T> &dst, uint32_t b, uint32_t kvHead, uint64_t token,
                                    uint32_t rowsPad) const
    {
        NzHandoff<T>::Load(dst, nz_[Offset(0, b, kvHead, token)], rowsPad, 2 * p_->headDimAlign, p_->kvNzRows);
    }

    // The conversion (vector core `vec` of `vecCount`): chunks of kvNzChunk rows through two
    // copies, so that a chunk's load overlaps the previous chunk's conversion and store; nd and
    // nz each at least 2 x kvNzChunk x headDimAlign elements of UB; K multiplied by keyScale on
    // the way (fp16; the host passes 1 or a power of two, which is exact). Runs before the main
    // loop, on the S buffers' and the ring's event ids (sync.h: free until then); ends with every
    // pipe drained.
    // With per-core staging only the regions listed (regions[0, count): every core's first).
    // vmax (fp16 only, VAbsMax SCRATCH halves of scratch): its element 128 := the largest |V| of
    // the V rows this core staged (0 if none), for fp16 final sums (VMaxKnown, v_abs_max.h).
    __aicore__ inline void Prepare(const AscendC::LocalTensor<T> &nd, const AscendC::LocalTensor<T> &nz, uint32_t vec,
                                   uint32_t vecCount, float keyScale = 1.0f, const KvNzRegion *regions = nullptr,
                                   uint32_t count = 0, const AscendC::LocalTensor<T> *vmax = nullptr) const
    {
        if (vmax != nullptr) {
            VAbsMax<T>::Start(*vmax);
        }
        const uint32_t ch = p_->kvNzChunk;
        const uint32_t dp = p_->headDimAlign;
        uint32_t span = regions != nullptr ? 0 : StagedRows();  // the longest region's rows
        for (uint32_t k = 0; regions != nullptr && k < count; ++k) {
            span = regions[k].rows > span ? regions[k].rows : span;
        }
        const uint32_t perRegion = (span + ch - 1) / ch;
        // One tensor only (KV_NZ_K_ONLY, KV_NZ_V_ONLY): the other's rows stay where they are and
        // the cube converts them itself.
        const uint32_t firstTensor = p_->kvNz == KV_NZ_V_ONLY ? 1 : 0;
        const uint64_t tensors = p_->kvNz == KV_NZ_BOTH ? 2 : 1;
        const uint64_t listed = regions != nullptr ? count : uint64_t(p_->numKvHeads) * p_->kvNzBatches;
        const uint64_t items = tensors * listed * perRegion;
        // A launch can hold more vector cores than the plan (the backward's recompute launches
        // for the larger of its two plans): those stage nothing.
        const uint64_t first = vec < vecCount ? items * vec / vecCount : items;
        const uint64_t last = vec < vecCount ? items * (vec + 1) / vecCount : items;
        for (int32_t b = 0; b < 2; ++b) {  // both copies start free
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + b);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + b);
        }
        for (uint64_t i = first; i < last; ++i) {
            // a skipped chunk takes no copy: the next one waits for the copy two used chunks back
            const int32_t b = static_cast<int32_t>((i - first) & 1);
            const AscendC::LocalTensor<T> in = nd[b * ch * dp];
            const AscendC::LocalTensor<T> out = nz[b * ch * dp];
            const uint32_t c = static_cast<uint32_t>(i % perRegion);
            const uint64_t region = i / perRegion;
            const uint32_t tensor = firstTensor + static_cast<uint32_t>(region / listed);
            uint32_t bt = static_cast<uint32_t>(region % p_->kvNzBatches);
            uint32_t h = static_cast<uint32_t>(region / p_->kvNzBatches % p_->numKvHeads);
            uint32_t row0 = 0, extent = StagedRows();
            if (regions != nullptr) {  // RegionOf's numbering
                const KvNzRegion &r = regions[region % listed];
                bt = p_->kvNzBatches == 1 ? 0 : r.id / p_->numKvHeads;
                h = r.id % p_->numKvHeads;
                row0 = r.row0;
                extent = r.rows;
            }
            if (c * ch >= extent) {  // past a region shorter than the longest
                continue;
            }
            const uint32_t s0 = row0 + c * ch;
            const uint32_t rows = extent - c * ch < ch ? extent - c * ch : ch;
            const uint32_t real = s0 >= p_->kvNzSeq ? 0 : (p_->kvNzSeq - s0 < rows ? p_->kvNzSeq - s0 : rows);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + b);  // the conversion two chunks back read it
            if (real > 0) {
                const uint64_t at =
                    (p_->kvNzBatches == 1 ? 0 : bt * p_->kvStrideB) + h * p_->kvStrideN + uint64_t(s0) * p_->kvStrideS;
                AscendC::DataCopyExtParams copy(static_cast<uint16_t>(real), p_->headDim * sizeof(T),
                                                static_cast<uint32_t>((p_->kvStrideS - p_->headDim) * sizeof(T)), 0, 0);
                AscendC::DataCopyPad(in, src_[tensor][at], copy, AscendC::DataCopyPadExtParams<T>(false, 0, 0, 0));
            }
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_IN + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_IN + b);
            if (real < rows) {  // the zero rows past the tensor's end
                AscendC::Duplicate(in.template ReinterpretCast<uint16_t>()[real * dp], static_cast<uint16_t>(0),
                                   static_cast<int32_t>((rows - real) * dp));
            }
            AscendC::PipeBarrier<PIPE_V>();
            if constexpr (AscendC::IsSameType<T, half>::value) {
                if (tensor == 0 && real > 0 && keyScale != 1.0f) {
                    AscendC::Muls(in, in, static_cast<half>(keyScale), static_cast<int32_t>(real * dp));
                    AscendC::PipeBarrier<PIPE_V>();
                }
            }
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + b);  // the store two chunks back read it
            NzHandoff<T>::Arrange(out, in, rows, dp);
            if (vmax != nullptr && tensor == 1 && real > 0) {
                VAbsMax<T>::Fold(*vmax, in, real * dp);
            }
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + b);
            AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + b);
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + b);
            NzHandoff<T>::Store(nz_[Offset(tensor, bt, h, 0)], out, s0, rows, dp, p_->kvNzRows);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + b);
        }
        for (int32_t b = 0; b < 2; ++b) {  // drain
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + b);
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + b);
        }
        if (vmax != nullptr) {
            VAbsMax<T>::Reduce(*vmax);
        }
        AscendC::PipeBarrier<PIPE_ALL>();
    }

    // Whether every vector core knows the largest |V| of the launch once past the staging's
    // barrier (Prepare's vmax): fp16 inputs, V staged whole before the barrier (not per core,
    // late or only its first keys).
    __aicore__ inline bool VMaxKnown(float keyScale) const
    {
        return AscendC::IsSameType<T, half>::value && Staged(1) && p_->kvNzOwnRows == 0 && !Late(keyScale) &&
               StagedRows() >= p_->kvNzSeq;
    }

    // ---------------------------------------------------------------- per-core staging
    static constexpr uint32_t NO_REGION = 0xFFFFFFFFu;

    // Region of a unit: (batch, KV head); kvNzBatches 1 (one token axis): the KV head, or with
    // kvNzOwnPerBatch (batch, KV head) again, a batch's rows of the head's matrix.
    __aicore__ inline uint32_t RegionOf(const WorkUnit &u) const
    {
        return (p_->kvNzBatches == 1 && p_->kvNzOwnPerBatch == 0 ? 0 : u.b) * p_->numKvHeads + u.n / p_->groupSize;
    }
    template <class Split> __aicore__ inline uint32_t UnitRegion(Split &split, uint64_t unit) const
    {
        WorkUnit u;
        split.Decode(unit, u);
        return RegionOf(u);
    }

    // The rows of unit u's region: all of its matrix, or with kvNzOwnPerBatch its batch's rows,
    // the last batch's with the zero rows after them.
    __aicore__ inline KvNzRegion RegionRows(const WorkUnit &u) const
    {
        if (p_->kvNzOwnPerBatch == 0) {
            return KvNzRegion{RegionOf(u), 0, p_->kvNzRows};
        }
        const uint64_t end = u.kvBase + static_cast<uint64_t>(u.seqKv);
        const uint64_t stop = end >= p_->kvNzSeq ? p_->kvNzRows : end;
        return KvNzRegion{RegionOf(u), static_cast<uint32_t>(u.kvBase), static_cast<uint32_t>(stop - u.kvBase)};
    }

    // This core's regions (cube and vector alike): its first one and the one its run shares with
    // the next core's (staged before the barrier), and the scan for the others in unit order.
    template <class Split> __aicore__ inline void OwnInit(Split &split, uint32_t core)
    {
        own_ = p_->kvNzOwnRows != 0 && core < p_->usedCores && split.Begin(core) < split.End(core);
        if (!own_) {
            return;
        }
        first_ = UnitRegion(split, split.Begin(core));
        shared_ = split.End(core) < p_->unitCount ? UnitRegion(split, split.End(core)) : NO_REGION;
        scan_ = split.Begin(core) + 1;
        end_ = split.End(core);
        seen_ = first_;
    }

    // The next region of this core's own (unit order) and its first unit; false after the last.
    template <class Split> __aicore__ inline bool OwnNext(Split &split, uint32_t &region, uint64_t &unit)
    {
        for (; scan_ < end_; ++scan_) {
            const uint32_t r = UnitRegion(split, scan_);
            if (r == seen_) {
                continue;
            }
            seen_ = r;
            if (r != shared_) {
                region = r;
                unit = scan_++;
                return true;
            }
        }
        return false;
    }

    // The regions staged before the barrier: every core's first, in core order (ascending regions,
    // repeats adjacent) -> regions[0, count).
    template <class Split> __aicore__ inline uint32_t FirstRegions(Split &split, KvNzRegion *regions) const
    {
        uint32_t count = 0;
        for (uint32_t c = 0; c < p_->usedCores; ++c) {
            if (split.Begin(c) >= p_->unitCount) {
                break;
            }
            WorkUnit u;
            split.Decode(split.Begin(c), u);
            const uint32_t r = RegionOf(u);
            if (count == 0 || regions[count - 1].id != r) {
                regions[count++] = RegionRows(u);
            }
        }
        return count;
    }

    // Cube: before the first load from the staged region of unit u, wait for it if it is one of
    // this core's own (and for those before it, in order).
    template <class Split> __aicore__ inline void OwnWait(Split &split, const WorkUnit &u)
    {
        if (!own_) {
            return;
        }
        const uint32_t r = RegionOf(u);
        if (r == first_ || r == shared_ || r == waited_) {
            return;
        }
        uint32_t next = NO_REGION;
        uint64_t unit = 0;
        while (waited_ != r && OwnNext(split, next, unit)) {
            AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);
            waited_ = next;
        }
    }

    // Cube, after its last unit: the flags of own regions it never loaded from (units without
    // keys), so that none stays pending.
    template <class Split> __aicore__ inline void OwnWaitEnd(Split &split)
    {
        uint32_t next = NO_REGION;
        uint64_t unit = 0;
        while (own_ && OwnNext(split, next, unit)) {
            AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);
        }
    }

    // Vector core `sub` of the pair: buf takes three chunks of kvNzOwnRows x headDimAlign (two
    // in-copies, the Nz copy) and KV_NZ_ZERO_ROWS rows of 16 elements of zeros (written here). Finds the
    // first own region.
    template <class Split>
    __aicore__ inline void OwnStart(Split &split, const AscendC::LocalTensor<T> &buf, uint32_t sub, float keyScale)
    {
        if (!own_) {
            return;
        }
        sub_ = sub;
        keyScale_ = keyScale;
        BufStart(buf, p_->kvNzOwnRows);
        OwnBegin(split);
    }

    // The chunks the last step loaded stored, then up to `count` more items of this vector core's
    // own regions (their loads land while the next block's softmax runs).
    template <class Split> __aicore__ inline void OwnStep(Split &split, uint32_t count)
    {
        if (own_) {
            OwnFlushAll();
        }
        for (uint32_t k = 0; k < count && own_ && cur_ != NO_REGION; ++k) {
            OwnItem(split);
        }
    }

    // Every own region whose first unit is at most `unit` staged (before this core waits for that
    // unit's first S).
    template <class Split> __aicore__ inline void OwnThrough(Split &split, uint64_t unit)
    {
        while (own_ && cur_ != NO_REGION && curUnit_ <= unit) {
            OwnItem(split);
        }
    }

    template <class Split> __aicore__ inline void OwnEnd(Split &split)
    {
        if (!own_) {
            return;
        }
        OwnThrough(split, ~uint64_t(0));
        OwnFlushAll();
        for (int32_t b = 0; b < 2; ++b) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);
    }

    // ---------------------------------------------------------------- staging during the first units
    // Late staging (ForwardParams::kvNzLate: rows per chunk, 0: off; K and V both, no key scale).
    // No pass before the main loop: every cube runs its first unit from the caller's rows (Nd2Nz
    // copies, forward_cube.h LoadK) while every vector core stages its share of all regions, a
    // few chunks after each softmax block. Item i of the launch's list goes to vector core
    // i % vecCount, the list in key order across the regions (chunk row, region, tensor; the
    // zero rows first: their 16 small stores each go out in the lead before the loop, not in a
    // core's last step, whose arrival at the meeting waited ~1.7 us for them), so the staging
    // front moves through every region at about the pace the first units read them and their
    // copies find the rows in L2. A region here is a whole matrix, [0, kvNzSeq) and its zero
    // rows (StageItem's row range [0, kvNzRows)). WS_SLOTS + 1 blocks before its first unit's end
    // (else before the first S of its second unit, or at its end) a vector core finishes its share
    // and meets the other vector cores (LateFinish); the cube waits for FLAG_KV_STAGED before its first load from the staged
    // regions. A vector core's share needs nothing from other cores, and it reaches the meeting
    // with every P of its first unit stored, so no wait goes round. Called where Late() holds.
    // buf as OwnStart's; `blocks`: the key blocks of this core's first unit (the steps).
    __aicore__ inline void LateStart(const AscendC::LocalTensor<T> &buf, uint32_t vec, uint32_t vecCount,
                                     uint32_t blocks)
    {
        late_ = true;
        BufStart(buf, p_->kvNzLate);
        const uint32_t chunks = (p_->kvNzSeq + p_->kvNzLate - 1) / p_->kvNzLate;
        lateRegions_ = p_->numKvHeads * p_->kvNzBatches;
        lateTotal_ = uint64_t(chunks + 1) * lateRegions_ * 2;
        lateStride_ = vecCount;
        lateNext_ = vec < vecCount ? vec : lateTotal_;  // vector cores past the plan stage nothing
        const uint64_t mine = lateNext_ < lateTotal_ ? (lateTotal_ - lateNext_ + vecCount - 1) / vecCount : 0;
        const uint64_t steps = blocks > 0 ? blocks : 1;  // one before the loop, one after each block but the last
        lateStep_ = (mine + steps - 1) / steps;
    }

    // The chunks the last step loaded stored, then the next `steps` steps' items; after the
    // last item this core's arrival at the meeting right away (LateArrive), its wait only at
    // LateFinish: the cubes then find the staged regions ready when their first units end,
    // and no vector core stalls for the slowest one's share.
    __aicore__ inline void LateStep(uint32_t steps = 1)
    {
        if (late_ && !lateArrived_) {
            OwnFlushAll();
            LateItems(lateStep_ * steps);
            if (lateNext_ >= lateTotal_) {
                LateArrive();
            }
        }
    }

    // Near the end of this core's first unit (forward_vector.h; else before the first S of its
    // second unit, or at its end): the rest of the share, the meeting, then FLAG_KV_STAGED to the
    // cube (StagedSignal's steps, split; once).
    __aicore__ inline void LateFinish()
    {
        if (!late_ || lateDone_) {
            return;
        }
        lateDone_ = true;
        LateArrive();
        AscendC::CrossCoreWaitFlag(FLAG_KV_STAGED);
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_STAGED);
    }

    // ---------------------------------------------------------------- Q staged per core
    // With K/V staged in pairs, late or before the loop (ForwardParams::qNzUnits != 0), a unit's
    // Q block from position qNzFirst of its core's units on loads from an Nz copy in L2 (one plain copy, ~0.4 us at D = 256,
    // 112 rows) instead of the caller's rows (an Nd2Nz copy from HBM, ~1.3 us), on the cube's
    // MTE2, which bounds these launches. The core's own two vector cores write those copies,
    // each its half of every block's rows, in the chunk buffers of the late share once that is
    // done (during the core's second unit, a few chunks after each softmax block; without late
    // staging in qNzChunk-row chunks from the first unit on), then tell
    // their cube (FLAG_Q_SCALED), at the latest before the first S of the unit whose softmax
    // comes before the cube's first load of such a copy (position qNzFirst - 1: the cube loads
    // a unit's Q during the first S of the unit before). Modelled B2 N8 S2K D256 (12-14 items
    // per core) 305.2 -> 297.9 us.
    __aicore__ inline void QInit(GM_ADDR query, GM_ADDR workspace)
    {
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        qNz_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(workspace + p_->qNzOffset));
    }
    // The Nz copy of core `core`'s unit at position pos (blockQ rows per column block).
    __aicore__ inline AscendC::GlobalTensor<T> QSlot(uint32_t core, uint64_t pos) const
    {
        return qNz_[(uint64_t(core) * p_->qNzUnits + pos) * p_->blockQ * p_->headDimAlign];
    }
    // Cube: whether the unit at position pos of its core loads Q from its Nz copy.
    __aicore__ inline bool QStaged(uint64_t pos) const { return p_->qNzUnits != 0 && pos >= p_->qNzFirst; }
    // Cube: that copy's `rows` rows -> an Nz L1 tile of rowsPad rows (the first such load waits
    // for the vector cores' FLAG_Q_SCALED).
    __aicore__ inline void LoadQ(const AscendC::LocalTensor<T> &dst, uint32_t core, uint64_t pos, uint32_t rows,
                                 uint32_t rowsPad)
    {
        if (!qWaited_) {
            qWaited_ = true;
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_Q_SCALED);
        }
        NzHandoff<T>::Load(dst, QSlot(core, pos), rowsPad, p_->headDimAlign, p_->blockQ, 0, rows);
    }
    // Cube, at its end: the vector cores' FLAG_Q_SCALED where no load waited for it (every unit
    // from qNzFirst on without keys, or loaded from the caller's rows), so that no flag outlives
    // the launch.
    __aicore__ inline void QWaitEnd(uint64_t begin, uint64_t end)
    {
        if (p_->qNzUnits != 0 && end > begin + p_->qNzFirst && !qWaited_) {
            qWaited_ = true;
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_Q_SCALED);
        }
    }
    // Vector core `sub` of core `core`: its Q share, the units [begin + qNzFirst, end). With late
    // staging after the late share (in its chunk buffers), else from here on in buf (qNzChunk
    // rows per chunk, as OwnStart's).
    __aicore__ inline void QStart(uint64_t begin, uint64_t end, uint32_t core, uint32_t sub,
                                  const AscendC::LocalTensor<T> &buf)
    {
        qActive_ = p_->qNzUnits != 0 && end > begin + p_->qNzFirst;
        if (qActive_ && !late_) {  // qNzChunk is 0 only in a late plan, which the host runs late
            BufStart(buf, p_->qNzChunk != 0 ? p_->qNzChunk : p_->kvNzLate);
            qStarted_ = true;
        }
        qBegin_ = begin;
        qUnit_ = begin + p_->qNzFirst;
        qEnd_ = end;
        qCore_ = core;
        qSub_ = sub;
    }
    // Up to `count` chunks of the Q share, once the late K/V share is done.
    template <class Split> __aicore__ inline void QStep(Split &split, uint32_t count)
    {
        if (!qActive_ || qDone_ || (late_ && !lateArrived_)) {
            return;
        }
        if (!qStarted_) {  // LateArrive drained the chunk buffers: free again
            qStarted_ = true;
            for (int32_t b = 0; b < 2; ++b) {
                AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);
            }
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);
        }
        for (uint32_t k = 0; k < count && qUnit_ < qEnd_;) {
            WorkUnit u;
            split.Decode(qUnit_, u);
            const uint32_t half = (u.rows + 1) / 2;
            const uint32_t row0 = qSub_ == 0 ? 0 : half;
            const uint32_t rows = qSub_ == 0 ? half : u.rows - half;
            const uint32_t s0 = row0 + qChunk_ * ch_;
            if (s0 >= row0 + rows) {  // this unit's half done
                ++qUnit_;
                qChunk_ = 0;
                continue;
            }
            const uint32_t real = row0 + rows - s0 < ch_ ? row0 + rows - s0 : ch_;
            // the strided rows of KvSource<KvStrided>::QOffset, the only Q layout planned with qNzUnits
            const uint64_t at = u.b * p_->qStrideB + u.n * p_->qStrideN + (u.qBase + u.q0 + s0) * p_->qStrideS;
            LoadChunk(q_[at], p_->qStrideS, real, 2, s0, QSlot(qCore_, qUnit_ - qBegin_), p_->blockQ);
            ++qChunk_;
            ++k;
        }
    }
    // The rest of the Q share, every store done, then FLAG_Q_SCALED to the cube (once).
    template <class Split> __aicore__ inline void QFinish(Split &split)
    {
        if (!qActive_ || qDone_) {
            return;
        }
        LateFinish();  // the late share first (its chunk buffers)
        QStep(split, ~0u);
        qDone_ = true;
        OwnFlushAll();
        for (int32_t b = 0; b < 2; ++b) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_Q_SCALED);
    }

    static constexpr int32_t EVT_OWN_IN = VEC_EVT_OWN_IN;    // + copy: MTE2_V loaded / V_MTE2 free
    static constexpr int32_t EVT_OWN_OUT = VEC_EVT_OWN_OUT;  // V_MTE3 arranged / MTE3_V stored
    static constexpr int32_t EVT_IN = VEC_EVT_S;             // + copy: MTE2_V loaded / V_MTE2 free
    static constexpr int32_t EVT_OUT = VEC_EVT_KV_OUT;       // + copy: V_MTE3 arranged / MTE3_V stored

    const ForwardParams *p_ = nullptr;
    AscendC::GlobalTensor<T> src_[2];
    AscendC::GlobalTensor<T> nz_;

private:
    // The staging buffers in buf (two in-copies and the Nz copy of `rows` x headDimAlign, then
    // KV_NZ_ZERO_ROWS rows of 16 elements of zeros, written here), every copy free.
    __aicore__ inline void BufStart(const AscendC::LocalTensor<T> &buf, uint32_t rows)
    {
        ch_ = rows;
        const uint32_t chunk = rows * p_->headDimAlign;
        ownNd_ = buf;
        ownNz_ = buf[2 * chunk];
        ownZeros_ = buf[3 * chunk];
        const AscendC::LocalTensor<T> zeros = ownZeros_;
        AscendC::Duplicate(zeros.template ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0),
                           static_cast<int32_t>(KV_NZ_ZERO_ROWS * 16));
        PipeSync<AscendC::HardEvent::V_MTE3>();
        for (int32_t b = 0; b < 2; ++b) {  // both in-copies and the Nz copy start free
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);
    }

    // The rest of the late share, every store done, then this core's arrival at the vector
    // cores' meeting (on MTE3, behind the stores; once).
    __aicore__ inline void LateArrive()
    {
        if (lateArrived_) {
            return;
        }
        lateArrived_ = true;
        LateItems(~uint64_t(0));
        OwnFlushAll();
        for (int32_t b = 0; b < 2; ++b) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);
        AscendC::CrossCoreSetFlag<0, PIPE_MTE3>(FLAG_KV_STAGED);
    }

    // Up to `count` more items of this vector core's late share (LateStart's list).
    __aicore__ inline void LateItems(uint64_t count)
    {
        for (uint64_t k = 0; k < count && lateNext_ < lateTotal_; ++k) {
            const uint64_t i = lateNext_;
            lateNext_ += lateStride_;
            StageItem(static_cast<uint32_t>(i / 2 % lateRegions_), static_cast<uint32_t>(i & 1),
                      static_cast<uint32_t>(i / 2 / lateRegions_), 0, p_->kvNzRows);  // whole matrices
        }
    }

    // The next own region into cur_ (NO_REGION after the last), its rows and items; this core's
    // first item of it.
    template <class Split> __aicore__ inline void OwnBegin(Split &split)
    {
        cur_ = NO_REGION;
        while (OwnNext(split, cur_, curUnit_)) {
            WorkUnit u;
            split.Decode(curUnit_, u);
            const KvNzRegion r = RegionRows(u);
            curRow0_ = r.row0;
            curEnd_ = r.row0 + r.rows;
            // the zero rows, then the chunks of the tensor's rows
            const uint32_t real = (curEnd_ < p_->kvNzSeq ? curEnd_ : p_->kvNzSeq) - curRow0_;
            items_ = (p_->kvNz == KV_NZ_BOTH ? 2 : 1) * (1 + (real + p_->kvNzOwnRows - 1) / p_->kvNzOwnRows);
            item_ = sub_;
            if (item_ < items_) {
                return;
            }
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_STAGED);  // nothing of it is this core's
            cur_ = NO_REGION;
        }
    }

    // This vector core's next item of the current own region (the pair's items alternate; the
    // region's rows [curRow0_, curEnd_), StageItem). Per tensor item 0 stores the region's zero
    // rows (those from kvNzSeq on, at most 31: only in the region that ends the matrix), item
    // 1 + k loads chunk k of the caller's rows; a chunk is arranged in Nz order and stored at the
    // next step (its load has long landed by then), the region's last ones right away, and then
    // its FLAG_KV_STAGED follows the stores on MTE3.
    template <class Split> __aicore__ inline void OwnItem(Split &split)
    {
        const uint32_t perTensor = items_ / (p_->kvNz == KV_NZ_BOTH ? 2 : 1);
        const uint32_t tensor = (p_->kvNz == KV_NZ_V_ONLY ? 1 : 0) + item_ / perTensor;
        StageItem(cur_, tensor, item_ % perTensor, curRow0_, curEnd_);
        item_ += 2;
        if (item_ >= items_) {
            OwnFlushAll();
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_STAGED);
            OwnBegin(split);
        }
    }

    // Item c of tensor `tensor` of region `region`, rows [row0, end) of its KV head's matrix (the
    // zero rows from kvNzSeq on included where the region ends the matrix). c 0: those zero rows
    // (at most KV_NZ_ZERO_ROWS, one store per 16-column block; none where the region ends before
    // kvNzSeq); 1 + k: chunk k of the region's caller rows, loaded here, arranged in Nz order and
    // stored by a later OwnFlush, the chunk two back's right away.
    __aicore__ inline void StageItem(uint32_t region, uint32_t tensor, uint32_t c, uint32_t row0, uint32_t end)
    {
        const uint32_t ch = ch_;
        const uint32_t dp = p_->headDimAlign;
        const uint32_t bt = p_->kvNzBatches == 1 ? 0 : region / p_->numKvHeads;
        const uint32_t h = region % p_->numKvHeads;
        const AscendC::GlobalTensor<T> dst = nz_[Offset(tensor, bt, h, 0)];
        const uint32_t realEnd = end < p_->kvNzSeq ? end : p_->kvNzSeq;
        if (c == 0) {
            const uint16_t tail = static_cast<uint16_t>(end - realEnd);
            for (uint32_t j = 0; tail != 0 && j < dp / 16; ++j) {
                AscendC::DataCopy(dst[(uint64_t(j) * p_->kvNzRows + realEnd) * 16], ownZeros_,
                                  AscendC::DataCopyParams(1, tail, 0, 0));
            }
            return;
        }
        const uint32_t s0 = row0 + (c - 1) * ch;
        const uint32_t real = realEnd - s0 < ch ? realEnd - s0 : ch;
        const uint64_t at =
            (p_->kvNzBatches == 1 ? 0 : bt * p_->kvStrideB) + h * p_->kvStrideN + uint64_t(s0) * p_->kvStrideS;
        LoadChunk(src_[tensor][at], p_->kvStrideS, real, tensor, s0, dst, p_->kvNzRows);
    }

    // `real` rows of `src` (`stride` elements apart) into the next in-copy, after the chunk two
    // back in it is arranged and stored (OwnFlush); OwnFlush later stores them in Nz order at
    // dst (`pitch` rows per column block) from row s0.
    __aicore__ inline void LoadChunk(const AscendC::GlobalTensor<T> &src, uint64_t stride, uint32_t real,
                                     uint32_t tensor, uint32_t s0, const AscendC::GlobalTensor<T> &dst, uint32_t pitch)
    {
        const uint32_t b = ownIdx_++ & 1;
        OwnFlush(b);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);  // its Nz arrangement two chunks back is done
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(real), p_->headDim * sizeof(T),
                                        static_cast<uint32_t>((stride - p_->headDim) * sizeof(T)), 0, 0);
        AscendC::DataCopyPad(ownNd_[b * ch_ * p_->headDimAlign], src, copy,
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, 0));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_OWN_IN + b);
        pend_[b] = {true, tensor, s0, real, dst, pitch};
    }

    // The chunks loaded and not yet stored, oldest first.
    __aicore__ inline void OwnFlushAll()
    {
        OwnFlush(ownIdx_ & 1);
        OwnFlush((ownIdx_ + 1) & 1);
    }

    // The chunk loaded into in-copy b, if any: arranged in Nz order (K scaled) and stored.
    __aicore__ inline void OwnFlush(uint32_t b)
    {
        Pending &pd = pend_[b];
        if (!pd.loaded) {
            return;
        }
        pd.loaded = false;
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<T> in = ownNd_[b * ch_ * dp];
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_OWN_IN + b);
        if constexpr (AscendC::IsSameType<T, half>::value) {
            if (pd.tensor == 0 && keyScale_ != 1.0f) {  // the score's scale folded into K (exact, see Prepare)
                AscendC::Muls(in, in, static_cast<half>(keyScale_), static_cast<int32_t>(pd.rows * dp));
                AscendC::PipeBarrier<PIPE_V>();
            }
        }
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);  // the last chunk's store is done
        NzHandoff<T>::Arrange(ownNz_, in, pd.rows, dp);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_OWN_IN + b);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT_OWN_OUT);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT_OWN_OUT);
        NzHandoff<T>::Store(pd.dst, ownNz_, pd.s0, pd.rows, dp, pd.pitch);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OWN_OUT);
    }

    bool own_ = false;
    uint32_t first_ = NO_REGION, shared_ = NO_REGION, seen_ = NO_REGION, waited_ = NO_REGION, cur_ = NO_REGION;
    uint64_t scan_ = 0, end_ = 0, curUnit_ = 0;
    uint32_t curRow0_ = 0, curEnd_ = 0;  // the current own region's rows
    uint32_t item_ = 0, items_ = 0, sub_ = 0, ownIdx_ = 0;
    uint32_t ch_ = 0;  // rows per chunk of the per-core or late staging (BufStart)
    float keyScale_ = 1.0f;
    bool late_ = false, lateArrived_ = false, lateDone_ = false;  // late staging (LateStart)
    uint32_t lateRegions_ = 0;
    uint64_t lateNext_ = 0, lateTotal_ = 0, lateStride_ = 1, lateStep_ = 0;
    // Q staged per core (QStart): the next unit and its next chunk, the end of the core's units.
    bool qActive_ = false, qStarted_ = false, qDone_ = false, qWaited_ = false;
    uint64_t qUnit_ = 0, qEnd_ = 0, qBegin_ = 0;
    uint32_t qChunk_ = 0, qCore_ = 0, qSub_ = 0;
    AscendC::GlobalTensor<T> q_, qNz_;
    AscendC::LocalTensor<T> ownNd_, ownNz_, ownZeros_;
    struct Pending {  // per in-copy: a chunk loaded, not yet arranged and stored
        bool loaded;
        uint32_t tensor, s0, rows;  // tensor 0 K, 1 V, 2 Q
        AscendC::GlobalTensor<T> dst;
        uint32_t pitch;  // rows per column block of dst
    };
    Pending pend_[2] = {};
};

}  // namespace AttentionCore
