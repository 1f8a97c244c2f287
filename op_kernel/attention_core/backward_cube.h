// Cube side (AIC) of the backward core. Per unit (batch, kv head, kv block) it stages K and V
// of the block in L1 once; then for every query head of the GQA group and every block of the
// query rows that may see the keys (one "step"):
//   S = Q.K^T and dP = dO.V^T  -> S/dP slots (fp32)        --FLAG_BWD_SDP-->  vector cores
//   P, dS from the P/dS slots  <--FLAG_BWD_GRAD--           (P from the saved max/sum, dS)
//   dV += P^T.dO, dK += dS^T.Q, dQ += dS.K  (Fixpipe with atomic add into fp32 workspace)
// With a rope part S also sums Q_rope.K_rope^T, and dK_rope += dS^T.Q_rope, dQ_rope += dS.K_rope.
// dK/dV rows belong to the unit, and units are not shared between cores, so their atomic adds
// come from one core only (deterministic); dQ rows receive adds from every core holding a kv
// block they see (order-free sum, the spec's default non-deterministic mode).
#pragma once
#include "kernel_operator.h"
#include "backward_geometry.h"

namespace AttentionCore {

constexpr uint16_t FLAG_BWD_SDP = 5;   // cube -> vector: S and dP of the step are in their slots
constexpr uint16_t FLAG_BWD_GRAD = 6;  // vector -> cube: P and dS of the step are in their slots

template <typename T>
class BackwardCube {
public:
    __aicore__ inline void Init(const BackwardParams *p, AscendC::TPipe *pipe, const BackwardTensors &t)
    {
        p_ = p;
        sched_.Init(p, t.seqQ, t.seqKv, t.prefix);
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.query));
        k_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.key));
        v_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.value));
        dy_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.dy));
        core_ = AscendC::GetBlockIdx();
        GM_ADDR ws = t.workspace;
        dq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDq));
        dk_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDk));
        dv_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDv));
        GM_ADDR slots = ws + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + p->wsSlotF32));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32 + p->wsSlotT));

        const uint32_t bq = p->blockQ;
        const uint32_t bk = p->blockKv;
        const uint32_t dp = p->headDimAlign;
        const uint32_t dc = p->dChunk;
        const uint32_t wide = bq > bk ? bq : bk;
        pipe->InitBuffer(qL1_, bq * dp * sizeof(T));
        pipe->InitBuffer(dyL1_, bq * dp * sizeof(T));
        pipe->InitBuffer(pL1_, bq * bk * sizeof(T));
        pipe->InitBuffer(dsL1_, bq * bk * sizeof(T));
        pipe->InitBuffer(kL1_, bk * dp * sizeof(T));
        pipe->InitBuffer(vL1_, bk * dp * sizeof(T));
        if (p->ropeDim != 0) {
            qr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.queryRope));
            kr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(t.keyRope));
            dqr_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDqRope));
            dkr_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + p->wsDkRope));
            pipe->InitBuffer(qrL1_, bq * p->ropeDimAlign * sizeof(T));
            pipe->InitBuffer(krL1_, bk * p->ropeDimAlign * sizeof(T));
        }
        pipe->InitBuffer(l0a_, wide * (dc > wide ? dc : wide) * sizeof(T));
        pipe->InitBuffer(l0b_, wide * dc * sizeof(T));
        pipe->InitBuffer(l0c_, wide * (dc > wide ? dc : wide) * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        AscendC::SyncAll<false>();  // the vector cores zeroed the accumulators and wrote D
        const uint64_t begin = p_->coreUnitStart[core_];
        const uint64_t end = p_->coreUnitStart[core_ + 1];
        if (begin < end) {
            sched_.Seek(begin);
        }
        for (uint64_t unit = begin; unit < end; ++unit, sched_.Advance()) {
            BackwardUnit u;
            sched_.Current(u);
            const uint32_t qBlocks = sched_.QBlocks(u);
            if (qBlocks == 0) {
                continue;
            }
            const uint64_t kvRow = (u.kvStart + static_cast<uint64_t>(u.k0)) * p_->numKvHeads + u.nkv;
            LoadRows(kL1_.Get<T>(), k_, kvRow * p_->headDim, u.cols, p_->numKvHeads, p_->headDim);
            LoadRows(vL1_.Get<T>(), v_, kvRow * p_->headDim, u.cols, p_->numKvHeads, p_->headDim);
            if (p_->ropeDim != 0) {
                LoadRows(krL1_.Get<T>(), kr_, kvRow * p_->ropeDim, u.cols, p_->numKvHeads, p_->ropeDim);
            }
            for (uint32_t g = 0; g < p_->groupSize; ++g) {
                const uint32_t n = u.nkv * p_->groupSize + g;
                for (uint32_t qb = 0; qb < qBlocks; ++qb) {
                    const int64_t q0 = u.rowLo + static_cast<int64_t>(qb) * p_->blockQ;
                    const int64_t left = u.rowHi - q0;
                    const uint32_t rows = left < p_->blockQ ? static_cast<uint32_t>(left) : p_->blockQ;
                    Step(u, n, static_cast<uint64_t>(q0), rows, kvRow);
                }
            }
        }
        AscendC::SyncAll<false>();  // every atomic add landed before the cast-out pass
    }

private:
    __aicore__ inline static uint16_t MmadRows(uint32_t rows) { return static_cast<uint16_t>(rows == 1 ? 16 : rows); }

    // `rows` TND rows of `depth` elements (pitch heads * depth) from element `offset` -> L1 Nz.
    __aicore__ inline void LoadRows(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                    uint64_t offset, uint32_t rows, uint32_t heads, uint32_t depth)
    {
        AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(depth), 0,
                                static_cast<uint16_t>(heads * depth), static_cast<uint16_t>(AlignUp(rows, 16)), 1, 0);
        AscendC::DataCopy(dst, src[offset], nd);
    }

    __aicore__ inline void Step(const BackwardUnit &u, uint32_t n, uint64_t q0, uint32_t rows, uint64_t kvRow)
    {
        const uint64_t qRow = (u.qStart + q0) * p_->numHeads + n;
        const bool rope = p_->ropeDim != 0;
        const AscendC::LocalTensor<T> qL1 = qL1_.Get<T>();
        const AscendC::LocalTensor<T> dyL1 = dyL1_.Get<T>();
        LoadRows(qL1, q_, qRow * p_->headDim, rows, p_->numHeads, p_->headDim);
        LoadRows(dyL1, dy_, qRow * p_->headDim, rows, p_->numHeads, p_->headDim);
        if (rope) {
            LoadRows(qrL1_.Get<T>(), qr_, qRow * p_->ropeDim, rows, p_->numHeads, p_->ropeDim);
        }
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        MatmulABt(qL1, kL1_.Get<T>(), rows, u.cols, p_->headDim, true);  // S = Q.K^T (+ Qr.Kr^T)
        if (rope) {
            MatmulABt(qrL1_.Get<T>(), krL1_.Get<T>(), rows, u.cols, p_->ropeDim, false);
        }
        ScoresOut(wsS_, rows, u.cols);
        MatmulABt(dyL1, vL1_.Get<T>(), rows, u.cols, p_->headDim, true);  // dP = dO.V^T
        ScoresOut(wsDp_, rows, u.cols);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_BWD_SDP);

        AscendC::CrossCoreWaitFlag(FLAG_BWD_GRAD);
        const AscendC::LocalTensor<T> pL1 = pL1_.Get<T>();
        const AscendC::LocalTensor<T> dsL1 = dsL1_.Get<T>();
        AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(u.cols), 0,
                                static_cast<uint16_t>(p_->blockKv), static_cast<uint16_t>(AlignUp(rows, 16)), 1, 0);
        AscendC::DataCopy(pL1, wsP_, nd);
        AscendC::DataCopy(dsL1, wsDs_, nd);
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();

        const uint32_t d = p_->headDim;
        const uint32_t kvPitch = p_->numKvHeads * d;
        KeyGrad(pL1, dyL1, rows, u.cols, d, dv_[kvRow * d], kvPitch);           // dV += P^T.dO
        KeyGrad(dsL1, qL1, rows, u.cols, d, dk_[kvRow * d], kvPitch);           // dK += dS^T.Q
        QueryGrad(dsL1, kL1_.Get<T>(), rows, u.cols, d, dq_[qRow * d], p_->numHeads * d);  // dQ += dS.K
        if (rope) {
            const uint32_t dr = p_->ropeDim;
            KeyGrad(dsL1, qrL1_.Get<T>(), rows, u.cols, dr, dkr_[kvRow * dr], p_->numKvHeads * dr);
            QueryGrad(dsL1, krL1_.Get<T>(), rows, u.cols, dr, dqr_[qRow * dr], p_->numHeads * dr);
        }
        PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // L1 tiles are reloaded by the next step
    }

    // L0C (+)= A.B^T with A (rows x depth) and B (cols x depth) Nz in L1; `first` starts the sum.
    __aicore__ inline void MatmulABt(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t depth, bool first)
    {
        const uint32_t m1 = AlignUp(rows, 16) / 16;
        const uint32_t n1 = AlignUp(cols, 16) / 16;
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>();
        for (uint32_t kc = 0; kc < depth; kc += p_->dChunk) {
            const uint32_t kLen = depth - kc < p_->dChunk ? depth - kc : p_->dChunk;
            const uint32_t k1 = (kLen + 15) / 16;
            const uint32_t kd1 = kc / 16;
            for (uint32_t i = 0; i < m1; ++i) {  // A Nz -> L0A Zz, one row of fractals per i
                AscendC::LoadData(l0a[i * k1 * 256], aL1[(kd1 * m1 + i) * 256],
                                  AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1), static_cast<uint16_t>(m1), 0,
                                                            0, false, 0));
            }
            // B Nz (cols x depth) is Zn of B^T already: one contiguous run.
            AscendC::LoadData(l0b, bL1[kd1 * n1 * 256],
                              AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1 * n1), 1, 0, 0, false, 0));
            PipeSync<AscendC::HardEvent::MTE1_M>();
            AscendC::Mmad(l0c_.Get<float>(), l0a, l0b,
                          AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(kLen),
                                              0, false, first && kc == 0));
            PipeSync<AscendC::HardEvent::M_MTE1>();
        }
    }

    // L0C (rows x cols) -> a score slot (fp32, pitch blockKv).
    __aicore__ inline void ScoresOut(const AscendC::GlobalTensor<float> &out, uint32_t rows, uint32_t cols)
    {
        PipeSync<AscendC::HardEvent::M_FIX>();
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                       static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), p_->blockKv, false);
        AscendC::Fixpipe(out, l0c_.Get<float>(), fix);
        PipeSync<AscendC::HardEvent::FIX_M>();
    }

    // out (cols x depth, pitch `pitch`) += X^T.Y with X (rows x cols, Nz) and Y (rows x depth,
    // Nz) in L1. X^T in L0A Zz is X's Nz fractal order with every fractal transposed; Y goes to
    // L0B Zn.
    __aicore__ inline void KeyGrad(const AscendC::LocalTensor<T> &xL1, const AscendC::LocalTensor<T> &yL1,
                                   uint32_t rows, uint32_t cols, uint32_t depth,
                                   const AscendC::GlobalTensor<float> &out, uint32_t pitch)
    {
        const uint32_t m1 = AlignUp(rows, 16) / 16;
        const uint32_t n1 = AlignUp(cols, 16) / 16;
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>();
        AscendC::LoadData(l0a, xL1, AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1 * m1), 1, 0, 0, true, 0));
        for (uint32_t dc = 0; dc < depth; dc += p_->dChunk) {
            const uint32_t dLen = depth - dc < p_->dChunk ? depth - dc : p_->dChunk;
            const uint32_t dc1 = (dLen + 15) / 16;
            const uint32_t dd1 = dc / 16;
            for (uint32_t i = 0; i < m1; ++i) {
                AscendC::LoadData(l0b[i * dc1 * 256], yL1[(dd1 * m1 + i) * 256],
                                  AscendC::LoadData2DParams(0, static_cast<uint8_t>(dc1), static_cast<uint16_t>(m1), 0,
                                                            0, true, 0));
            }
            PipeSync<AscendC::HardEvent::MTE1_M>();
            AscendC::Mmad(l0c_.Get<float>(), l0a, l0b,
                          AscendC::MmadParams(MmadRows(cols), static_cast<uint16_t>(dLen), static_cast<uint16_t>(rows),
                                              0, false, true));
            PipeSync<AscendC::HardEvent::M_MTE1>();
            AtomicOut(out[dc], dLen, cols, pitch);
        }
    }

    // out (rows x depth, pitch `pitch`) += dS.B with dS (rows x cols, Nz) and B (cols x depth,
    // Nz) in L1.
    __aicore__ inline void QueryGrad(const AscendC::LocalTensor<T> &dsL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t depth,
                                     const AscendC::GlobalTensor<float> &out, uint32_t pitch)
    {
        const uint32_t m1 = AlignUp(rows, 16) / 16;
        const uint32_t n1 = AlignUp(cols, 16) / 16;
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>();
        for (uint32_t i = 0; i < m1; ++i) {
            AscendC::LoadData(l0a[i * n1 * 256], dsL1[i * 256],
                              AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), static_cast<uint16_t>(m1), 0, 0,
                                                        false, 0));
        }
        for (uint32_t dc = 0; dc < depth; dc += p_->dChunk) {
            const uint32_t dLen = depth - dc < p_->dChunk ? depth - dc : p_->dChunk;
            const uint32_t dc1 = (dLen + 15) / 16;
            const uint32_t dd1 = dc / 16;
            for (uint32_t i = 0; i < n1; ++i) {
                AscendC::LoadData(l0b[i * dc1 * 256], bL1[(dd1 * n1 + i) * 256],
                                  AscendC::LoadData2DParams(0, static_cast<uint8_t>(dc1), static_cast<uint16_t>(n1), 0,
                                                            0, true, 0));
            }
            PipeSync<AscendC::HardEvent::MTE1_M>();
            AscendC::Mmad(l0c_.Get<float>(), l0a, l0b,
                          AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(dLen), static_cast<uint16_t>(cols),
                                              0, false, true));
            PipeSync<AscendC::HardEvent::M_MTE1>();
            AtomicOut(out[dc], dLen, rows, pitch);
        }
    }

    // L0C (m x n, Nz) += into GM rows of pitch `pitch` floats.
    __aicore__ inline void AtomicOut(const AscendC::GlobalTensor<float> &out, uint32_t n, uint32_t m, uint32_t pitch)
    {
        PipeSync<AscendC::HardEvent::M_FIX>();
        AscendC::SetAtomicAdd<float>();
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(n), static_cast<uint16_t>(m),
                                       static_cast<uint16_t>(AlignUp(MmadRows(m), 16)), pitch, false);
        AscendC::Fixpipe(out, l0c_.Get<float>(), fix);
        AscendC::SetAtomicNone();
        PipeSync<AscendC::HardEvent::FIX_M>();
    }

    const BackwardParams *p_ = nullptr;
    BackwardSchedule sched_;
    uint32_t core_ = 0;
    AscendC::GlobalTensor<T> q_, k_, v_, dy_, qr_, kr_;
    AscendC::GlobalTensor<float> dq_, dk_, dv_, dqr_, dkr_, wsS_, wsDp_;
    AscendC::GlobalTensor<T> wsP_, wsDs_;
    AscendC::TBuf<AscendC::TPosition::A1> qL1_, dyL1_, pL1_, dsL1_, qrL1_;
    AscendC::TBuf<AscendC::TPosition::B1> kL1_, vL1_, krL1_;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
};

}  // namespace AttentionCore
