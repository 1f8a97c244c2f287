// Cube side (AIC) of the sparse backward core. Per query token (its G heads are the M rows)
// it stages Q (+ rope) and dO in L1 once; then per chunk of gathered keys (KvGather):
//   K (+ rope) and V runs -> L1 at their chunk rows
//   S = Q.K^T and dP = dO.V^T -> S/dP slots (fp32)        --FLAG_SPARSE_SDP-->  vector cores
//   P, dS from the P/dS slots <--FLAG_SPARSE_GRAD--       (P from the saved max/sum, dS)
//   dV[rows] += P^T.dO, dK[rows] += dS^T.Q   (Fixpipe atomic add, one per run of rows)
//   dQ[token] += dS.K
// The stage structure and the fractal moves are those of the dense backward core
// (backward_cube.h); what differs is the KV source (gathered runs) and the scatter of dK/dV.
// A KV row gathered by several tokens receives atomic adds from every core holding one of
// them (order-free fp32 sum); deterministic mode runs on one core, so the order is fixed.
#pragma once
#include "kernel_operator.h"
#include "cube_tiles.h"
#include "kv_gather.h"
#include "sync.h"

namespace AttentionCore {

constexpr uint16_t FLAG_SPARSE_SDP = 7;   // cube -> vector: S and dP of the chunk are in their slots
constexpr uint16_t FLAG_SPARSE_GRAD = 8;  // vector -> cube: P and dS of the chunk are in their slots

template <typename T>
class SparseBackwardCube {
public:
    __aicore__ inline void Init(const SparseBackwardParams *p, AscendC::TPipe *pipe, GM_ADDR query, GM_ADDR key,
                                GM_ADDR value, GM_ADDR indices, GM_ADDR dy, GM_ADDR seqQ, GM_ADDR seqKv,
                                GM_ADDR queryRope, GM_ADDR keyRope, GM_ADDR workspace)
    {
        p_ = p;
        gather_.Init(p, indices, seqQ, seqKv);
        q_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(query));
        k_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(key));
        v_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(value));
        dy_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(dy));
        if (p->ropeDim != 0) {
            qr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(queryRope));
            kr_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(keyRope));
        }
        core_ = AscendC::GetBlockIdx();
        dq_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDq));
        dk_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDk));
        dv_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace + p->wsDv));
        GM_ADDR slots = workspace + p->wsSlots + core_ * p->wsSlotBytesPerCore;
        wsS_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots));
        wsDp_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(slots + p->wsSlotF32));
        wsP_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32));
        wsDs_.SetGlobalBuffer(reinterpret_cast<__gm__ T *>(slots + 2 * p->wsSlotF32 + p->wsSlotT));

        const uint32_t g = p->headsPad;
        const uint32_t c = p->blockKv;
        const uint32_t dc = p->dChunk;
        const uint32_t wide = g > c ? g : c;
        pipe->InitBuffer(qL1_, g * p->qkDim * sizeof(T));
        pipe->InitBuffer(dyL1_, g * p->headDim * sizeof(T));
        pipe->InitBuffer(pL1_, g * c * sizeof(T));
        pipe->InitBuffer(dsL1_, g * c * sizeof(T));
        pipe->InitBuffer(kL1_, c * p->qkDim * sizeof(T));
        pipe->InitBuffer(vL1_, c * p->headDim * sizeof(T));
        pipe->InitBuffer(l0a_, wide * (dc > wide ? dc : wide) * sizeof(T));
        pipe->InitBuffer(l0b_, wide * dc * sizeof(T));
        pipe->InitBuffer(l0c_, wide * (dc > c ? dc : c) * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        AscendC::SyncAll<false>();  // the vector cores zeroed the accumulators
        const uint64_t begin = p_->coreTokenStart[core_];
        const uint64_t end = p_->coreTokenStart[core_ + 1];
        for (uint64_t t = begin; t < end; ++t) {
            gather_.SetToken(t);
            uint32_t runCount = 0;
            uint32_t cols = gather_.NextChunk(runs_, runCount);
            if (cols == 0) {
                continue;  // nothing selected: zero gradients
            }
            LoadQueryRows(t);
            while (cols != 0) {
                Chunk(t, cols, runCount);
                cols = gather_.NextChunk(runs_, runCount);
            }
        }
        AscendC::SyncAll<false>();  // every atomic add landed before the cast-out pass
    }

private:
    __aicore__ inline static uint16_t MmadRows(uint32_t rows) { return static_cast<uint16_t>(rows == 1 ? 16 : rows); }

    // `rows` rows of `width` elements (pitch `pitch`) -> L1 Nz with `dstRows` rows per fractal
    // column, starting at row `row0` of the destination.
    __aicore__ inline void LoadNz(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src, uint32_t row0,
                                  uint32_t rows, uint32_t width, uint32_t pitch, uint32_t dstRows)
    {
        AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(width), 0,
                                static_cast<uint16_t>(pitch), static_cast<uint16_t>(dstRows), 1, 0);
        AscendC::DataCopy(dst[row0 * 16], src, nd);
    }

    __aicore__ inline void LoadQueryRows(uint64_t t)
    {
        const uint32_t g = p_->heads;
        const uint32_t d = p_->headDim;
        const uint32_t dr = p_->ropeDim;
        PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // the previous token's tiles are consumed
        const AscendC::LocalTensor<T> qL1 = qL1_.Get<T>();
        LoadNz(qL1, q_[t * g * d], 0, g, d, d, p_->headsPad);
        if (dr != 0) {
            LoadNz(qL1[d * p_->headsPad], qr_[t * g * dr], 0, g, dr, dr, p_->headsPad);
        }
        LoadNz(dyL1_.Get<T>(), dy_[t * g * d], 0, g, d, d, p_->headsPad);
    }

    __aicore__ inline void Chunk(uint64_t t, uint32_t cols, uint32_t runCount)
    {
        const uint32_t g = p_->heads;
        const uint32_t c = p_->blockKv;
        const uint32_t d = p_->headDim;
        const uint32_t dr = p_->ropeDim;
        const AscendC::LocalTensor<T> kL1 = kL1_.Get<T>();
        const AscendC::LocalTensor<T> vL1 = vL1_.Get<T>();
        PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // K/V of the previous chunk are consumed
        for (uint32_t r = 0; r < runCount; ++r) {
            const GatherRun &run = runs_[r];
            LoadNz(kL1, k_[run.kvRow * d], run.pos, run.len, d, d, c);
            if (dr != 0) {
                LoadNz(kL1[d * c], kr_[run.kvRow * dr], run.pos, run.len, dr, dr, c);
            }
            LoadNz(vL1, v_[run.kvRow * d], run.pos, run.len, d, d, c);
        }
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        ScoreLike(qL1_.Get<T>(), kL1, g, cols, p_->qkDim, wsS_);  // S = Q.K^T
        ScoreLike(dyL1_.Get<T>(), vL1, g, cols, d, wsDp_);        // dP = dO.V^T
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(FLAG_SPARSE_SDP);

        AscendC::CrossCoreWaitFlag(FLAG_SPARSE_GRAD);
        const AscendC::LocalTensor<T> pL1 = pL1_.Get<T>();
        const AscendC::LocalTensor<T> dsL1 = dsL1_.Get<T>();
        LoadNz(pL1, wsP_, 0, g, c, c, p_->headsPad);
        LoadNz(dsL1, wsDs_, 0, g, c, c, p_->headsPad);
        PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        KeyGrad(pL1, dyL1_.Get<T>(), cols, d, dv_, runCount);         // dV += P^T.dO
        KeyGrad(dsL1, qL1_.Get<T>(), cols, p_->qkDim, dk_, runCount);  // dK += dS^T.Q
        QueryGrad(dsL1, kL1, cols, dq_[t * g * p_->qkDim]);            // dQ += dS.K
    }

    // out (heads x cols fp32, pitch blockKv) = A.B^T with A (heads x width, Nz of headsPad
    // rows) and B (cols x width, Nz of blockKv rows) in L1.
    __aicore__ inline void ScoreLike(const AscendC::LocalTensor<T> &aL1, const AscendC::LocalTensor<T> &bL1,
                                     uint32_t rows, uint32_t cols, uint32_t width,
                                     const AscendC::GlobalTensor<float> &out)
    {
        const uint32_t m1 = p_->headsPad / 16;
        const uint32_t n1 = AlignUp(cols, 16) / 16;
        const uint32_t bRows1 = p_->blockKv / 16;
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>();
        const AscendC::LocalTensor<float> l0c = l0c_.Get<float>();
        for (uint32_t kc = 0; kc < width; kc += p_->dChunk) {
            const uint32_t kLen = width - kc < p_->dChunk ? width - kc : p_->dChunk;
            const uint32_t k1 = (kLen + 15) / 16;
            const uint32_t kd1 = kc / 16;
            LoadRowsToL0A(l0a, aL1, m1, kd1, k1);
            LoadTransposeOperandToL0B(l0b, bL1, kd1, k1, n1, bRows1);
            PipeSync<AscendC::HardEvent::MTE1_M>();
            AscendC::Mmad(l0c, l0a, l0b,
                          AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(cols), static_cast<uint16_t>(kLen),
                                              0, false, kc == 0));
            PipeSync<AscendC::HardEvent::M_MTE1>();
        }
        PipeSync<AscendC::HardEvent::M_FIX>();
        AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(cols), static_cast<uint16_t>(rows),
                                       static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), p_->blockKv, false);
        AscendC::Fixpipe(out, l0c, fix);
        PipeSync<AscendC::HardEvent::FIX_M>();
    }

    // out[run rows] (width columns, pitch width) += X^T.Y with X (heads x blockKv, Nz) and
    // Y (heads x width, Nz) in L1; each run of the chunk is one atomic Fixpipe.
    __aicore__ inline void KeyGrad(const AscendC::LocalTensor<T> &xL1, const AscendC::LocalTensor<T> &yL1,
                                   uint32_t cols, uint32_t width, const AscendC::GlobalTensor<float> &out,
                                   uint32_t runCount)
    {
        const uint32_t rows = p_->heads;
        const uint32_t m1 = p_->headsPad / 16;
        const uint32_t n1 = AlignUp(cols, 16) / 16;
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>();
        const AscendC::LocalTensor<float> l0c = l0c_.Get<float>();
        LoadTransposedToL0A(l0a, xL1, n1 * m1);
        for (uint32_t dc = 0; dc < width; dc += p_->dChunk) {
            const uint32_t dLen = width - dc < p_->dChunk ? width - dc : p_->dChunk;
            const uint32_t dc1 = (dLen + 15) / 16;
            const uint32_t dd1 = dc / 16;
            LoadColumnsToL0B(l0b, yL1, dd1, dc1, m1, m1);
            PipeSync<AscendC::HardEvent::MTE1_M>();
            AscendC::Mmad(l0c, l0a, l0b,
                          AscendC::MmadParams(MmadRows(cols), static_cast<uint16_t>(dLen), static_cast<uint16_t>(rows),
                                              0, false, true));
            PipeSync<AscendC::HardEvent::M_MTE1>();
            PipeSync<AscendC::HardEvent::M_FIX>();
            AscendC::SetAtomicAdd<float>();
            const uint16_t srcRows = static_cast<uint16_t>(AlignUp(MmadRows(cols), 16));
            for (uint32_t r = 0; r < runCount; ++r) {
                const GatherRun &run = runs_[r];
                AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(dLen), static_cast<uint16_t>(run.len), srcRows,
                                               width, false);
                AscendC::Fixpipe(out[run.kvRow * width + dc], l0c[run.pos * 16], fix);
            }
            AscendC::SetAtomicNone();
            PipeSync<AscendC::HardEvent::FIX_M>();
        }
    }

    // dQ rows of the token (pitch qkDim) += dS.K with dS (heads x cols, Nz) and K (cols x
    // qkDim, Nz of blockKv rows) in L1.
    __aicore__ inline void QueryGrad(const AscendC::LocalTensor<T> &dsL1, const AscendC::LocalTensor<T> &kL1,
                                     uint32_t cols, const AscendC::GlobalTensor<float> &out)
    {
        const uint32_t rows = p_->heads;
        const uint32_t width = p_->qkDim;
        const uint32_t m1 = p_->headsPad / 16;
        const uint32_t n1 = AlignUp(cols, 16) / 16;
        const uint32_t kRows1 = p_->blockKv / 16;
        const AscendC::LocalTensor<T> l0a = l0a_.Get<T>();
        const AscendC::LocalTensor<T> l0b = l0b_.Get<T>();
        const AscendC::LocalTensor<float> l0c = l0c_.Get<float>();
        LoadRowsToL0A(l0a, dsL1, m1, 0, n1);
        for (uint32_t dc = 0; dc < width; dc += p_->dChunk) {
            const uint32_t dLen = width - dc < p_->dChunk ? width - dc : p_->dChunk;
            const uint32_t dc1 = (dLen + 15) / 16;
            const uint32_t dd1 = dc / 16;
            LoadColumnsToL0B(l0b, kL1, dd1, dc1, n1, kRows1);
            PipeSync<AscendC::HardEvent::MTE1_M>();
            AscendC::Mmad(l0c, l0a, l0b,
                          AscendC::MmadParams(MmadRows(rows), static_cast<uint16_t>(dLen), static_cast<uint16_t>(cols),
                                              0, false, true));
            PipeSync<AscendC::HardEvent::M_MTE1>();
            PipeSync<AscendC::HardEvent::M_FIX>();
            AscendC::SetAtomicAdd<float>();
            AscendC::FixpipeParamsV220 fix(static_cast<uint16_t>(dLen), static_cast<uint16_t>(rows),
                                           static_cast<uint16_t>(AlignUp(MmadRows(rows), 16)), width, false);
            AscendC::Fixpipe(out[dc], l0c, fix);
            AscendC::SetAtomicNone();
            PipeSync<AscendC::HardEvent::FIX_M>();
        }
    }

    const SparseBackwardParams *p_ = nullptr;
    KvGather gather_;
    GatherRun runs_[GATHER_MAX_RUNS];
    uint32_t core_ = 0;
    AscendC::GlobalTensor<T> q_, k_, v_, dy_, qr_, kr_;
    AscendC::GlobalTensor<float> dq_, dk_, dv_, wsS_, wsDp_;
    AscendC::GlobalTensor<T> wsP_, wsDs_;
    AscendC::TBuf<AscendC::TPosition::A1> qL1_, dyL1_, pL1_, dsL1_;
    AscendC::TBuf<AscendC::TPosition::B1> kL1_, vL1_;
    AscendC::TBuf<AscendC::TPosition::A2> l0a_;
    AscendC::TBuf<AscendC::TPosition::B2> l0b_;
    AscendC::TBuf<AscendC::TPosition::CO1> l0c_;
};

}  // namespace AttentionCore
