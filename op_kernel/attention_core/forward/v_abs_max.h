// The largest |V| of a launch, for fp16 final sums (forward_vector_softmax.h Fp16SumSafe: a
// unit's final P.V sum fits fp16 where l * max|V| < FP16_SUM_LIMIT). Every vector core folds
// its share of V onto SCRATCH lanes and then to one value (Reduce), which forward_vector.h posts
// in its control line (CtrlVMax) and reads back from every core once all have posted (ReadVMax).
// Two sources:
//  - V staged whole in Nz order (kv_nz.h Prepare, before the barrier ahead of the main loop):
//    the staged chunks, already in UB;
//  - else, where the host plans it (ForwardParams::vAbsMaxElems), a read-only pass over the
//    caller's V during the main loop (Begin / Step): V as one flat array of elements, each
//    vector core one contiguous share of it, a chunk after each softmax block; no arrangement
//    and no store. It covers every element of V, rows no unit reads included, so the bound
//    holds for any row a final sum adds up.
// fp16 only. A timing-only model run skips the vector arithmetic: every value then stays the 0
// written before it, which is the fp16 path (the one standard-normal inputs take), as with the
// staging.
#pragma once
#include "kernel_operator.h"
#include "../common/sync.h"
#include "forward_layout.h"

namespace AttentionCore {

template <typename T> struct VAbsMax {
    static constexpr uint32_t SCRATCH = V_ABS_MAX_SCRATCH;  // halves: the running elementwise max

    // vmax[0, SCRATCH) := 0 (before the first Fold).
    __aicore__ static inline void Start(const AscendC::LocalTensor<T> &vmax)
    {
        AscendC::Duplicate(vmax.template ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0),
                           static_cast<int32_t>(SCRATCH));
        AscendC::PipeBarrier<PIPE_V>();
    }

    // vmax[0, 256) := max(vmax, |x|) folded onto 256 lanes, x (n elements) in place: |x|, then
    // halves of x folded onto each other (a multiple of 128 elements each) until at most 256 are
    // left, the odd tail of each step (< 256 elements) straight into vmax.
    __aicore__ static inline void Fold(const AscendC::LocalTensor<T> &vmax, const AscendC::LocalTensor<T> &x,
                                       uint32_t n)
    {
        if constexpr (AscendC::IsSameType<T, half>::value) {
            AscendC::PipeBarrier<PIPE_V>();  // the last reader of x (an arrangement) is done
            AscendC::Abs(x, x, static_cast<int32_t>(n));
            AscendC::PipeBarrier<PIPE_V>();
            uint32_t m = n;
            while (m > SCRATCH) {
                const uint32_t h = m / 2 / 128 * 128;
                if (m > 2 * h) {  // the tail past the two halves (< 256 elements)
                    AscendC::Max(vmax, vmax, x[2 * h], static_cast<int32_t>(m - 2 * h));
                }
                AscendC::Max(x, x, x[h], static_cast<int32_t>(h));
                AscendC::PipeBarrier<PIPE_V>();
                m = h;
            }
            AscendC::Max(vmax, vmax, x, static_cast<int32_t>(m));
            AscendC::PipeBarrier<PIPE_V>();
        }
    }

    // The 256 lanes to one value in vmax[128].
    __aicore__ static inline void Reduce(const AscendC::LocalTensor<T> &vmax)
    {
        if constexpr (AscendC::IsSameType<T, half>::value) {
            AscendC::Max(vmax, vmax, vmax[128], 128);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::WholeReduceMax(vmax[128], vmax, 128, 1, 1, 1, 8, AscendC::ReduceOrder::ORDER_ONLY_VALUE);
        }
    }

    // ------------------------------------------------ the read-only pass in the main loop
    // Vector core `vec` of `vecCount`: elements [first, last) of v's `elems` (a share of whole
    // 32-byte blocks but the last), one chunk of `chunk` elements (a multiple of 128) per Step.
    // buf: chunk + SCRATCH elements of UB of its own (the chunk, then the running max).
    __aicore__ inline void Begin(const AscendC::GlobalTensor<T> &v, uint64_t elems, const AscendC::LocalTensor<T> &buf,
                                 uint32_t chunk, uint32_t vec, uint32_t vecCount)
    {
        constexpr uint32_t BLOCK = 32 / sizeof(T);
        v_ = v;
        buf_ = buf;
        vmax_ = buf[chunk];
        chunk_ = chunk;
        const uint64_t blocks = (elems + BLOCK - 1) / BLOCK;
        next_ = vec < vecCount ? blocks * vec / vecCount * BLOCK : elems;
        last_ = vec < vecCount ? blocks * (vec + 1) / vecCount * BLOCK : elems;
        last_ = last_ < elems ? last_ : elems;
        loaded_ = 0;
        done_ = false;
        Start(vmax_);
    }

    // One step: the chunk the step before loaded is folded, then the next chunk's load goes
    // out (it lands during the next softmax block: neither waits for the other). Only id-0 pipe
    // syncs (sync.h PipeSync): no event id of the main loop is taken. True once the share is
    // folded whole and reduced into Max()'s element 128 (then at once on every further call).
    __aicore__ inline bool Step()
    {
        if (done_) {
            return true;
        }
        if (loaded_ != 0) {
            PipeSync<AscendC::HardEvent::MTE2_V>();
            Fold(vmax_, buf_, loaded_);
            loaded_ = 0;
        }
        if (next_ < last_) {
            const uint32_t n = last_ - next_ < chunk_ ? static_cast<uint32_t>(last_ - next_) : chunk_;
            PipeSync<AscendC::HardEvent::V_MTE2>();  // the fold read the buffer
            AscendC::DataCopyExtParams copy(1, n * sizeof(T), 0, 0, 0);
            AscendC::DataCopyPad(buf_, v_[next_], copy, AscendC::DataCopyPadExtParams<T>(false, 0, 0, 0));
            next_ += n;
            loaded_ = n;
            return false;
        }
        Reduce(vmax_);
        done_ = true;
        return true;
    }

    __aicore__ inline const AscendC::LocalTensor<T> &Max() const { return vmax_; }

private:
    AscendC::GlobalTensor<T> v_;
    AscendC::LocalTensor<T> buf_, vmax_;
    uint64_t next_ = 0, last_ = 0;
    uint32_t chunk_ = 0, loaded_ = 0;
    bool done_ = false;
};

}  // namespace AttentionCore
