// Sparse-mode geometry of the FlashAttention family (ops-transformer docs/context/
// sparse_mode参数说明.md; the choices are in docs/golden.md): which keys query row `row`
// (0-based inside its batch) sees. Modes 0-8 all reduce to one interval per row,
//     [max(0, row + diag - pre),  min(seqKv, max(row + diag + next + 1, prefix)))
// whose ends never decrease with the row, so the keys of a block of rows are the interval
// from its first row's start to its last row's end. Plain integer code shared by the forward
// and backward kernels and the host tiling (which prices units with it).
#pragma once
#include <cstdint>

#ifndef __aicore__  // host builds (tiling) include this header without the kernel headers
#define __aicore__
#endif

namespace AttentionCore {

// A band bound that never cuts (host-clamped pre/next tokens stay within +-2^40 as well).
constexpr int64_t SPARSE_UNBOUNDED = int64_t(1) << 40;

enum SparseMode : uint32_t {
    SPARSE_DEFAULT_MASK = 0,  // user mask + left-up band (pre/next)
    SPARSE_ALL_MASK = 1,      // user mask only
    SPARSE_LEFT_UP_CAUSAL = 2,
    SPARSE_RIGHT_DOWN_CAUSAL = 3,
    SPARSE_BAND = 4,    // right-down band (pre/next)
    SPARSE_PREFIX = 5,  // not supported by FlashAttentionVarLenScore
    SPARSE_PREFIX_COMPRESS = 6,
    SPARSE_RIGHT_DOWN_CAUSAL_BAND = 7,  // band on the last non-empty batch, others right-down causal
    SPARSE_BAND_LEFT_UP_CAUSAL = 8,     // band on the first non-empty batch, others left-up causal
};

struct SparseBand {
    int64_t diag;    // 0: left-up alignment; seqKv - seqQ: right-down
    int64_t pre;     // keys before the diagonal that stay visible
    int64_t next;    // keys after the diagonal that stay visible
    int64_t prefix;  // the first `prefix` keys are always visible (mode 6)
    int64_t seqKv;

    __aicore__ inline int64_t Lo(int64_t row) const
    {
        const int64_t lo = row + diag - pre;
        return lo < 0 ? 0 : (lo > seqKv ? seqKv : lo);
    }
    __aicore__ inline int64_t Hi(int64_t row) const
    {
        int64_t hi = row + diag + next + 1;
        hi = hi < prefix ? prefix : hi;
        return hi > seqKv ? seqKv : (hi < 0 ? 0 : hi);
    }
};

// The band of one batch. Without an attention mask every mode means "all keys" (spec 001).
// pre/next are the user's values clamped to +-SPARSE_UNBOUNDED.
__aicore__ inline SparseBand MakeSparseBand(uint32_t mode, bool hasMask, int64_t pre, int64_t next, int64_t seqQ,
                                            int64_t seqKv, int64_t prefix, bool isBandBatch)
{
    SparseBand band;
    band.diag = 0;
    band.pre = SPARSE_UNBOUNDED;
    band.next = SPARSE_UNBOUNDED;
    band.prefix = 0;
    band.seqKv = seqKv;
    if (!hasMask) {
        return band;
    }
    const int64_t rightDown = seqKv - seqQ;
    if (mode == SPARSE_DEFAULT_MASK) {
        band.pre = pre;
        band.next = next;
    } else if (mode == SPARSE_LEFT_UP_CAUSAL) {
        band.next = 0;
    } else if (mode == SPARSE_RIGHT_DOWN_CAUSAL || mode == SPARSE_PREFIX || mode == SPARSE_PREFIX_COMPRESS) {
        band.diag = rightDown;
        band.next = 0;
        band.prefix = (mode == SPARSE_RIGHT_DOWN_CAUSAL || prefix < 0) ? 0 : prefix;
    } else if (mode == SPARSE_BAND) {
        band.diag = rightDown;
        band.pre = pre;
        band.next = next;
    } else if (mode == SPARSE_RIGHT_DOWN_CAUSAL_BAND || mode == SPARSE_BAND_LEFT_UP_CAUSAL) {
        if (isBandBatch) {
            band.diag = rightDown;
            band.pre = pre;
            band.next = next;
        } else {
            band.diag = mode == SPARSE_RIGHT_DOWN_CAUSAL_BAND ? rightDown : 0;
            band.next = 0;
        }
    }
    return band;  // SPARSE_ALL_MASK: the user mask alone decides
}

}  // namespace AttentionCore
