// INT8 KV cache (antiquant) of the decode operator, dequantised inside the kernel.
//
// The spec's dequantisation x = (x_int8 + offset) * scale is per tensor or per channel (index
// kvHead * D + d), so it folds out of the cache reads:
//   S = Q . ((K + o_k) * s_k)^T = (Q * s_k) . K^T + (Q * s_k) . o_k
// where the last term is the same for every key of a query row and cancels in the softmax, and
//   O = softmax . ((V + o_v) * s_v) = (softmax . V + o_v) * s_v
// because each softmax row sums to one. The cache itself is therefore only cast to the query
// dtype (exact: |x| <= 128 fits fp16 and bf16):
//   * QueryAntiquant: before the core, the vector cores write Q * s_k (fp32, rounded to the query
//     dtype) into the workspace (B x N rows, a few KiB; not a pass over the cache);
//   * KvSource<KvDecodeInt8<T>>: while the core runs, each vector core casts its half of every key
//     block's K and V rows (int8 from the cache, contiguous or paged) into a per-core ring in the
//     workspace, DecodeParams::antiAhead blocks ahead of its own softmax (KvSourceBase hooks), and
//     the cube loads K and V from the ring instead of the cache. The int8 bytes are read once from
//     HBM; the ring (a few hundred KiB per core) stays in L2. A2 has no UB -> L1 path, so the
//     cast rows make this one L2 round trip (2 bytes written + 2 read per element).
//   * FinishRows (KvSourceBase hook): each unit's unnormalised output rows become
//     acc * s_v + (o_v * s_v) * l before the vector stage normalises them by l (or stores them as
//     split-KV partials, whose combine weights sum to one): the output is (O + o_v) * s_v.
// Flags (sync.h): FLAG_KV_READY vector -> cube once both vector cores wrote a block's rows,
// FLAG_KV_FREE cube -> vector once the cube's MTE2 loaded the block's V (after its K) into L1.
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "kv_antiquant_layout.h"
#include "../common/sync.h"

namespace AttentionCore {

template <typename T> struct KvDecodeInt8 {};

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

// One antiquant parameter row (kvHead's D values of key (which 0) or value (which 1), or the
// per-tensor value broadcast) as fp32 into `dst`; `stage` holds D elements of T.
template <typename T>
__aicore__ inline void LoadAntiRow(const DecodeTiling &td, GM_ADDR src, uint32_t which, uint32_t kvHead,
                                   const AscendC::LocalTensor<T> &stage, const AscendC::LocalTensor<float> &dst)
{
    const uint32_t dd = td.params.headDim;
    AscendC::GlobalTensor<T> g;
    g.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(src));
    PipeSync<AscendC::HardEvent::V_MTE2>();  // the previous row's users are done
    if (td.decode.antiPerChannel != 0) {
        const uint64_t at = (static_cast<uint64_t>(which) * td.params.numKvHeads + kvHead) * dd;
        AscendC::DataCopyPad(stage, g[at], AscendC::DataCopyExtParams(1, dd * sizeof(T), 0, 0, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Cast(dst, stage, AscendC::RoundMode::CAST_NONE, dd);
    } else {
        PipeSync<AscendC::HardEvent::V_S>();
        const float v = static_cast<float>(g.GetValue(which));
        PipeSync<AscendC::HardEvent::S_V>();
        AscendC::Duplicate(dst, v, static_cast<int32_t>(dd));
    }
    AscendC::PipeBarrier<PIPE_V>();
}

// Q * s_k for every (batch, head) row of the run, written at the query's own element offsets
// (S = 1) of `scaled`; run by every vector core on its share of the rows before the core starts.
template <typename T> class QueryAntiquant {
public:
    __aicore__ inline void Run(const DecodeTiling &td, GM_ADDR query, GM_ADDR scale, GM_ADDR scaled)
    {
        td_ = &td;
        const ForwardParams *p = &td.params;
        p_ = p;
        const uint32_t dd = p->headDim;
        dp_ = AlignUp(dd, 16);
        chunk_ = 8192 / dp_;
        chunk_ = chunk_ == 0 ? 1 : chunk_;
        AscendC::TPipe pipe;
        pipe.InitBuffer(xBuf_, chunk_ * dp_ * 4);
        pipe.InitBuffer(ioBuf_, chunk_ * dp_ * sizeof(T));
        pipe.InitBuffer(scaleBuf_, dp_ * 4);
        pipe.InitBuffer(stageBuf_, dp_ * sizeof(T));
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(scaled));
        scaleAddr_ = scale;

        const uint64_t rows = static_cast<uint64_t>(p->batch) * p->numHeads;
        const uint32_t v = AscendC::GetBlockIdx();
        const uint32_t cores = AscendC::GetBlockNum() * 2;  // MIX 1:2: two vector cores per block
        const uint64_t begin = rows * v / cores;
        const uint64_t end = rows * (v + 1) / cores;
        for (uint64_t r0 = begin; r0 < end;) {
            // rows of one batch at a time (their pitch is qStrideN)
            const uint64_t batchEnd = (r0 / p->numHeads + 1) * p->numHeads;
            uint64_t r1 = r0 + chunk_;
            r1 = r1 < end ? r1 : end;
            r1 = r1 < batchEnd ? r1 : batchEnd;
            ScaleRows(r0, static_cast<uint32_t>(r1 - r0));
            r0 = r1;
        }
    }

private:
    __aicore__ inline void ScaleRows(uint64_t r0, uint32_t rows)
    {
        const uint32_t dd = p_->headDim;
        const uint32_t b = static_cast<uint32_t>(r0 / p_->numHeads);
        const uint32_t head0 = static_cast<uint32_t>(r0 % p_->numHeads);
        const uint64_t at = b * p_->qStrideB + head0 * p_->qStrideN;
        const AscendC::LocalTensor<T> io = ioBuf_.Get<T>();
        const AscendC::LocalTensor<float> x = xBuf_.Get<float>();
        const AscendC::LocalTensor<float> scale = scaleBuf_.Get<float>();
        const uint32_t padBlocks = 0;  // UB rows: D elements padded to 32 bytes = dp_
        PipeSync<AscendC::HardEvent::V_MTE2>();
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();
        AscendC::DataCopyPad(io, q_[at],
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T),
                                                        static_cast<uint32_t>((p_->qStrideN - dd) * sizeof(T)),
                                                        padBlocks, 0),
                             AscendC::DataCopyPadExtParams<T>(false, 0, 0, static_cast<T>(0)));
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Cast(x, io, AscendC::RoundMode::CAST_NONE, rows * dp_);
        AscendC::PipeBarrier<PIPE_V>();
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t kvHead = (head0 + r) / p_->groupSize;
            if (kvHead != cachedHead_) {
                LoadAntiRow<T>(*td_, scaleAddr_, 0, kvHead, stageBuf_.Get<T>(), scale);
                cachedHead_ = kvHead;
            }
            AscendC::Mul(x[r * dp_], x[r * dp_], scale, static_cast<int32_t>(dd));
        }
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Cast(io, x, AscendC::RoundMode::CAST_RINT, rows * dp_);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyPad(out_[at], io,
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), dd * sizeof(T), padBlocks,
                                                        static_cast<uint32_t>((p_->qStrideN - dd) * sizeof(T)), 0));
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    static constexpr uint32_t NO_HEAD = 0xFFFFFFFFu;
    const DecodeTiling *td_ = nullptr;
    const ForwardParams *p_ = nullptr;
    uint32_t dp_ = 16;
    uint32_t chunk_ = 1;
    uint32_t cachedHead_ = NO_HEAD;
    GM_ADDR scaleAddr_ = nullptr;
    AscendC::GlobalTensor<T> q_, out_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> xBuf_, ioBuf_, scaleBuf_, stageBuf_;
};

// ------------------------------------------------------------------ KV source
// The decode source (batch windows, paged cache: KvSource<KvDecode>) for the producer's int8
// reads; the cube sees the ring: a block's rows from ringAt_ on, headDim elements apart.
// Its GM tensors: the block table (KvDecode's) and the int8 K/V of this run (a list: the current
// batch's) with their antiquant scale (query dtype) and offset (null without antiquant_offset).
struct Int8KvTensors : PagedKvTensors {
    GM_ADDR antiKey = nullptr;
    GM_ADDR antiValue = nullptr;
    GM_ADDR antiScale = nullptr;
    GM_ADDR antiOffset = nullptr;
};

template <typename T> struct KvSource<KvDecodeInt8<T>> : public KvSource<KvDecode> {
    using Source = KvSource<KvDecode>;
    using Tensors = Int8KvTensors;

    __aicore__ inline uint64_t KvOffset(uint32_t, uint32_t, uint32_t token) const
    {
        return ringAt_ + (static_cast<uint64_t>(token) - blockToken_) * p_->headDim;
    }
    __aicore__ inline uint32_t KvRowPitch() const { return p_->headDim; }
    __aicore__ inline uint32_t RowsInRun(uint32_t, uint64_t) const { return 0xFFFFFFFFu; }  // a block is contiguous

    // ---- cube (KvSourceBase hooks): the ring slot of the block the cube loads next
    __aicore__ inline void BeforeLoad(const WorkUnit &u, const KvBlock &blk, bool isValue)
    {
        const DecodeParams &d = *d_;
        const uint64_t item = isValue ? vLoads_++ : kLoads_++;
        if (!isValue) {
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_KV_READY);  // both vector cores wrote it
        }
        const uint64_t slotElems = static_cast<uint64_t>(p_->blockKv) * p_->headDim;
        ringAt_ = AscendC::GetBlockIdx() * (d.antiRingCoreBytes / sizeof(T)) +
                  ((item % d.antiRingSlots) * 2 + (isValue ? 1 : 0)) * slotElems;
        blockToken_ = u.kvBase + static_cast<uint64_t>(blk.k0);
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
        td_ = &td;
        antiScale_ = t.kv.antiScale;
        antiOffset_ = t.kv.antiOffset;
        split_.Init(td, t);
        mask_.Init(td, t);
        core_ = AscendC::GetBlockIdx() / 2;
        sub_ = AscendC::GetSubBlockIdx();
        ring_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.key + core_ * d.antiRingCoreBytes));
        keyIn_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(t.kv.antiKey));
        valueIn_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(t.kv.antiValue));
        // UB (kv_antiquant_layout.h, what the planner reserved): int8 rows start on 32-byte blocks
        const AntiquantUb ub =
            AntiquantUbLayout(d.antiChunkElems, p->headDim, p->headDimAlign, sizeof(T), Int8CastStages<T>::value);
        dp_ = ub.rowElems;
        chunk_ = ub.chunkRows;
        pipe->InitBuffer(inBuf_, ub.in);
        pipe->InitBuffer(outBuf_, ub.out);
        if (Int8CastStages<T>::value) {
            pipe->InitBuffer(halfBuf_, ub.half);
            pipe->InitBuffer(floatBuf_, ub.flt);
        }
        pipe->InitBuffer(valueBuf_, ub.value);
        unit_ = split_.Begin(core_);
        unitEnd_ = split_.End(core_);
        for (int32_t i = 0; i < static_cast<int32_t>(IN_COPIES); ++i) {  // every copy starts free
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + i);
            read_[i].rows = NONE;
        }
        for (int32_t o = 0; o < static_cast<int32_t>(OUT_COPIES); ++o) {
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + o);
            cast_[o].rows = NONE;
        }
        // The lead of blocks the steady state keeps, all in the ring before the first softmax.
        const uint64_t lead = Target(0, d.antiAhead);
        Read(lead);
        CastUpTo(lead);
        WriteUpTo(lead);
    }

    // After the softmax of this core's block `block`: three stages one call apart — write the
    // rows cast at the previous call to the ring, cast the rows read at the previous call, read
    // new blocks. The next softmax waits for every earlier store of this core (PipeSync<MTE3_V>)
    // and queues behind these casts, so only writes and casts whose inputs are ready sit between
    // two softmaxes.
    __aicore__ inline void StreamAhead(uint64_t block) { Advance(block + 1); }

    // Stage targets of the call before softmax `step` (step 0: StreamInit, which writes all it
    // reads): the blocks written are max(step + antiAhead, antiAhead + 2). The softmax of block
    // j may wait for the S of block j + 1 (the vector stage loads it early), so blocks j and
    // j + 1 must be in the ring before it, and the cube computes S up to WS_SLOTS - 1 blocks
    // ahead of the P.V it waits for. The casts and reads run one and two calls ahead of the
    // writes. (Filling the lead two blocks per call instead of all before the first softmax
    // measured slower: every softmax of the ramp waits for two blocks' writes.)
    __aicore__ inline void Advance(uint64_t step)
    {
        const uint64_t ahead = d_->antiAhead;
        WriteUpTo(Target(step, ahead));
        CastUpTo(Target(step + 1, ahead));
        Read(Target(step + 2, ahead));
    }

    __aicore__ inline static uint64_t Target(uint64_t step, uint64_t ahead)
    {
        return step + ahead > ahead + 2 ? step + ahead : ahead + 2;
    }

    __aicore__ inline void StreamEnd()
    {
        CastUpTo(ALL);
        WriteUpTo(ALL);
        const uint64_t slots = d_->antiRingSlots;
        for (uint64_t i = produced_ > slots ? produced_ - slots : 0; i < produced_; ++i) {
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(FLAG_KV_FREE);  // the cube's last releases
        }
        for (int32_t i = 0; i < static_cast<int32_t>(IN_COPIES); ++i) {
            AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + i);
        }
        for (int32_t o = 0; o < static_cast<int32_t>(OUT_COPIES); ++o) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + o);
        }
    }

    // The value antiquant on a unit's rows before they are normalised (or stored as partials,
    // which the combine averages with weights summing to one): acc = acc * s_v + (o_v * s_v) * l,
    // so acc / l = (softmax . V + o_v) * s_v. Rows without a visible key (acc = 0, l = 0) stay 0.
    __aicore__ inline void FinishRows(const WorkUnit &u, uint32_t rows, const AscendC::LocalTensor<float> &acc,
                                      const AscendC::LocalTensor<float> &sum)
    {
        const uint32_t dp = p_->headDimAlign;
        const int32_t dd = static_cast<int32_t>(p_->headDim);
        const AscendC::LocalTensor<float> scale = valueBuf_.Get<float>();
        const AscendC::LocalTensor<float> shift = scale[dp];  // o_v * s_v
        const AscendC::LocalTensor<float> tmp = scale[2 * dp];
        const AscendC::LocalTensor<T> stage = valueBuf_.Get<T>()[3 * dp * 2];
        const bool hasOffset = antiOffset_ != nullptr;
        const uint32_t kvHead = u.n / d_->kvSplits;
        AscendC::PipeBarrier<PIPE_V>();
        if (kvHead != valueHead_) {
            LoadAntiRow<T>(*td_, antiScale_, 1, kvHead, stage, scale);
            if (hasOffset) {
                LoadAntiRow<T>(*td_, antiOffset_, 1, kvHead, stage, shift);
                AscendC::Mul(shift, shift, scale, dd);
                AscendC::PipeBarrier<PIPE_V>();
            }
            valueHead_ = kvHead;
        }
        for (uint32_t r = 0; r < rows; ++r) {
            AscendC::Mul(acc[r * dp], acc[r * dp], scale, dd);
        }
        AscendC::PipeBarrier<PIPE_V>();
        if (!hasOffset) {
            return;
        }
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            const float l = sum.GetValue(r);
            PipeSync<AscendC::HardEvent::S_V>();
            AscendC::Muls(tmp, shift, l, dd);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Add(acc[r * dp], acc[r * dp], tmp, dd);
            AscendC::PipeBarrier<PIPE_V>();
        }
    }

private:
    static constexpr uint32_t IN_COPIES = ANTI_IN_COPIES;    // int8 chunks read, waiting for their cast
    static constexpr uint32_t OUT_COPIES = ANTI_OUT_COPIES;  // cast chunks waiting for their ring write
    // Event ids: sync.h's table.
    static constexpr int32_t EVT_IN = VEC_EVT_KV_IN;
    static constexpr int32_t EVT_OUT = VEC_EVT_KV_OUT;
    static constexpr uint32_t NONE = 0xFFFFFFFFu;
    static constexpr uint64_t ALL = ~0ULL;

    // A chunk of rows on its way to ring element `at`; `first` / `last` of its block.
    struct Chunk {
        uint64_t at;
        uint64_t item;
        uint32_t rows;  // NONE: the copy holds no chunk
        bool first;
        bool last;
    };

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

    // This vector core's half of the block's K and V rows, bound for ring slot produced_ % slots.
    __aicore__ inline void ReadBlock(const WorkUnit &u, const KvBlock &blk)
    {
        const DecodeParams &d = *d_;
        const uint32_t half = (blk.cols + 1) / 2;
        const uint32_t r0 = sub_ == 0 ? 0 : half;
        const uint32_t r1 = sub_ == 0 ? half : blk.cols;
        const uint64_t item = produced_++;
        if (r1 == r0) {  // no rows here (a one-key block): keep the flags in block order
            CastUpTo(ALL);
            WriteUpTo(ALL);
            if (item >= d.antiRingSlots) AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(FLAG_KV_FREE);
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_READY);
            return;
        }
        const uint64_t slotElems = static_cast<uint64_t>(p_->blockKv) * p_->headDim;
        const uint64_t slot = item % d.antiRingSlots;
        for (uint32_t which = 0; which < 2; ++which) {
            const uint64_t base = (slot * 2 + which) * slotElems;
            for (uint32_t c0 = r0; c0 < r1; c0 += chunk_) {
                const uint32_t n = r1 - c0 < chunk_ ? r1 - c0 : chunk_;
                Chunk c;
                c.at = base + c0 * p_->headDim;
                c.item = item;
                c.rows = n;
                c.first = which == 0 && c0 == r0;
                c.last = which == 1 && c0 + n == r1;
                ReadRows(which == 0 ? keyIn_ : valueIn_, u, blk.k0 + c0, c);
            }
        }
    }

    // `c.rows` int8 rows from key `token` on into the next in copy (its oldest chunk is cast first).
    __aicore__ inline void ReadRows(const AscendC::GlobalTensor<int8_t> &src, const WorkUnit &u, int64_t token,
                                    const Chunk &c)
    {
        const uint32_t dd = p_->headDim;
        const uint32_t i = inCopy_;
        inCopy_ = (inCopy_ + 1) % IN_COPIES;
        if (read_[i].rows != NONE) {
            Cast(i);
        }
        const AscendC::LocalTensor<int8_t> in = inBuf_.Get<int8_t>()[i * chunk_ * dp_];
        const uint32_t pitch = Source::KvRowPitch();
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + static_cast<int32_t>(i));  // its last cast is done
        for (uint32_t r = 0; r < c.rows;) {  // runs of evenly spaced rows (a page ends one)
            uint32_t run = Source::RowsInRun(u.b, static_cast<uint64_t>(token) + r);
            run = run < c.rows - r ? run : c.rows - r;
            const uint64_t from = Source::KvOffset(u.b, u.n, static_cast<uint32_t>(token + r));
            AscendC::DataCopyPad(in[r * dp_], src[from],
                                 AscendC::DataCopyExtParams(static_cast<uint16_t>(run), dd, pitch - dd, 0, 0),
                                 AscendC::DataCopyPadExtParams<int8_t>(false, 0, 0, 0));
            r += run;
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_IN + static_cast<int32_t>(i));
        read_[i] = c;
    }

    // In copy i -> T in the next out copy (its oldest chunk is written first).
    __aicore__ inline void Cast(uint32_t i)
    {
        const uint32_t o = outCopy_;
        outCopy_ = (outCopy_ + 1) % OUT_COPIES;
        if (cast_[o].rows != NONE) {
            Write(o);
        }
        const AscendC::LocalTensor<int8_t> in = inBuf_.Get<int8_t>()[i * chunk_ * dp_];
        const AscendC::LocalTensor<T> out = outBuf_.Get<T>()[o * chunk_ * dp_];
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_IN + static_cast<int32_t>(i));
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + static_cast<int32_t>(o));  // its last write is done
        LocalStages stages = Stages();
        CastInt8Rows(out, in, stages.h, stages.f, read_[i].rows * dp_);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + static_cast<int32_t>(i));
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + static_cast<int32_t>(o));
        cast_[o] = read_[i];
        read_[i].rows = NONE;
    }

    // The chunks read / cast so far of blocks before `count`, oldest first, through their next
    // stage (the copies hold one contiguous run of chunks in block order, ending before the
    // next copy to fill).
    __aicore__ inline void CastUpTo(uint64_t count)
    {
        for (uint32_t k = 0; k < IN_COPIES; ++k) {
            const uint32_t i = (inCopy_ + k) % IN_COPIES;
            if (read_[i].rows == NONE) continue;
            if (read_[i].item >= count) break;
            Cast(i);
        }
    }

    __aicore__ inline void WriteUpTo(uint64_t count)
    {
        for (uint32_t k = 0; k < OUT_COPIES; ++k) {
            const uint32_t o = (outCopy_ + k) % OUT_COPIES;
            if (cast_[o].rows == NONE) continue;
            if (cast_[o].item >= count) break;
            Write(o);
        }
    }

    // Out copy o -> the ring; a block's first write waits until the cube freed its slot, its last
    // one announces the block.
    __aicore__ inline void Write(uint32_t o)
    {
        const uint32_t dd = p_->headDim;
        const Chunk &c = cast_[o];
        if (c.first && c.item >= d_->antiRingSlots) {
            AscendC::CrossCoreWaitFlag<2, PIPE_MTE3>(FLAG_KV_FREE);  // the cube loaded the slot's last block
        }
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT_OUT + static_cast<int32_t>(o));
        AscendC::DataCopyPad(ring_[c.at], outBuf_.Get<T>()[o * chunk_ * dp_],
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(c.rows), dd * sizeof(T),
                                                        (dp_ * sizeof(T) - AlignUp(dd * sizeof(T), 32)) / 32, 0, 0));
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + static_cast<int32_t>(o));
        if (c.last) {
            AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_KV_READY);
        }
        cast_[o].rows = NONE;
    }

    struct LocalStages {
        AscendC::LocalTensor<half> h;
        AscendC::LocalTensor<float> f;
    };
    __aicore__ inline LocalStages Stages()
    {
        LocalStages s;
        if (Int8CastStages<T>::value) {
            s.h = halfBuf_.Get<half>();
            s.f = floatBuf_.Get<float>();
        }
        return s;
    }

    // cube
    uint64_t ringAt_ = 0;
    uint64_t blockToken_ = 0;
    uint64_t kLoads_ = 0, vLoads_ = 0;
    // vector
    WorkSplit<SplitKvCombine> split_;
    MaskMod<MaskDecode> mask_;
    uint32_t core_ = 0, sub_ = 0;
    uint32_t dp_ = 32, chunk_ = 1, inCopy_ = 0, outCopy_ = 0;
    const DecodeTiling *td_ = nullptr;
    GM_ADDR antiScale_ = nullptr;
    GM_ADDR antiOffset_ = nullptr;  // null without antiquant_offset
    Chunk read_[IN_COPIES];         // per in copy: the chunk it holds until cast
    Chunk cast_[OUT_COPIES];        // per out copy: the chunk it holds until written
    uint64_t unit_ = 0, unitEnd_ = 0;
    uint32_t blockInUnit_ = 0, blocksInUnit_ = 0;
    WorkUnit cur_;
    uint64_t produced_ = 0;
    AscendC::GlobalTensor<int8_t> keyIn_, valueIn_;
    AscendC::GlobalTensor<T> ring_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> inBuf_, outBuf_, halfBuf_, floatBuf_, valueBuf_;
    uint32_t valueHead_ = 0xFFFFFFFFu;  // KV head whose value scale / shift rows are in valueBuf_
};

}  // namespace AttentionCore
