// The int8 x int8 decode core (int8 K/V kept in int8 up to the cube; docs/performance.md "What
// bounds the int8-KV decode on A2"): the forward core's vector stage with its digit hooks and a
// cube stream of its own, both on the workspace of int8_digit_layout.h.
//   * KvSource<KvDecodeInt8Digits<T>>: the K/V ring's copying producer on the ring view of the
//     plan (Int8DigitRingView: each int8 row as headDim / 2 16-bit columns, so a ring slot holds
//     the block's int8 rows in the cube's int8 Nz order, half the cast ring's bytes), and the
//     value antiquant of a unit's rows (kv_antiquant.h ValueAntiquant). Int8Digits() switches
//     the vector stage's hooks (forward_vector*.h) to Int8DigitStage below.
//   * Int8DigitStage: the vector stage's hand-offs: S = r (256 S_hi + S_lo) from the cube's
//     int32 products (r: the query rows' units), P as two int8 digit rows per row with its unit
//     per row and block (the softmax denominator counts the quantised P), and every block's
//     P.V products folded eagerly: acc = acc * alpha + u (256 O_hi + O_lo).
//   * Int8DigitCube: per key block one copy of the ring's (K, V) int8 pair into L1, S digits =
//     [Q hi; Q lo] . K^T and O digits = [P hi; P lo] . V as s8 x s8 -> s32 Mmads
//     (int8_digit_cube.h), written by NoQuant Fixpipes; the key blocks of the core's units form
//     one stream with S WS_SLOTS - 1 blocks ahead of P.V, as in the forward cube (whose 16-bit
//     operands and lazy fp32 P.V this core does not use: the P unit per block rules lazy P.V out).
// The query digits (int8_query_digits.h) are written by each core's vector cores before the
// core (FLAG_Q_SCALED).
#pragma once
#include "kernel_operator.h"
#include "decode_policies.h"
#include "kv_ring.h"
#include "kv_antiquant.h"
#include "int8_digit_layout.h"
#include "int8_digits.h"
#include "int8_digit_cube.h"
#include "../common/sync.h"

namespace AttentionCore {

template <typename T> struct KvDecodeInt8Digits {};

// In-core event ids of the cube (ids 1-7; 0 is PipeSync's, common/sync.h): MTE1_MTE2 per
// (K, V) pair copy in L1 (a pair lives from its block's S to its P.V) and per P tile copy;
// FIX_M per L0C region (S, O).
constexpr int32_t DIGIT_EVT_PAIR = 1;  // + copy, WS_SLOTS copies
constexpr int32_t DIGIT_EVT_P = 5;     // + copy, two copies
constexpr int32_t DIGIT_EVT_S = 1;     // FIX_M: the S region of L0C is written out
constexpr int32_t DIGIT_EVT_O = 2;     // FIX_M: the O region
constexpr EventRange INT8_DIGIT_CUBE_EVENTS[] = {{HE::MTE1_MTE2, DIGIT_EVT_PAIR, static_cast<int32_t>(WS_SLOTS)},
                                                 {HE::MTE1_MTE2, DIGIT_EVT_P, 2},
                                                 {HE::FIX_M, DIGIT_EVT_S, 1},
                                                 {HE::FIX_M, DIGIT_EVT_O, 1}};
static_assert(EventsValid(INT8_DIGIT_CUBE_EVENTS), "int8 x int8 cube event ids overlap or leave 1-7");
// Vector (beside the forward vector stage's ids, sync.h): MTE2_V, a block's O products loaded
// with a later block's S (Int8DigitStage::LoadS) are in UB. The mask rows' id: the decode mask
// policy (MaskDecode, the only one of this core) loads no rows ahead.
constexpr int32_t DIGIT_EVT_O_IN = VEC_EVT_MASK;
constexpr EventRange INT8_DIGIT_VECTOR_EVENTS[] = {{HE::MTE2_V, VEC_EVT_S, 2},
                                                   {HE::MTE2_V, VEC_EVT_KV_IN, static_cast<int32_t>(KV_RING_IN_COPIES)},
                                                   {HE::MTE2_V, DIGIT_EVT_O_IN, 1}};
static_assert(EventsValid(INT8_DIGIT_VECTOR_EVENTS), "int8 x int8 vector event ids overlap or leave 1-7");

template <typename T> class Int8DigitStage {
public:
    __aicore__ inline void Init(const DecodeTiling &td, AscendC::TPipe *pipe, GM_ADDR workspace, uint32_t core,
                                uint32_t vecRows)
    {
        const ForwardParams &p = td.params;
        const Int8DigitParams &g = td.decode.digits;
        p_ = &p;
        d_ = &td.decode;
        rowsPad_ = g.rowsPad;
        rows_ = p.rowsPerVec;
        vecRows_ = vecRows;
        first_ = p.coreUnitStart[core] / td.decode.kvSplits;
        const uint32_t c = p.blockKv;
        const uint32_t dp = p.headDimAlign;
        const uint32_t sc = vecRows * c;
        const uint32_t od = rows_ * dp;
        const uint32_t wide = sc > od ? sc : od;
        const uint32_t v8 = (vecRows + 7) / 8 * 8;
        const uint32_t r8 = (rows_ + 7) / 8 * 8;
        pipe->InitBuffer(prodS_, 2 * (2 * sc + 2 * od) * 4);
        prodElems_ = 2 * sc + 2 * od;
        pipe->InitBuffer(prodO_, 2 * od * 4);
        pipe->InitBuffer(t_, wide * 4);
        pipe->InitBuffer(t2_, wide * 4);
        pipe->InitBuffer(work_, (sc + v8 * 8) * 4);
        pipe->InitBuffer(hi_, sc * 4);
        pipe->InitBuffer(h_, 2 * sc * 2);
        pipe->InitBuffer(d8_, 2 * sc);
        pipe->InitBuffer(row_, (64 + v8 * 8 + 64 + 64) * 4);
        pipe->InitBuffer(pUnit_, WS_SLOTS * r8 * 4);
        pipe->InitBuffer(qBlocks_, INT8_DIGIT_MAX_GROUP * 8 * 4);
        pStride_ = r8;
        const Int8DigitSlots l = Int8DigitSlotsLayout(rowsPad_, c, dp);
        GM_ADDR slots = workspace + g.slotOffset + core * g.slotCoreBytes;
        sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(slots + l.s));
        oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(slots + l.o));
        pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(slots + l.p));
        record_ = static_cast<uint32_t>(l.record / 4);
        withO_ = c == dp && vecRows >= rows_ && p.qBlocksPerHead == 1;
        for (uint32_t i = 0; i < WS_SLOTS; ++i) {
            oIn_[i] = NONE;
        }
        qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + g.queryOffset + core * g.queryCoreBytes));
        itemBytes_ = g.queryItemBytes;
        unitsAt_ = static_cast<uint64_t>(rowsPad_) * dp;
    }

    // This core's rows [row0, row0 + rows) of S product slot `slot` (hi rows, then lo rows) ->
    // product buffer b. oPending: the record's O slot holds the products of a block this core
    // has not folded yet (its rows are these rows: one head block per KV head): where the
    // pieces are evenly spaced they come along in the same copy (FoldO then takes them from b).
    __aicore__ inline void LoadS(uint32_t b, uint32_t slot, uint32_t row0, uint32_t rows, bool oPending)
    {
        const uint32_t c = p_->blockKv;
        const AscendC::LocalTensor<int32_t> dst = prodS_.Get<int32_t>()[b * prodElems_];
        if (oPending && withO_) {  // S hi, S lo, O hi, O lo: rowsPad / 2 rows apart
            const uint32_t rowBlocks = c * 4 / 32;
            AscendC::DataCopy(dst, sGm_[slot * record_ + row0 * c],
                              AscendC::DataCopyParams(4, static_cast<uint16_t>(rows * rowBlocks),
                                                      static_cast<uint16_t>((rowsPad_ / 2 - rows) * rowBlocks), 0));
            oIn_[slot] = b;
            AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(DIGIT_EVT_O_IN);
            return;
        }
        Int8DigitLoadPair(dst, sGm_[slot * record_], row0, rows, c, rowsPad_);
    }

    // s (rows x blockKv fp32) := the scores of unit u's rows [row0, row0 + rows) from product
    // buffer b; the unit's query units are loaded where its item changes.
    __aicore__ inline void Scores(const AscendC::LocalTensor<float> &s, uint32_t b, const WorkUnit &u, uint32_t row0,
                                  uint32_t rows)
    {
        const uint32_t c = p_->blockKv;
        const uint64_t item =
            (static_cast<uint64_t>(u.b) * p_->numKvHeads + u.n / d_->kvSplits) * p_->qBlocksPerHead + u.q0 / p_->blockQ;
        if (item != item_) {
            const AscendC::LocalTensor<float> stage = row_.Get<float>()[64 + (vecRows_ + 7) / 8 * 64 + 64];
            PipeSync<AscendC::HardEvent::V_MTE2>();  // the last users of the stage and the blocks are done
            AscendC::DataCopyPad(stage, qGm_[((item - first_) * itemBytes_ + unitsAt_) / 4],
                                 AscendC::DataCopyExtParams(1, u.rows * 4, 0, 0, 0),
                                 AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0.0f));
            PipeSync<AscendC::HardEvent::MTE2_V>();
            BroadcastRows(qBlocks_.Get<float>(), stage, u.rows);
            item_ = item;
        }
        Int8DigitScores(s, prodS_.Get<int32_t>()[b * prodElems_], rows * c, qBlocks_.Get<float>()[row0 * 8],
                        t_.Get<float>(), rows, c);
    }

    // P (rows x blockKv fp32 in [0, 1], overwritten) of this core's sub-block at statistics
    // offset h (unit rows from row0) -> the P digit slot (nz: the stage's P buffer, free),
    // its units for the fold; sum (the rows' softmax denominators, which the stage already
    // raised by the rows' exact sums rowSum) counts the quantised P instead.
    __aicore__ inline void StoreP(const AscendC::LocalTensor<float> &p, const AscendC::LocalTensor<int8_t> &nz,
                                  uint32_t slot, uint32_t h, uint32_t row0, uint32_t rows,
                                  const AscendC::LocalTensor<float> &sum, const AscendC::LocalTensor<float> &rowSum)
    {
        const uint32_t c = p_->blockKv;
        const AscendC::LocalTensor<float> rowf = row_.Get<float>();
        const AscendC::LocalTensor<float> inv = rowf;
        const AscendC::LocalTensor<float> blocks = rowf[64];
        const AscendC::LocalTensor<float> qsum = rowf[64 + (vecRows_ + 7) / 8 * 64];
        const AscendC::LocalTensor<float> unit = pUnit_.Get<float>()[slot * pStride_ + h];
        const Int8DigitScratch w{work_.Get<float>(), inv, blocks, hi_.Get<float>(), h_.Get<half>(),
                                 d8_.Get<int8_t>(),  nz};
        Int8DigitBlockP(pGm_[slot * rowsPad_ * c / 2], row0, rowsPad_, p, unit, qsum, w, rows, c, c);
        // sum += u * sum(q16) - rowSum
        AscendC::Mul(qsum, qsum, unit, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Sub(qsum, qsum, rowSum, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Add(sum, sum, qsum, static_cast<int32_t>(rows));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // acc (rows x dp, already rescaled by the block's alpha) += u (256 O_hi + O_lo) of this
    // core's rows [row0, row0 + rows) of O product slot `slot`.
    __aicore__ inline void FoldO(const AscendC::LocalTensor<float> &acc, const AscendC::LocalTensor<float> &bcast,
                                 uint32_t slot, uint32_t row0, uint32_t rows)
    {
        const uint32_t dp = p_->headDimAlign;
        AscendC::LocalTensor<int32_t> prod = prodO_.Get<int32_t>();
        if (oIn_[slot] != NONE) {  // loaded with a later block's S (LoadS), whose own wait comes later
            prod = prodS_.Get<int32_t>()[oIn_[slot] * prodElems_ + 2 * rows * p_->blockKv];
            oIn_[slot] = NONE;
            BroadcastRows(bcast, pUnit_.Get<float>()[slot * pStride_], rows);
            AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(DIGIT_EVT_O_IN);
        } else {
            PipeSync<AscendC::HardEvent::V_MTE2>();  // the previous fold read the products
            Int8DigitLoadPair(prod, oGm_[slot * record_], row0, rows, dp, rowsPad_);
            BroadcastRows(bcast, pUnit_.Get<float>()[slot * pStride_], rows);
            PipeSync<AscendC::HardEvent::MTE2_V>();
        }
        Int8DigitFoldO(acc, prod, rows * dp, bcast, t_.Get<float>(), t2_.Get<float>(), rows, dp);
    }

private:
    static constexpr uint32_t NONE = 0xFFFFFFFFu;
    const ForwardParams *p_ = nullptr;
    const DecodeParams *d_ = nullptr;
    uint32_t rowsPad_ = 16, rows_ = 1, vecRows_ = 1, pStride_ = 8, prodElems_ = 0, record_ = 0;
    bool withO_ = false;      // S and a pending O in one copy (LoadS)
    uint32_t oIn_[WS_SLOTS];  // per slot: the product buffer its pending O went into (NONE: not loaded)
    uint64_t first_ = 0, itemBytes_ = 0, unitsAt_ = 0;
    uint64_t item_ = ~0ull;  // the item whose query units are in qBlocks_
    AscendC::GlobalTensor<int32_t> sGm_, oGm_;
    AscendC::GlobalTensor<half> pGm_;  // the P digit slots as 16-bit pairs of int8
    AscendC::GlobalTensor<float> qGm_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> prodS_, prodO_, t_, t2_, work_, hi_, h_, d8_, row_, pUnit_, qBlocks_;
};

// The ring's copying producer on the ring view of the plan, plus the value antiquant.
template <typename T> struct KvSource<KvDecodeInt8Digits<T>> : public KvRingSource<half, half> {
    using Ring = KvRingSource<half, half>;
    using Tensors = Int8KvTensors;
    __aicore__ inline static constexpr bool Int8Digits() { return true; }

    template <class GmTensors> __aicore__ inline void Init(const DecodeTiling &td, const GmTensors &t)
    {
        view_ = td;
        Int8DigitRingView(view_);
        Ring::Init(view_, t);
    }

    template <class GmTensors>
    __aicore__ inline void StreamInit(const DecodeTiling &td, AscendC::TPipe *pipe, const GmTensors &t)
    {
        const KvRingUb ub = KvRingUbLayout(0, td.params.headDim, td.params.headDimAlign, sizeof(T), 1, false, true, 0,
                                           0, td.decode.antiTableHeads);
        value_.Init(td, pipe, t.kv.antiScale, t.kv.antiOffset, ub.value);
        Ring::StreamInit(view_, pipe, t);
        value_.LoadTables();
    }

    __aicore__ inline void FinishRows(const WorkUnit &u, uint32_t rows, const AscendC::LocalTensor<float> &acc,
                                      const AscendC::LocalTensor<float> &sum)
    {
        value_.FinishRows(u, rows, acc, sum);
    }

    // The vector stage's digit hand-offs (its Init hook initialises them).
    __aicore__ inline Int8DigitStage<T> &Digits() { return stage_; }

private:
    DecodeTiling view_;
    ValueAntiquant<T> value_;
    Int8DigitStage<T> stage_;
};

// The cube of the int8 x int8 core. Variant: the vector stage's (its split and mask policies
// decode the same units).
template <typename T, class Variant> class Int8DigitCube {
public:
    template <class GmTensors>
    __aicore__ inline void Init(const DecodeTiling &td, AscendC::TPipe *pipe, const GmTensors &t)
    {
        const ForwardParams &p = td.params;
        const Int8DigitParams &g = td.decode.digits;
        p_ = &p;
        d_ = &td.decode;
        split_.Init(td, t);
        mask_.Init(td, t);
        view_ = td;
        Int8DigitRingView(view_);
        ring_.Init(view_, t);
        core_ = AscendC::GetBlockIdx();
        rowsPad_ = g.rowsPad;
        c_ = p.blockKv;
        dp_ = p.headDimAlign;
        first_ = p.coreUnitStart[core_] / td.decode.kvSplits;
        itemBytes_ = g.queryItemBytes;
        const Int8DigitSlots l = Int8DigitSlotsLayout(rowsPad_, c_, dp_);
        record_ = static_cast<uint32_t>(l.record / 4);
        GM_ADDR slots = t.workspace + g.slotOffset + core_ * g.slotCoreBytes;
        sGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(slots + l.s));
        oGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(slots + l.o));
        pGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(slots + l.p));
        qGm_.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(t.workspace + g.queryOffset + core_ * g.queryCoreBytes));
        ringGm_.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(t.workspace + g.ringOffset));
        pairBytes_ = 2 * c_ * dp_;
        pipe->InitBuffer(qL1_, rowsPad_ * dp_);
        pipe->InitBuffer(pL1_, 2 * rowsPad_ * c_);
        pipe->InitBuffer(kvL1_, WS_SLOTS * pairBytes_);
        pipe->InitBuffer(l0a_, rowsPad_ * dp_ + rowsPad_ * c_);
        pipe->InitBuffer(l0b_, 2 * c_ * dp_);
        pipe->InitBuffer(l0c_, rowsPad_ * (c_ + dp_) * 4);
    }

    __aicore__ inline void Process()
    {
        constexpr uint32_t ahead = WS_SLOTS - 1;
        Cursor s;
        bool sOk = Seek(s, split_.Begin(core_));
        Cursor v = s;
        bool vOk = sOk;
        uint64_t gS = 0, gV = 0;
        for (int32_t i = 0; i < static_cast<int32_t>(WS_SLOTS); ++i) {  // every copy starts free
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_PAIR + i);
        }
        for (int32_t i = 0; i < 2; ++i) {
            AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_P + i);
        }
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_S);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_O);
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(FLAG_Q_SCALED);  // this core's query digits are written
        for (uint32_t k = 0; k < ahead && sOk; ++k) {
            sOk = StepS(s, gS);
        }
        while (vOk) {
            ComputePV(gV++);
            if (sOk) {
                sOk = StepS(s, gS);
            }
            vOk = ++v.j < v.blocks || Seek(v, v.unit + 1);
        }
        for (int32_t i = 0; i < static_cast<int32_t>(WS_SLOTS); ++i) {  // drain
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_PAIR + i);
        }
        for (int32_t i = 0; i < 2; ++i) {
            AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_P + i);
        }
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_S);
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_O);
    }

private:
    struct Cursor {
        uint64_t unit = 0;
        WorkUnit u = {};
        uint32_t blocks = 0, j = 0;
    };

    // c := the first block of the first unit from `unit` on with key blocks (the vector cores
    // finish the others on their own).
    __aicore__ inline bool Seek(Cursor &c, uint64_t unit)
    {
        for (; unit < split_.End(core_); ++unit) {
            split_.Decode(unit, c.u);
            mask_.KvRange(c.u);
            split_.ClipKeys(c.u);
            c.unit = unit;
            c.blocks = KvBlockCount(c.u.kvBegin, c.u.kvEnd, p_->blockKv);
            c.j = 0;
            if (c.blocks != 0) {
                return true;
            }
        }
        return false;
    }

    // S digits of the stream block at c into S slot g % WS_SLOTS (FLAG_S_READY), then c := the
    // next block. A unit's first block stages its query digit tile in L1 and L0A first. The
    // cube's MTE2 waits only for the copy it refills (its events), so the next P and pair loads
    // queue behind nothing but the vector cores' flags; the other stages wait for the one
    // before (PipeSync).
    __aicore__ inline bool StepS(Cursor &c, uint64_t &g)
    {
        const uint32_t pair = static_cast<uint32_t>(g % WS_SLOTS);
        const uint32_t slot = pair;
        ++g;
        const AscendC::LocalTensor<int8_t> qA = l0a_.Get<int8_t>();
        if (c.j == 0) {
            const uint64_t item =
                (static_cast<uint64_t>(c.u.b) * p_->numKvHeads + c.u.n / d_->kvSplits) * p_->qBlocksPerHead +
                c.u.q0 / p_->blockQ;
            if (item != item_) {
                PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // MTE1 is done with the previous tile
                AscendC::DataCopy(qL1_.Get<int8_t>(), qGm_[(item - first_) * itemBytes_],
                                  AscendC::DataCopyParams(1, static_cast<uint16_t>(rowsPad_ * dp_ / 32), 0, 0));
                PipeSync<AscendC::HardEvent::MTE2_MTE1>();
                PipeSync<AscendC::HardEvent::M_MTE1>();  // the Mmads before read the previous digits
                Int8DigitLoadA(qA, qL1_.Get<int8_t>(), rowsPad_, dp_);
                item_ = item;
            }
        }
        const KvBlock blk = UnitBlockAt(c.u, p_->blockKv, c.j);
        const AscendC::LocalTensor<int8_t> kvL1 = kvL1_.Get<int8_t>()[pair * pairBytes_];
        // the block's (K, V) ring pair in one copy; then the ring slot is free again
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_PAIR +
                                                         static_cast<int32_t>(pair));  // its P.V read V
        ring_.BeforeLoad(c.u, blk, false);
        AscendC::DataCopy(kvL1.ReinterpretCast<half>(), ringGm_[ring_.KvOffset(c.u.b, c.u.n, 0)],
                          AscendC::DataCopyParams(1, static_cast<uint16_t>(pairBytes_ / 32), 0, 0));
        ring_.AfterLoad(true);
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        const AscendC::LocalTensor<int8_t> kB = l0b_.Get<int8_t>();
        PipeSync<AscendC::HardEvent::M_MTE1>();  // the previous S Mmad read L0B's K region
        Int8DigitLoadKeys(kB, kvL1, c_, dp_);
        PipeSync<AscendC::HardEvent::MTE1_M>();
        const AscendC::LocalTensor<int32_t> sC = l0c_.Get<int32_t>();
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_S);  // the previous S Fixpipe read L0C's S region
        Int8DigitMmad(sC, qA, kB, rowsPad_, c_, dp_);
        PipeSync<AscendC::HardEvent::M_FIX>();
        Int8DigitFixpipe(sGm_[slot * record_], sC, rowsPad_, c_);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_S_READY);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_S);
        return ++c.j < c.blocks || Seek(c, c.unit + 1);
    }

    // O digits of stream block g (its V in the pair its S loaded) into O slot g % WS_SLOTS
    // (FLAG_O_READY), once both vector cores wrote its P digits.
    __aicore__ inline void ComputePV(uint64_t g)
    {
        const uint32_t slot = static_cast<uint32_t>(g % WS_SLOTS);
        const int32_t pc = static_cast<int32_t>(g % 2);
        const AscendC::LocalTensor<int8_t> pL1 = pL1_.Get<int8_t>()[pc * rowsPad_ * c_];
        const AscendC::LocalTensor<int8_t> pA = l0a_.Get<int8_t>()[rowsPad_ * dp_];
        const AscendC::LocalTensor<int8_t> vB = l0b_.Get<int8_t>()[c_ * dp_];
        const AscendC::LocalTensor<int32_t> oC = l0c_.Get<int32_t>()[rowsPad_ * c_];
        AscendC::CrossCoreWaitFlag(FlagPReady(slot));
        AscendC::WaitFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_P + pc);  // MTE1 is done with this P copy
        AscendC::DataCopy(pL1, pGm_[slot * rowsPad_ * c_],
                          AscendC::DataCopyParams(1, static_cast<uint16_t>(rowsPad_ * c_ / 32), 0, 0));
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        PipeSync<AscendC::HardEvent::M_MTE1>();  // the previous P.V Mmad read L0A's P and L0B's V regions
        Int8DigitLoadA(pA, pL1, rowsPad_, c_);
        Int8DigitLoadValues(vB, kvL1_.Get<int8_t>()[slot * pairBytes_ + c_ * dp_], c_, dp_);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_P + pc);
        AscendC::SetFlag<AscendC::HardEvent::MTE1_MTE2>(DIGIT_EVT_PAIR +
                                                        static_cast<int32_t>(slot));  // the pair is read
        PipeSync<AscendC::HardEvent::MTE1_M>();
        AscendC::WaitFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_O);  // the previous P.V Fixpipe read L0C's O region
        Int8DigitMmad(oC, pA, vB, rowsPad_, dp_, c_);
        PipeSync<AscendC::HardEvent::M_FIX>();
        Int8DigitFixpipe(oGm_[slot * record_], oC, rowsPad_, dp_);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_O_READY);
        AscendC::SetFlag<AscendC::HardEvent::FIX_M>(DIGIT_EVT_O);
    }

    const ForwardParams *p_ = nullptr;
    const DecodeParams *d_ = nullptr;
    typename Variant::Split split_;
    typename Variant::Mask mask_;
    DecodeTiling view_;
    KvRingSource<half, half> ring_;  // the ring's cube hooks on the ring view
    uint32_t core_ = 0, rowsPad_ = 16, c_ = 128, dp_ = 128, pairBytes_ = 0, record_ = 0;
    uint64_t first_ = 0, itemBytes_ = 0;
    uint64_t item_ = ~0ull;  // the item whose query digits are in L0A
    AscendC::GlobalTensor<int32_t> sGm_, oGm_;
    AscendC::GlobalTensor<int8_t> pGm_, qGm_;
    AscendC::GlobalTensor<half> ringGm_;
    AscendC::TBuf<AscendC::TPosition::A1> qL1_, pL1_, kvL1_;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
};

}  // namespace AttentionCore
