// K/V of the decode operator handed to the cube through a per-core ring in the cube's Nz order,
// filled by the vector cores while the core runs.
//
// Decode reads every K/V byte once. Loaded by the cube straight from the cache, each key block
// is an Nd2Nz copy that converts every row on the way (a cost per row on top of the bytes,
// docs/performance.md "Calibration"), and the cube's MTE2 alone bounds the kernel well below the
// HBM bandwidth. Here the two vector cores of each AI core read their halves of the block's K
// and V rows (contiguous or paged), convert them in UB — a Copy per row into column blocks of 16
// (common/nz_handoff.h), after a cast for int8 — and write them to a ring slot in the workspace,
// which stays in L2; the cube loads each slot with one plain copy.
//   KvSource<KvDecodeRing<T>>   fp16 / bf16 K/V, copied
//   KvSource<KvDecodeInt8<T>>   int8 K/V cast to the query dtype (exact: |x| <= 128), kv_antiquant.h
// Flags (sync.h): FLAG_KV_READY vector -> cube once both vector cores wrote a block's rows,
// FLAG_KV_FREE cube -> vector once the cube's MTE2 loaded the block's V (after its K, or with it:
// DecodeParams::kvPairCopies) into L1.
// A slot holds blockKv rows of headDimAlign columns per tensor; rows of a short last block up to
// the next multiple of 16 (the cube's padded extent) are written as zeros.
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "kv_ring_layout.h"
#include "../common/nz_handoff.h"
#include "../common/sync.h"

namespace AttentionCore {

template <typename T> struct KvDecodeRing {};

// int8 -> the query dtype: one cast for fp16; bf16 goes through fp16 and fp32 (both exact).
__aicore__ inline void CastInt8Rows(const AscendC::LocalTensor<half> &dst, const AscendC::LocalTensor<int8_t> &src,
                                    const AscendC::LocalTensor<half> &, const AscendC::LocalTensor<float> &,
                                    uint32_t count)
{
    AscendC::Cast(dst, src, AscendC::RoundMode::CAST_NONE, count);
}

__aicore__ inline void CastInt8Rows(const AscendC::LocalTensor<bfloat16_t> &dst,
                                    const AscendC::LocalTensor<int8_t> &src, const AscendC::LocalTensor<half> &h,
                                    const AscendC::LocalTensor<float> &f, uint32_t count)
{
    AscendC::Cast(h, src, AscendC::RoundMode::CAST_NONE, count);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(f, h, AscendC::RoundMode::CAST_NONE, count);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(dst, f, AscendC::RoundMode::CAST_RINT, count);
}

// Whether the int8 -> T cast needs the fp16 / fp32 stages (bf16).
template <typename T> struct Int8CastStages {
    static constexpr bool value = false;
};
template <> struct Int8CastStages<bfloat16_t> {
    static constexpr bool value = true;
};

// The GM tensors of a ring source: the block table (KvDecode's) and the cache's K/V of this run
// (a list: the current batch's); the core's key/value point at the ring.
struct RingKvTensors : PagedKvTensors {
    GM_ADDR cacheKey = nullptr;
    GM_ADDR cacheValue = nullptr;
};

// The ring: the cube's hooks and the vector cores' producer. Src is the cache's element type
// (T: copied; int8_t: cast). The decode source (batch windows, paged cache: KvSource<KvDecode>)
// addresses the producer's reads; the cube sees the ring.
template <typename T, typename Src> struct KvRingSource : public KvSource<KvDecode> {
    using Source = KvSource<KvDecode>;
    static constexpr bool CAST = sizeof(Src) != sizeof(T);
    static constexpr bool BF16_STAGES = CAST && Int8CastStages<T>::value;

    // ---- cube: a block is staged in Nz order, blockKv rows per column block (KvSourceBase)
    __aicore__ inline static constexpr bool StagedNz() { return true; }
    __aicore__ inline uint64_t KvOffset(uint32_t, uint32_t, uint32_t) const { return ringAt_; }
    __aicore__ inline uint32_t NzSlotRows() const { return p_->blockKv; }
    // A block's V slot follows its K slot: the cube may load both with one copy.
    __aicore__ inline uint32_t KvPairCopies() const { return d_->kvPairCopies; }

    // The ring slot of the block the cube loads next.
    __aicore__ inline void BeforeLoad(const WorkUnit &, const KvBlock &, bool isValue)
    {
        const DecodeParams &d = *d_;
        const uint64_t item = isValue ? vLoads_++ : kLoads_++;
        if (!isValue) {
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_KV_READY);  // both vector cores wrote it
        }
        ringAt_ = AscendC::GetBlockIdx() * (d.ringCoreBytes / sizeof(T)) +
                  ((item % d.ringSlots) * 2 + (isValue ? 1 : 0)) * SlotElems();
    }
    __aicore__ inline void AfterLoad(bool isValue)
    {
        if (isValue) {
            AscendC::CrossCoreSetFlag<2, PIPE_MTE2>(FLAG_KV_FREE);  // K and V of the slot are in L1
        }
    }

    // ---- vector (KvSourceBase hooks): the producer
    template <class GmTensors>
    __aicore__ inline void StreamInit(const DecodeTiling &td, AscendC::TPipe *pipe, const GmTensors &t)
    {
        const ForwardParams *p = &td.params;
        const DecodeParams &d = td.decode;
        split_.Init(td, t);
        mask_.Init(td, t);
        core_ = AscendC::GetBlockIdx() / 2;
        sub_ = AscendC::GetSubBlockIdx();
        ring_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.key + core_ * d.ringCoreBytes));
        keyIn_.SetGlobalBuffer(reinterpret_cast<__gm__ Src *>(t.kv.cacheKey));
        valueIn_.SetGlobalBuffer(reinterpret_cast<__gm__ Src *>(t.kv.cacheValue));
        // UB (kv_ring_layout.h, what the planner reserved)
        inCopies_ = d.ringInCopies;
        outCopies_ = d.ringOutCopies;
        const KvRingUb ub = KvRingUbLayout(d.ringChunkElems, p->headDim, p->headDimAlign, sizeof(T), sizeof(Src),
                                           BF16_STAGES, CAST, inCopies_, outCopies_, d.antiTableHeads);
        dp_ = ub.rowElems;
        chunk_ = ub.chunkRows;
        {  // blocks the out copies hold: chunks per block and vector core
            const uint32_t rows = d.ringByTensor != 0 ? p->blockKv : (p->blockKv + 1) / 2;
            const uint32_t perBlock = (d.ringByTensor != 0 ? 1 : 2) * ((rows + chunk_ - 1) / chunk_);
            outBlocks_ = outCopies_ / perBlock;
        }
        pipe->InitBuffer(inBuf_, ub.in);
        pipe->InitBuffer(outBuf_, ub.out);
        if (CAST) {
            pipe->InitBuffer(ndBuf_, ub.nd);
        }
        if (BF16_STAGES) {
            pipe->InitBuffer(halfBuf_, ub.half);
            pipe->InitBuffer(floatBuf_, ub.flt);
        }
        // Columns past the cache row's 32-byte blocks are never read: zero once (the Nz columns
        // up to headDimAlign the cube multiplies). Rows of whole 32-byte blocks have none (the
        // first read then need not wait for this pass).
        if (AlignUp(p->headDim * static_cast<uint32_t>(sizeof(Src)), 32) < dp_ * sizeof(Src)) {
            AscendC::Duplicate(inBuf_.Get<uint16_t>(), static_cast<uint16_t>(0), static_cast<int32_t>(ub.in / 2));
            AscendC::PipeBarrier<PIPE_V>();
        }
        unit_ = split_.Begin(core_);
        unitEnd_ = split_.End(core_);
        for (int32_t i = 0; i < static_cast<int32_t>(inCopies_); ++i) {  // every copy starts free
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + i);
            read_[i].rows = NONE;
        }
        for (int32_t o = 0; o < static_cast<int32_t>(outCopies_); ++o) {
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + o);
            conv_[o].rows = NONE;
        }
        // The lead of blocks the steady state keeps, all in the ring before the first softmax.
        const uint64_t lead = Target(0, d.ringAhead, d.ringStartExtra);
        Read(lead);
        ConvertUpTo(lead);
        WriteUpTo(lead);
    }

    // After the softmax of this core's block `block` (and the next block's first S load): three
    // stages one call apart — write the rows converted at the previous call to the ring,
    // convert the rows read at the previous call, read new blocks. The next softmax queues
    // behind these conversions in the vector pipe, so only writes and conversions whose inputs
    // are ready sit between two softmaxes.
    __aicore__ inline void StreamAhead(uint64_t block) { Advance(block + 1); }

    // Stage targets of the call before softmax `step` (step 0: StreamInit, which writes all it
    // reads): the blocks written are max(step + ringAhead, ringAhead + ringStartExtra). The
    // softmax of block j may wait for the S of block j + 1 (the vector stage loads it early), so
    // blocks j and j + 1 must be in the ring before it, and the cube computes S up to
    // WS_SLOTS - 1 blocks ahead of the P.V it waits for. The conversions and reads run one and
    // two calls ahead of the writes.
    __aicore__ inline void Advance(uint64_t step)
    {
        const uint64_t ahead = d_->ringAhead;
        const uint64_t extra = d_->ringStartExtra;
        if (outBlocks_ < 2) {
            // The out copies hold one block: converting a block right after issuing the previous
            // one's write would hold the next softmax in the vector pipe until that write (queued
            // behind the P store) is done. Convert and write one call earlier instead: the
            // conversion's copies were written during the softmax before.
            ConvertUpTo(Target(step + 1, ahead, extra));
            WriteUpTo(Target(step + 1, ahead, extra));
        } else {
            WriteUpTo(Target(step, ahead, extra));
            ConvertUpTo(Target(step + 1, ahead, extra));
        }
        Read(Target(step + 2, ahead, extra));
    }

    __aicore__ inline static uint64_t Target(uint64_t step, uint64_t ahead, uint64_t extra)
    {
        return step + ahead > ahead + extra ? step + ahead : ahead + extra;
    }

    __aicore__ inline void StreamEnd()
    {
        ConvertUpTo(ALL);
        WriteUpTo(ALL);
        const uint64_t slots = d_->ringSlots;
        for (uint64_t i = produced_ > slots ? produced_ - slots : 0; i < produced_; ++i) {
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(FLAG_KV_FREE);  // the cube's last releases
        }
        for (int32_t i = 0; i < static_cast<int32_t>(inCopies_); ++i) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + i);
        }
        for (int32_t o = 0; o < static_cast<int32_t>(outCopies_); ++o) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + o);
        }
    }

private:
    static constexpr uint32_t IN_COPIES = KV_RING_IN_COPIES;    // at most: chunks read, waiting for their conversion
    static constexpr uint32_t OUT_COPIES = KV_RING_OUT_COPIES;  // at most: Nz chunks waiting for their ring write
    // Event ids: sync.h's table.
    static constexpr int32_t EVT_IN = VEC_EVT_KV_IN;
    static constexpr int32_t EVT_OUT = VEC_EVT_KV_OUT;
    static constexpr uint32_t NONE = 0xFFFFFFFFu;
    static constexpr uint64_t ALL = ~0ULL;

    // A chunk of rows on its way to rows [row0, row0 + rows) of ring slot `slot` (elements);
    // `first` / `last` of its block.
    struct Chunk {
        uint64_t slot;
        uint64_t item;
        uint32_t row0;
        uint32_t rows;  // NONE: the copy holds no chunk
        bool first;
        bool last;
    };

    __aicore__ inline uint64_t SlotElems() const { return static_cast<uint64_t>(p_->blockKv) * p_->headDimAlign; }

    // Reads the blocks [produced_, count) of this core's sequence (fewer at its end).
    __aicore__ inline void Read(uint64_t count)
    {
        WorkUnit u;
        KvBlock blk;
        while (produced_ < count && NextBlock(u, blk)) {
            ReadBlock(u, blk);
        }
    }

    // The next key block of this core's units in the order the core visits them.
    __aicore__ inline bool NextBlock(WorkUnit &u, KvBlock &blk)
    {
        while (unit_ < unitEnd_) {
            if (blockInUnit_ == 0) {  // entering unit_: its key window
                split_.Decode(unit_, cur_);
                mask_.KvRange(cur_);
                blocksInUnit_ = KvBlockCount(cur_.kvBegin, cur_.kvEnd, p_->blockKv);
            }
            if (blockInUnit_ < blocksInUnit_) {
                u = cur_;
                blk = KvBlockAt(cur_.kvBegin, cur_.kvEnd, p_->blockKv, blockInUnit_++);
                return true;
            }
            ++unit_;
            blockInUnit_ = 0;
        }
        return false;
    }

    // This vector core's half of the block's K and V rows (the second half up to the padded
    // extent), or by tensor all rows of K (vector core 0) or V (1), bound for ring slot
    // produced_ % slots.
    __aicore__ inline void ReadBlock(const WorkUnit &u, const KvBlock &blk)
    {
        const DecodeParams &d = *d_;
        const uint32_t half = (blk.cols + 1) / 2;
        const bool byTensor = d.ringByTensor != 0;
        const uint32_t r0 = sub_ == 0 || byTensor ? 0 : half;
        const uint32_t r1 = sub_ == 0 && !byTensor ? half : AlignUp(blk.cols, 16);
        const uint32_t firstWhich = byTensor ? sub_ : 0;  // the tensors this core reads
        const uint32_t lastWhich = byTensor ? sub_ : 1;
        const uint64_t item = produced_++;
        if (r1 == r0) {  // no rows here: keep the flags in block order
            ConvertUpTo(ALL);
            WriteUpTo(ALL);
            if (item >= d.ringSlots) AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(FLAG_KV_FREE);
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_READY);
            return;
        }
        const uint64_t slot = item % d.ringSlots;
        for (uint32_t which = firstWhich; which <= lastWhich; ++which) {
            for (uint32_t c0 = r0; c0 < r1; c0 += chunk_) {
                const uint32_t n = r1 - c0 < chunk_ ? r1 - c0 : chunk_;
                Chunk c;
                c.slot = (slot * 2 + which) * SlotElems();
                c.item = item;
                c.row0 = c0;
                c.rows = n;
                c.first = which == firstWhich && c0 == r0;
                c.last = which == lastWhich && c0 + n == r1;
                const uint32_t real = c0 >= blk.cols ? 0 : (blk.cols - c0 < n ? blk.cols - c0 : n);
                ReadRows(which == 0 ? keyIn_ : valueIn_, u, blk.k0 + c0, real, c);
            }
        }
    }

    // `real` cache rows from key `token` on into the next in copy, zeros up to `c.rows` (its
    // oldest chunk is converted first).
    __aicore__ inline void ReadRows(const AscendC::GlobalTensor<Src> &src, const WorkUnit &u, int64_t token,
                                    uint32_t real, const Chunk &c)
    {
        const uint32_t dd = p_->headDim;
        const uint32_t i = inCopy_;
        inCopy_ = (inCopy_ + 1) % inCopies_;
        if (read_[i].rows != NONE) {
            Convert(i);
        }
        const AscendC::LocalTensor<Src> in = InCopy(i);
        const uint32_t pitch = Source::KvRowPitch();
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + static_cast<int32_t>(i));  // its last conversion is done
        if (real < c.rows) {  // pad rows of a short last block
            AscendC::Duplicate(in.template ReinterpretCast<uint16_t>()[real * dp_ * sizeof(Src) / 2],
                               static_cast<uint16_t>(0), static_cast<int32_t>((c.rows - real) * dp_ * sizeof(Src) / 2));
        }
        const uint32_t padElems = AlignUp(dd * sizeof(Src), 32) / sizeof(Src) - dd;
        for (uint32_t r = 0; r < real;) {  // runs of evenly spaced rows (a page ends one)
            uint32_t run = Source::RowsInRun(u.b, static_cast<uint64_t>(token) + r);
            run = run < real - r ? run : real - r;
            const uint64_t from = Source::KvOffset(u.b, u.n, static_cast<uint32_t>(token + r));
            AscendC::DataCopyPad(
                in[r * dp_], src[from],
                AscendC::DataCopyExtParams(static_cast<uint16_t>(run), dd * sizeof(Src), (pitch - dd) * sizeof(Src),
                                           (dp_ * sizeof(Src) - AlignUp(dd * sizeof(Src), 32)) / 32, 0),
                AscendC::DataCopyPadExtParams<Src>(padElems != 0, 0, static_cast<uint8_t>(padElems),
                                                   static_cast<Src>(0)));
            r += run;
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_IN + static_cast<int32_t>(i));
        read_[i] = c;
    }

    // In copy i -> Nz rows in the next out copy (cast first for int8; its oldest chunk is
    // written first).
    __aicore__ inline void Convert(uint32_t i)
    {
        const uint32_t o = outCopy_;
        outCopy_ = (outCopy_ + 1) % outCopies_;
        if (conv_[o].rows != NONE) {
            Write(o);
        }
        const uint32_t rows = read_[i].rows;
        const AscendC::LocalTensor<T> out = outBuf_.Get<T>()[o * chunk_ * p_->headDimAlign];
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_IN + static_cast<int32_t>(i));
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + static_cast<int32_t>(o));  // its last write is done
        if constexpr (CAST) {
            const AscendC::LocalTensor<T> nd = ndBuf_.Get<T>();
            AscendC::LocalTensor<half> h;
            AscendC::LocalTensor<float> f;
            if constexpr (BF16_STAGES) {
                h = halfBuf_.Get<half>();
                f = floatBuf_.Get<float>();
            }
            AscendC::PipeBarrier<PIPE_V>();  // the previous Arrange has read nd
            CastInt8Rows(nd, InCopy(i), h, f, rows * dp_);
            AscendC::PipeBarrier<PIPE_V>();
            NzHandoff<T>::Arrange(out, nd, rows, p_->headDimAlign, dp_);
        } else {
            NzHandoff<T>::Arrange(out, InCopy(i), rows, p_->headDimAlign, dp_);
        }
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + static_cast<int32_t>(i));
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + static_cast<int32_t>(o));
        conv_[o] = read_[i];
        read_[i].rows = NONE;
    }

    __aicore__ inline AscendC::LocalTensor<Src> InCopy(uint32_t i) { return inBuf_.Get<Src>()[i * chunk_ * dp_]; }

    // The chunks read / converted so far of blocks before `count`, oldest first, through their
    // next stage (the copies hold one contiguous run of chunks in block order, ending before
    // the next copy to fill).
    __aicore__ inline void ConvertUpTo(uint64_t count)
    {
        for (uint32_t k = 0; k < inCopies_; ++k) {
            const uint32_t i = (inCopy_ + k) % inCopies_;
            if (read_[i].rows == NONE) continue;
            if (read_[i].item >= count) break;
            Convert(i);
        }
    }

    __aicore__ inline void WriteUpTo(uint64_t count)
    {
        for (uint32_t k = 0; k < outCopies_; ++k) {
            const uint32_t o = (outCopy_ + k) % outCopies_;
            if (conv_[o].rows == NONE) continue;
            if (conv_[o].item >= count) break;
            Write(o);
        }
    }

    // Out copy o -> its rows of the ring slot; a block's first write waits until the cube freed
    // its slot, its last one announces the block. K rows and the same V rows of a block in the
    // next out copy go in one copy: the block's V slot follows its K slot, so in both UB and the
    // ring the pair is one run of column blocks, 2 headDimAlign / 16 of them.
    __aicore__ inline void Write(uint32_t o)
    {
        const Chunk &c = conv_[o];
        const uint32_t o2 = o + 1;
        const bool pair = o2 < outCopies_ && c.rows == chunk_ && conv_[o2].rows == c.rows && conv_[o2].row0 == c.row0 &&
                          conv_[o2].item == c.item && conv_[o2].slot == c.slot + SlotElems();
        const bool last = pair ? conv_[o2].last : c.last;
        if (c.first && c.item >= d_->ringSlots) {
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(FLAG_KV_FREE);  // the cube loaded the slot's last block
        }
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + static_cast<int32_t>(o));
        if (pair) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + static_cast<int32_t>(o2));
        }
        NzHandoff<T>::Store(ring_[c.slot], outBuf_.Get<T>()[o * chunk_ * p_->headDimAlign], c.row0, c.rows,
                            (pair ? 2 : 1) * p_->headDimAlign, p_->blockKv);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + static_cast<int32_t>(o));
        if (pair) {
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + static_cast<int32_t>(o2));
            conv_[o2].rows = NONE;
        }
        if (last) {
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_READY);
        }
        conv_[o].rows = NONE;
    }

    // cube
    uint64_t ringAt_ = 0;
    uint64_t kLoads_ = 0, vLoads_ = 0;
    // vector
    WorkSplit<SplitKvCombine> split_;
    MaskMod<MaskDecode> mask_;
    uint32_t core_ = 0, sub_ = 0;
    uint32_t dp_ = 32, chunk_ = 1, inCopy_ = 0, outCopy_ = 0;
    uint32_t inCopies_ = IN_COPIES, outCopies_ = OUT_COPIES;  // in use (DecodeParams)
    uint32_t outBlocks_ = 2;                                  // whole blocks the out copies hold
    Chunk read_[IN_COPIES];                                   // per in copy: the chunk it holds until converted
    Chunk conv_[OUT_COPIES];                                  // per out copy: the chunk it holds until written
    uint64_t unit_ = 0, unitEnd_ = 0;
    uint32_t blockInUnit_ = 0, blocksInUnit_ = 0;
    WorkUnit cur_;
    uint64_t produced_ = 0;
    AscendC::GlobalTensor<Src> keyIn_, valueIn_;
    AscendC::GlobalTensor<T> ring_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf_, outBuf_, ndBuf_, halfBuf_, floatBuf_;
};

template <typename T> struct KvSource<KvDecodeRing<T>> : public KvRingSource<T, T> {
    using Tensors = RingKvTensors;
};

}  // namespace AttentionCore
