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
// with Nd2Nz, and its region stays unused.
//
// Region layout: per KV head h, batch b (one "batch" for TND, whose tokens are already one axis)
// and tensor (K, then V) a matrix of kvNzRows rows in Nz order: column block j (head-dim
// elements [16 j, 16 j + 16)) holds kvNzRows rows of 16 elements. V's region follows K's, so
// the two are one Nz matrix of 2 headDimAlign columns and a key block's K and V rows load with
// one copy (LoadPair). Rows past the tensor's kvNzSeq rows are
// zero: a key block whose padded extent runs past the end reads them (its pad columns of S are
// masked, P is zero there), and never NaN.
#pragma once
#include "kernel_operator.h"
#include "forward_params.h"
#include "../common/nz_handoff.h"
#include "../common/sync.h"

namespace AttentionCore {

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

    // Whether tensor (0: K, 1: V) is staged.
    __aicore__ inline bool Staged(uint32_t tensor) const
    {
        return p_->kvNz == KV_NZ_BOTH || p_->kvNz == (tensor == 0 ? KV_NZ_K_ONLY : KV_NZ_V_ONLY);
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
    __aicore__ inline void Prepare(const AscendC::LocalTensor<T> &nd, const AscendC::LocalTensor<T> &nz, uint32_t vec,
                                   uint32_t vecCount, float keyScale = 1.0f) const
    {
        const uint32_t ch = p_->kvNzChunk;
        const uint32_t dp = p_->headDimAlign;
        const uint32_t perRegion = (p_->kvNzRows + ch - 1) / ch;
        // One tensor only (KV_NZ_K_ONLY, KV_NZ_V_ONLY): the other's rows stay where they are and
        // the cube converts them itself.
        const uint32_t firstTensor = p_->kvNz == KV_NZ_V_ONLY ? 1 : 0;
        const uint64_t tensors = p_->kvNz == KV_NZ_BOTH ? 2 : 1;
        const uint64_t items = tensors * p_->numKvHeads * p_->kvNzBatches * perRegion;
        // A launch can hold more vector cores than the plan (the backward's recompute launches
        // for the larger of its two plans): those stage nothing.
        const uint64_t first = vec < vecCount ? items * vec / vecCount : items;
        const uint64_t last = vec < vecCount ? items * (vec + 1) / vecCount : items;
        for (int32_t b = 0; b < 2; ++b) {  // both copies start free
            AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT_IN + b);
            AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT_OUT + b);
        }
        for (uint64_t i = first; i < last; ++i) {
            const int32_t b = static_cast<int32_t>((i - first) & 1);
            const AscendC::LocalTensor<T> in = nd[b * ch * dp];
            const AscendC::LocalTensor<T> out = nz[b * ch * dp];
            const uint32_t c = static_cast<uint32_t>(i % perRegion);
            const uint64_t region = i / perRegion;
            const uint32_t bt = static_cast<uint32_t>(region % p_->kvNzBatches);
            const uint32_t h = static_cast<uint32_t>(region / p_->kvNzBatches % p_->numKvHeads);
            const uint32_t tensor = firstTensor + static_cast<uint32_t>(region / p_->kvNzBatches / p_->numKvHeads);
            const uint32_t s0 = c * ch;
            const uint32_t rows = p_->kvNzRows - s0 < ch ? p_->kvNzRows - s0 : ch;
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
        AscendC::PipeBarrier<PIPE_ALL>();
    }

    static constexpr int32_t EVT_IN = VEC_EVT_S;        // + copy: MTE2_V loaded / V_MTE2 free
    static constexpr int32_t EVT_OUT = VEC_EVT_KV_OUT;  // + copy: V_MTE3 arranged / MTE3_V stored

    const ForwardParams *p_ = nullptr;
    AscendC::GlobalTensor<T> src_[2];
    AscendC::GlobalTensor<T> nz_;
};

}  // namespace AttentionCore
