// Vector side (AIV) of the forward core: for each key block of a unit it takes its half of the
// S rows from the workspace, applies the score and mask policies, runs the online softmax
// (running max / sum in fp32), hands P back to the cube, folds the cube's P.V block into the
// fp32 output accumulator with the rescale factor, and at the end of the unit normalises,
// casts and writes its rows in the output layout.
#pragma once
#include "kernel_operator.h"
#include "forward_params.h"
#include "policies.h"
#include "sync.h"
#include "partial_output.h"

namespace AttentionCore {

template <typename T, class Variant>
class ForwardVector {
public:
    __aicore__ inline void Init(const ForwardParams *p, AscendC::TPipe *pipe, const ForwardTensors &t)
    {
        p_ = p;
        split_.Init(p, t);
        kv_.Init(p);
        score_.Init(p, t);
        mask_.Init(p, t);
        softmax_.Init(p, t);
        out_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.out));
        if (p->hasSoftmaxStats != 0) {
            statMax_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.softmaxMax));
            statSum_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.softmaxSum));
        }

        core_ = AscendC::GetBlockIdx() / 2;  // MIX 1:2: vector cores 2b and 2b+1 serve cube b
        sub_ = AscendC::GetSubBlockIdx();
        GM_ADDR ws = t.workspace + core_ * p->wsBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(ws + WS_SLOTS * p->wsSlotS));
        wsO_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + WS_SLOTS * (p->wsSlotS + p->wsSlotP)));

        const uint32_t r = p->rowsPerVec;
        const uint32_t c = p->blockKv;
        const uint32_t dp = p->headDimAlign;
        const uint32_t tmpBytes = r * c * 4 > r * dp * sizeof(T) ? r * c * 4 : r * dp * sizeof(T);
        const uint32_t statBytes = AlignUp(r, 8) * 4;
        pipe->InitBuffer(sBuf_, r * c * 4);
        pipe->InitBuffer(tmpBuf_, tmpBytes);
        pipe->InitBuffer(pBuf_, r * c * 2);
        pipe->InitBuffer(maskBuf_, r * c);
        pipe->InitBuffer(accBuf_, r * dp * 4);
        pipe->InitBuffer(partBuf_, r * dp * 4);
        pipe->InitBuffer(statBuf_, statBytes * (5 + WS_SLOTS));
        pipe->InitBuffer(bcastBuf_, r * 32);
        s_ = sBuf_.Get<float>();
        tmp_ = tmpBuf_.Get<float>();
        acc_ = accBuf_.Get<float>();
        part_ = partBuf_.Get<float>();
        bcast_ = bcastBuf_.Get<float>();
        const AscendC::LocalTensor<float> stats = statBuf_.Get<float>();
        const uint32_t st = statBytes / 4;
        mOld_ = stats;
        mNew_ = stats[st];
        sum_ = stats[2 * st];
        rowTmp_ = stats[3 * st];
        inv_ = stats[4 * st];
        for (uint32_t i = 0; i < WS_SLOTS; ++i) {
            alpha_[i] = stats[(5 + i) * st];
        }
    }

    __aicore__ inline void Process()
    {
        // Blocks handed over so far: block g uses workspace slot g % WS_SLOTS and rescale factor
        // alpha_[g % WS_SLOTS]. P.V of block j is folded into O after the softmax of block
        // j + LAG: the cube's round trip of a block (P load, P.V, Fixpipe) overlaps the softmax
        // of the next ones instead of stalling this core.
        constexpr uint32_t LAG = WS_SLOTS - 1;
        uint64_t g = 0;
        for (uint64_t unit = split_.Begin(core_); unit < split_.End(core_); ++unit) {
            WorkUnit u;
            split_.Decode(unit, u);
            mask_.KvRange(u);
            const uint32_t half = (u.rows + 1) / 2;
            const uint32_t rowOff = sub_ == 0 ? 0 : half;
            const uint32_t rows = sub_ == 0 ? half : u.rows - half;
            StartUnit(rows);
            const uint32_t blocks = KvBlockCount(u.kvBegin, u.kvEnd, p_->blockKv);
            for (uint32_t j = 0; j < blocks; ++j) {
                SoftmaxBlock(u, KvBlockAt(u.kvBegin, u.kvEnd, p_->blockKv, j), rowOff, rows, (g + j) % WS_SLOTS);
                if (j >= LAG) {
                    AccumulateO(rowOff, rows, (g + j - LAG) % WS_SLOTS);
                }
            }
            for (uint32_t j = blocks > LAG ? blocks - LAG : 0; j < blocks; ++j) {
                AccumulateO(rowOff, rows, (g + j) % WS_SLOTS);
            }
            g += blocks;
            FinishUnit(u, rowOff, rows);
        }
    }

private:
    __aicore__ inline void StartUnit(uint32_t rows)
    {
        if (rows == 0) {
            return;
        }
        AscendC::Duplicate(mOld_, MASKED_SCORE, static_cast<int32_t>(rows));
        AscendC::Duplicate(sum_, 0.0f, static_cast<int32_t>(rows));
        AscendC::Duplicate(acc_, 0.0f, static_cast<int32_t>(rows * p_->headDimAlign));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // One key block: S -> P (online softmax), P to the workspace for the cube.
    __aicore__ inline void SoftmaxBlock(const WorkUnit &u, const KvBlock &blk, uint32_t rowOff, uint32_t rows,
                                        uint32_t slot)
    {
        AscendC::CrossCoreWaitFlag(FLAG_S_READY);
        if (rows != 0) {
            const uint32_t c = p_->blockKv;
            const uint32_t count = rows * c;
            PipeSync<AscendC::HardEvent::V_MTE2>();
            AscendC::DataCopy(s_, wsS_[slot * (p_->wsSlotS / 4) + rowOff * c], count);
            PipeSync<AscendC::HardEvent::MTE2_V>();
            PipeSync<AscendC::HardEvent::MTE3_V>();  // the previous P store has left pBuf_
            score_.Apply(s_, tmp_, pBuf_.Get<T>(), u, u.q0 + rowOff, rows, blk.k0, blk.cols, c);
            mask_.Apply(s_, tmp_, maskBuf_.Get<uint8_t>(), pBuf_.Get<half>(), u, u.q0 + rowOff, rows, blk.k0,
                        blk.cols, c);

            // m_new = max(m_old, rowmax(S)); alpha = exp(m_old - m_new); S = exp(S - m_new)
            RowReduce<true>(rows);
            AscendC::Max(mNew_, mOld_, rowTmp_, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Sub(alpha_[slot], mOld_, mNew_, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Exp(alpha_[slot], alpha_[slot], static_cast<int32_t>(rows));
            AscendC::Adds(mOld_, mNew_, 0.0f, static_cast<int32_t>(rows));
            Broadcast(mNew_, rows);
            for (uint32_t c0 = 0; c0 < c; c0 += 64) {
                AscendC::Sub(s_[c0], s_[c0], bcast_, 64, static_cast<uint8_t>(rows),
                             AscendC::BinaryRepeatParams(1, 1, 0, static_cast<uint8_t>(c / 8),
                                                         static_cast<uint8_t>(c / 8), 1));
            }
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Exp(s_, s_, static_cast<int32_t>(count));
            AscendC::PipeBarrier<PIPE_V>();

            // l = l * alpha + rowsum(P); the softmax extra (dropout) acts on P after the sum,
            // which stays the plain softmax denominator.
            RowReduce<false>(rows);
            AscendC::Mul(sum_, sum_, alpha_[slot], static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Add(sum_, sum_, rowTmp_, static_cast<int32_t>(rows));
            AscendC::PipeBarrier<PIPE_V>();
            softmax_.AfterExp(s_, maskBuf_.Get<uint8_t>(), u, u.q0 + rowOff, rows, blk.k0, blk.cols, c);

            const AscendC::LocalTensor<T> pOut = pBuf_.Get<T>();
            AscendC::Cast(pOut, s_, AscendC::RoundMode::CAST_RINT, count);
            PipeSync<AscendC::HardEvent::V_MTE3>();
            AscendC::DataCopy(wsP_[slot * (p_->wsSlotP / sizeof(T)) + rowOff * c], pOut, count);
        }
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FlagPReady(slot));
    }

    // O = O * alpha(block) + P.V(block), once the cube has written the block's P.V.
    __aicore__ inline void AccumulateO(uint32_t rowOff, uint32_t rows, uint32_t slot)
    {
        AscendC::CrossCoreWaitFlag(FLAG_O_READY);
        if (rows == 0) {
            return;
        }
        const uint32_t dp = p_->headDimAlign;
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopy(part_, wsO_[slot * (p_->wsSlotO / 4) + rowOff * dp], rows * dp);
        PipeSync<AscendC::HardEvent::MTE2_V>();
        Broadcast(alpha_[slot], rows);
        ScaleRows(acc_, rows);
        AscendC::Add(acc_, acc_, part_, static_cast<int32_t>(rows * dp));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // O / l, zero for rows past the query length or without any visible key; cast; store.
    __aicore__ inline void FinishUnit(const WorkUnit &u, uint32_t rowOff, uint32_t rows)
    {
        if (rows == 0) {
            return;
        }
        if (StorePartialOutput(split_, u, rowOff, rows, acc_, mOld_, sum_)) {
            return;  // split-KV decode: a combine pass normalises and writes (partial_output.h)
        }
        PipeSync<AscendC::HardEvent::V_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            const float m = mOld_.GetValue(r);
            const float l = sum_.GetValue(r);
            const bool visible = rowOff + r < u.qValid && m > MASKED_ROW_MAX && l > 0.0f;
            inv_.SetValue(r, visible ? 1.0f / l : 0.0f);
            if (!visible) {  // the statistics of an invalid row (no visible key): fp32 lowest / max
                mOld_.SetValue(r, INVALID_ROW_STAT_MAX);
                sum_.SetValue(r, INVALID_ROW_STAT_SUM);
            }
        }
        PipeSync<AscendC::HardEvent::S_V>();
        Broadcast(inv_, rows);
        ScaleRows(acc_, rows);
        const uint32_t dp = p_->headDimAlign;
        const AscendC::LocalTensor<T> o = tmpBuf_.Get<T>();
        AscendC::Cast(o, acc_, AscendC::RoundMode::CAST_RINT, rows * dp);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        const uint32_t d = p_->headDim;
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), d * sizeof(T), 0,
                                        (kv_.OutRowPitch() - d) * sizeof(T), 0);
        AscendC::DataCopyPad(out_[kv_.OutOffset(u.b, u.n, static_cast<uint32_t>(u.qBase) + u.q0 + rowOff)], o, copy);
        PipeSync<AscendC::HardEvent::MTE3_V>();
        if (p_->hasSoftmaxStats != 0) {
            const uint64_t at = (u.qBase + u.q0 + rowOff) * p_->statsStrideS + u.n * p_->statsStrideN;
            WriteStat(statMax_[at], mOld_, rows);
            WriteStat(statSum_[at], sum_, rows);
        }
    }

    // 8 replicated copies of v[r] per row into GM rows of pitch statsStrideS floats.
    __aicore__ inline void WriteStat(const AscendC::GlobalTensor<float> &dst, const AscendC::LocalTensor<float> &v,
                                     uint32_t rows)
    {
        Broadcast(v, rows);
        PipeSync<AscendC::HardEvent::V_MTE3>();
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), 32, 0,
                                        static_cast<uint32_t>((p_->statsStrideS - 8) * 4), 0);
        AscendC::DataCopyPad(dst, bcast_, copy);
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // rowTmp[r] = max (or sum) over the block's columns of row r: fold the 64-lane chunks of
    // each row into tmp (one simple op per chunk), then two block reductions: 64 -> 8 per row
    // (one repeat per row) into bcast_, and 8 -> 1 (one repeat per 8 rows). Two BlockReduce
    // passes cost 2 + 1/4 repeats per row against a WholeReduce's one 64-lane reduction per row
    // at 64/7 elements per cycle (docs/performance.md, issue 10).
    template <bool isMax>
    __aicore__ inline void RowReduce(uint32_t rows)
    {
        const uint32_t c = p_->blockKv;
        const uint8_t rep = static_cast<uint8_t>(rows);
        const uint8_t pitch = static_cast<uint8_t>(c / 8);
        for (uint32_t c0 = 64; c0 < c; c0 += 64) {
            const AscendC::LocalTensor<float> acc = c0 == 64 ? s_ : tmp_;
            const uint8_t accPitch = c0 == 64 ? pitch : 8;
            if (isMax) {
                AscendC::Max(tmp_, acc, s_[c0], 64, rep, AscendC::BinaryRepeatParams(1, 1, 1, 8, accPitch, pitch));
            } else {
                AscendC::Add(tmp_, acc, s_[c0], 64, rep, AscendC::BinaryRepeatParams(1, 1, 1, 8, accPitch, pitch));
            }
            AscendC::PipeBarrier<PIPE_V>();
        }
        const AscendC::LocalTensor<float> folded = c > 64 ? tmp_ : s_;
        const int32_t foldedPitch = c > 64 ? 8 : pitch;
        const int32_t groups = static_cast<int32_t>((rows + 7) / 8);
        if (isMax) {
            AscendC::BlockReduceMax(bcast_, folded, static_cast<int32_t>(rows), 64, 1, 1, foldedPitch);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::BlockReduceMax(rowTmp_, bcast_, groups, 64, 1, 1, 8);
        } else {
            AscendC::BlockReduceSum(bcast_, folded, static_cast<int32_t>(rows), 64, 1, 1, foldedPitch);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::BlockReduceSum(rowTmp_, bcast_, groups, 64, 1, 1, 8);
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // bcast_ block r (8 floats) := v[r], for a row-wise op with block stride 0.
    __aicore__ inline void Broadcast(const AscendC::LocalTensor<float> &v, uint32_t rows)
    {
        AscendC::Brcb(bcast_, v, static_cast<uint8_t>((rows + 7) / 8), AscendC::BrcbRepeatParams(1, 8));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // x[r][:] *= bcast_[r] over rows of pitch headDimAlign.
    __aicore__ inline void ScaleRows(const AscendC::LocalTensor<float> &x, uint32_t rows)
    {
        const uint32_t dp = p_->headDimAlign;
        for (uint32_t c0 = 0; c0 < dp; c0 += 64) {
            const uint32_t lanes = dp - c0 < 64 ? dp - c0 : 64;
            AscendC::Mul(x[c0], x[c0], bcast_, lanes, static_cast<uint8_t>(rows),
                         AscendC::BinaryRepeatParams(1, 1, 0, static_cast<uint8_t>(dp / 8),
                                                     static_cast<uint8_t>(dp / 8), 1));
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    const ForwardParams *p_ = nullptr;
    typename Variant::Split split_;
    typename Variant::Kv kv_;
    typename Variant::Score score_;
    typename Variant::Mask mask_;
    typename Variant::Softmax softmax_;
    uint32_t core_ = 0;
    uint32_t sub_ = 0;

    AscendC::GlobalTensor<T> out_;
    AscendC::GlobalTensor<float> statMax_, statSum_;
    AscendC::GlobalTensor<float> wsS_;
    AscendC::GlobalTensor<T> wsP_;
    AscendC::GlobalTensor<float> wsO_;

    AscendC::TBuf<AscendC::TPosition::VECCALC> sBuf_, tmpBuf_, pBuf_, maskBuf_, accBuf_, partBuf_, statBuf_,
        bcastBuf_;
    AscendC::LocalTensor<float> s_, tmp_, acc_, part_, bcast_;
    AscendC::LocalTensor<float> mOld_, mNew_, sum_, rowTmp_, inv_;
    AscendC::LocalTensor<float> alpha_[WS_SLOTS];  // per workspace slot: its block's rescale factor
};

}  // namespace AttentionCore
