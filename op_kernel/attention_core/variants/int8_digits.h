// Vector-side arithmetic of the int8 x int8 decode (int8 K/V kept in int8 up to the cube,
// docs/performance.md "What bounds the int8-KV decode on A2"): fp32 rows become two rows of
// int8 digits on a per-row fixed-point unit, and the cube's int32 digit products become fp32.
//   x ~= r (256 hi + lo),  r = max|x| / QMAX,  q16 = rint(x / r) clamped to [-QMAX, QMAX],
//   hi = floor((q16 + 128) / 256),  lo = q16 - 256 hi   (both in [-128, 127]: QMAX = 127 * 256 + 127)
// The query rows (Q * s_k * scale, one unit per row) and each block's P rows (one unit per row
// and block: a fixed unit fails the precision standard on a peaked softmax) go through the same
// split; the cube multiplies the digit rows of a unit (hi rows from row 0, lo rows from rowsPad / 2:
// int8_digit_layout.h) with the raw
// int8 K or V in one Mmad, and S = r (256 S_hi + S_lo), O_blk = u (256 O_hi + O_lo).
// Every step after the unit is exact in fp32 (integers below 2^24, power-of-two scales); the
// digits reach int8 through half (A2 has no fp32 -> int8 cast). The unit's reciprocal is one
// vector Div, so x * (1 / r) may round one step past QMAX: the clamp keeps both digits int8.
// The same steps run bit-exact on the genuine test kernel int8_digit_rows
// (tests/emulator/genuine) against a scalar model.
#pragma once
#include "kernel_operator.h"
#include "../common/nz_handoff.h"
#include "../common/row_ops.h"
#include "../common/sync.h"

namespace AttentionCore {

constexpr float INT8_DIGIT_QMAX = 32639.0f;
constexpr uint32_t INT8_DIGIT_C0_BYTES = 32;  // int8 columns per Nz fractal row
// max|x| floor: an all-zero row gets a tiny unit and zero digits instead of a division by zero.
constexpr float INT8_DIGIT_MIN_ABS = 1e-30f;

// Per-row units of rows x cols floats (row pitch `pitch`; cols and pitch multiples of 64, rows
// <= 255): unit[r] = max|x_r| / QMAX and inv[r] = QMAX / max|x_r| (contiguous, rows floats
// each). `work` holds rows * pitch + AlignUp(rows, 8) * 8 floats; x is left unchanged.
// nonNegative: x >= 0 (P), so max|x| is max x: no |x| pass (x is read in place where cols > 64).
__aicore__ inline void Int8DigitUnits(const AscendC::LocalTensor<float> &unit, const AscendC::LocalTensor<float> &inv,
                                      const AscendC::LocalTensor<float> &x, const AscendC::LocalTensor<float> &work,
                                      uint32_t rows, uint32_t cols, uint32_t pitch, bool nonNegative = false)
{
    const AscendC::LocalTensor<float> mag = work;                   // |x|, folded into its first 64 columns
    const AscendC::LocalTensor<float> blocks = work[rows * pitch];  // rows x 8: the max of each 8-float block
    const uint8_t rep = static_cast<uint8_t>(rows);
    const uint8_t stride = static_cast<uint8_t>(pitch / 8);
    const bool fold = nonNegative && cols > 64;  // the first fold reads x itself
    if (!fold) {
        if (nonNegative) {
            AscendC::Adds(mag, x, 0.0f, static_cast<int32_t>(rows * pitch));
        } else {
            AscendC::Abs(mag, x, static_cast<int32_t>(rows * pitch));
        }
        AscendC::PipeBarrier<PIPE_V>();
    }
    for (uint32_t c0 = 64; c0 < cols; c0 += 64) {  // one repeat per row
        // where the first fold read x, mag holds only its first 64 columns: the rest come from x
        const AscendC::LocalTensor<float> acc = fold && c0 == 64 ? x : mag;
        const AscendC::LocalTensor<float> next = fold ? x[c0] : mag[c0];
        AscendC::Max(mag, acc, next, 64, rep, AscendC::BinaryRepeatParams(1, 1, 1, stride, stride, stride));
        AscendC::PipeBarrier<PIPE_V>();
    }
    // 64 -> 8 per row, then 8 -> 1
    AscendC::BlockReduceMax(blocks, mag, static_cast<int32_t>(rows), 64, 1, 1, stride);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::BlockReduceMax(unit, blocks, static_cast<int32_t>((rows + 7) / 8), 64, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Maxs(unit, unit, INT8_DIGIT_MIN_ABS, static_cast<int32_t>(rows));
    AscendC::Duplicate(inv, INT8_DIGIT_QMAX, static_cast<int32_t>(rows));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Div(inv, inv, unit, static_cast<int32_t>(rows));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(unit, unit, 1.0f / INT8_DIGIT_QMAX, static_cast<int32_t>(rows));
    AscendC::PipeBarrier<PIPE_V>();
}

// rows x pitch floats `x` (pad columns finite) -> q16 = clamp(rint(x * inv[r]), -QMAX, QMAX)
// in place (invBlocks: Brcb's one 8-float block per row). nonNegative: x >= 0, no lower clamp.
__aicore__ inline void Int8DigitQuantise(const AscendC::LocalTensor<float> &x,
                                         const AscendC::LocalTensor<float> &invBlocks, uint32_t rows, uint32_t pitch,
                                         bool nonNegative = false)
{
    const int32_t n = static_cast<int32_t>(rows * pitch);
    RowBroadcast<RowOp::Mul>(x, invBlocks, rows, pitch, pitch);
    AscendC::Cast(x, x, AscendC::RoundMode::CAST_RINT, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Mins(x, x, INT8_DIGIT_QMAX, n);
    AscendC::PipeBarrier<PIPE_V>();
    if (!nonNegative) {
        AscendC::Maxs(x, x, -INT8_DIGIT_QMAX, n);
        AscendC::PipeBarrier<PIPE_V>();
    }
}

// sum[r] = the sum of row r of rows x cols floats (pitch and cols multiples of 64): for P's
// q16 rows the softmax denominator counts the quantised P (l += u * sum q16; exact: integers
// below 2^24). `work` as Int8DigitUnits'.
__aicore__ inline void Int8DigitRowSums(const AscendC::LocalTensor<float> &sum, const AscendC::LocalTensor<float> &x,
                                        const AscendC::LocalTensor<float> &work, uint32_t rows, uint32_t cols,
                                        uint32_t pitch)
{
    const AscendC::LocalTensor<float> fold = work;
    const AscendC::LocalTensor<float> blocks = work[rows * pitch];
    const uint8_t rep = static_cast<uint8_t>(rows);
    const uint8_t stride = static_cast<uint8_t>(pitch / 8);
    if (cols <= 64) {  // else the first fold reads x itself
        AscendC::Adds(fold, x, 0.0f, static_cast<int32_t>(rows * pitch));
        AscendC::PipeBarrier<PIPE_V>();
    }
    for (uint32_t c0 = 64; c0 < cols; c0 += 64) {
        // fold holds only its first 64 columns: the rest come from x
        AscendC::Add(fold, c0 == 64 ? x : fold, x[c0], 64, rep,
                     AscendC::BinaryRepeatParams(1, 1, 1, stride, stride, stride));
        AscendC::PipeBarrier<PIPE_V>();
    }
    AscendC::BlockReduceSum(blocks, fold, static_cast<int32_t>(rows), 64, 1, 1, stride);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::BlockReduceSum(sum, blocks, static_cast<int32_t>((rows + 7) / 8), 64, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
}

// q16 rows (Int8DigitQuantise) -> int8 digits: hi rows in digits[0, rows * pitch), lo rows in
// digits[rows * pitch, 2 rows * pitch), the same pitch. x is overwritten (q16 - 256 hi); `hi`
// holds rows * pitch floats, `h` 2 rows * pitch halves.
__aicore__ inline void Int8DigitSplitQuantised(const AscendC::LocalTensor<int8_t> &digits,
                                               const AscendC::LocalTensor<float> &x,
                                               const AscendC::LocalTensor<float> &hi,
                                               const AscendC::LocalTensor<half> &h, uint32_t rows, uint32_t pitch)
{
    const int32_t n = static_cast<int32_t>(rows * pitch);
    AscendC::Adds(hi, x, 128.0f, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(hi, hi, 1.0f / 256.0f, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(hi, hi, AscendC::RoundMode::CAST_FLOOR, n);
    AscendC::PipeBarrier<PIPE_V>();
    // lo = q16 - 256 hi (power-of-two scales of hi: exact)
    AscendC::Muls(hi, hi, -256.0f, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Add(x, x, hi, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(hi, hi, -1.0f / 256.0f, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(h, hi, AscendC::RoundMode::CAST_NONE, n);
    AscendC::Cast(h[n], x, AscendC::RoundMode::CAST_NONE, n);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Cast(digits, h, AscendC::RoundMode::CAST_NONE, 2 * n);
    AscendC::PipeBarrier<PIPE_V>();
}

// Quantise and split in one (the query rows, which need no sum).
__aicore__ inline void Int8DigitSplit(const AscendC::LocalTensor<int8_t> &digits, const AscendC::LocalTensor<float> &x,
                                      const AscendC::LocalTensor<float> &invBlocks,
                                      const AscendC::LocalTensor<float> &hi, const AscendC::LocalTensor<half> &h,
                                      uint32_t rows, uint32_t pitch)
{
    Int8DigitQuantise(x, invBlocks, rows, pitch);
    Int8DigitSplitQuantised(digits, x, hi, h, rows, pitch);
}

// The cube's two int32 digit products (hi rows' at prod[0, n), lo rows' at prod[loAt, loAt + n))
// -> s = 256 S_hi + S_lo in fp32 (`t` holds n floats); the caller applies the row unit.
__aicore__ inline void Int8DigitCombine(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<int32_t> &prod,
                                        uint32_t loAt, const AscendC::LocalTensor<float> &t, uint32_t n)
{
    AscendC::Cast(s, prod, AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(n));
    AscendC::Cast(t, prod[loAt], AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(n));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(s, s, 256.0f, static_cast<int32_t>(n));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Add(s, s, t, static_cast<int32_t>(n));
    AscendC::PipeBarrier<PIPE_V>();
}

// A vector core's hi and lo digit rows (2 rows x cols int8 in `digits`: hi rows, then lo rows,
// row pitch `pitch` (0: cols)) -> rows [row0, row0 + rows) and [slotRows / 2 + row0, ...) of an
// int8 Nz slot (C0 = 32 int8 columns per 16 x 32 fractal), in one copy. The int8 Nz order is
// the 16-bit one of the same bytes viewed as cols / 2 16-bit columns, so NzHandoff's 16-bit
// Arrange serves it (`nz` holds 2 rows x cols int8). Arranged as one tile of 2 rows rows, each
// column block is a hi piece and a lo piece of `rows` rows, and in the slot every piece is
// slotRows / 2 - rows rows after the one before (hi to lo in a column block, lo to the next
// block's hi). The hand-offs of a key block are then one DMA each (P store here; S and O
// loads: Int8DigitLoadPair), as the 16-bit hand-offs are.
__aicore__ inline void Int8DigitStorePairNz(const AscendC::GlobalTensor<half> &slot,
                                            const AscendC::LocalTensor<int8_t> &nz,
                                            const AscendC::LocalTensor<int8_t> &digits, uint32_t row0, uint32_t rows,
                                            uint32_t cols, uint32_t slotRows, uint32_t pitch = 0)
{
    const AscendC::LocalTensor<half> nz16 = nz.ReinterpretCast<half>();
    NzHandoff<half>::Arrange(nz16, digits.ReinterpretCast<half>(), 2 * rows, cols / 2, (pitch == 0 ? cols : pitch) / 2);
    PipeSync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopy(slot[row0 * NzHandoff<half>::C0], nz16,
                      AscendC::DataCopyParams(static_cast<uint16_t>(2 * (cols / INT8_DIGIT_C0_BYTES)),
                                              static_cast<uint16_t>(rows), 0,
                                              static_cast<uint16_t>(slotRows / 2 - rows)));
}

// A vector core's rows of an int32 digit-product slot (hi rows from row0, lo rows from
// slotRows / 2 + row0; rows of `cols` int32) -> dst: hi rows, then lo rows, in one copy.
__aicore__ inline void Int8DigitLoadPair(const AscendC::LocalTensor<int32_t> &dst,
                                         const AscendC::GlobalTensor<int32_t> &slot, uint32_t row0, uint32_t rows,
                                         uint32_t cols, uint32_t slotRows)
{
    const uint32_t rowBlocks = cols * 4 / 32;
    AscendC::DataCopy(dst, slot[row0 * cols],
                      AscendC::DataCopyParams(2, static_cast<uint16_t>(rows * rowBlocks),
                                              static_cast<uint16_t>((slotRows / 2 - rows) * rowBlocks), 0));
}

// UB scratch of the block steps below for up to `rows` rows of `pitch` columns.
struct Int8DigitScratch {
    AscendC::LocalTensor<float> work;    // rows * pitch + AlignUp(rows, 8) * 8 floats
    AscendC::LocalTensor<float> inv;     // rows floats (8-aligned)
    AscendC::LocalTensor<float> blocks;  // AlignUp(rows, 8) * 8 floats
    AscendC::LocalTensor<float> hi;      // rows * pitch floats
    AscendC::LocalTensor<half> h;        // 2 rows * pitch halves
    AscendC::LocalTensor<int8_t> d;      // 2 rows * pitch int8: hi rows, then lo rows
    AscendC::LocalTensor<int8_t> nz;     // 2 rows * pitch int8: their Nz arrangement
};

// S = r (256 S_hi + S_lo) for `rows` rows of `cols` scores: the rows' hi products at prod[0..],
// lo products at prod[loAt..], r as Brcb blocks (the query units); `t` holds rows * cols floats.
__aicore__ inline void Int8DigitScores(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<int32_t> &prod,
                                       uint32_t loAt, const AscendC::LocalTensor<float> &rBlocks,
                                       const AscendC::LocalTensor<float> &t, uint32_t rows, uint32_t cols)
{
    Int8DigitCombine(s, prod, loAt, t, rows * cols);
    RowBroadcast<RowOp::Mul>(s, rBlocks, rows, cols, cols);
}

// One vector core's P rows of a key block (rows x pitch floats in [0, 1], pad columns 0;
// overwritten) -> the cube's P digit slot (int8 Nz of slotRows rows: hi rows from row0, lo rows
// from slotRows / 2 + row0, one copy), the rows' units (P's largest per row and block / QMAX)
// and the sums of their quantised rows (the softmax denominator adds unit * sum).
__aicore__ inline void Int8DigitBlockP(const AscendC::GlobalTensor<half> &slot, uint32_t row0, uint32_t slotRows,
                                       const AscendC::LocalTensor<float> &p, const AscendC::LocalTensor<float> &unit,
                                       const AscendC::LocalTensor<float> &qsum, const Int8DigitScratch &w,
                                       uint32_t rows, uint32_t cols, uint32_t pitch)
{
    Int8DigitUnits(unit, w.inv, p, w.work, rows, cols, pitch, true);
    BroadcastRows(w.blocks, w.inv, rows);
    Int8DigitQuantise(p, w.blocks, rows, pitch, true);
    Int8DigitRowSums(qsum, p, w.work, rows, cols, pitch);
    Int8DigitSplitQuantised(w.d, p, w.hi, w.h, rows, pitch);
    Int8DigitStorePairNz(slot, w.nz, w.d, row0, rows, cols, slotRows, pitch);
}

// acc += u (256 O_hi + O_lo): the block's P.V digits folded into the rows' fp32 accumulator (the
// caller rescales acc by alpha first); u as Brcb blocks; `t` holds rows * dp floats.
__aicore__ inline void Int8DigitFoldO(const AscendC::LocalTensor<float> &acc, const AscendC::LocalTensor<int32_t> &prod,
                                      uint32_t loAt, const AscendC::LocalTensor<float> &uBlocks,
                                      const AscendC::LocalTensor<float> &t, const AscendC::LocalTensor<float> &t2,
                                      uint32_t rows, uint32_t dp)
{
    Int8DigitCombine(t, prod, loAt, t2, rows * dp);
    RowBroadcast<RowOp::Mul>(t, uBlocks, rows, dp, dp);
    AscendC::Add(acc, acc, t, static_cast<int32_t>(rows * dp));
    AscendC::PipeBarrier<PIPE_V>();
}

}  // namespace AttentionCore
