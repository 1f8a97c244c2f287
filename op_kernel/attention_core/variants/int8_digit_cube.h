// Cube-side tiles of the int8 x int8 decode (int8 K/V kept in int8 up to the cube;
// int8_digits.h, int8_digit_layout.h): every operand reaches L1 with one plain copy of an int8
// Nz tile (C0 = 32 int8 columns per 16 x 32 fractal: the query digit tile and the P digit
// slot of rowsPad rows, written by the vector cores; a ring slot of blockKv K or V rows), and
//   S digits = [Q hi; Q lo] . K^T   (rowsPad x blockKv int32)
//   O digits = [P hi; P lo] . V     (rowsPad x headDimAlign int32)
// are one s8 x s8 -> s32 Mmad each, written to GM by a NoQuant int32 Fixpipe. The sequence of
// calls (LoadData 2D for the digit rows and K, LoadDataWithTranspose for V) is the one the
// genuine API-check kernel int8_digit_block runs; these helpers take any rowsPad (16 or 32)
// and key / channel counts that are multiples of 32.
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

constexpr uint32_t INT8_FRACTAL_BYTES = 512;  // 16 rows x 32 int8

// An Nz tile of rows x cols int8 (column blocks of 32, `rows` rows each) -> L0A in Zz order
// (row blocks of 16, each its column blocks in turn): one LoadData per row block.
__aicore__ inline void Int8DigitLoadA(const AscendC::LocalTensor<int8_t> &l0a, const AscendC::LocalTensor<int8_t> &l1,
                                      uint32_t rows, uint32_t cols)
{
    const uint16_t rowBlocks = static_cast<uint16_t>(rows / 16);
    for (uint16_t i = 0; i < rowBlocks; ++i) {
        AscendC::LoadData(l0a[i * (cols / 32) * INT8_FRACTAL_BYTES], l1[i * INT8_FRACTAL_BYTES],
                          AscendC::LoadData2DParams(0, static_cast<uint8_t>(cols / 32), rowBlocks, 0, 0, false, 0));
    }
}

// K's Nz tile (keys x channels) is already B = K^T's Zn order: one LoadData of every fractal.
__aicore__ inline void Int8DigitLoadKeys(const AscendC::LocalTensor<int8_t> &l0b,
                                         const AscendC::LocalTensor<int8_t> &l1, uint32_t keys, uint32_t channels)
{
    AscendC::LoadData(
        l0b, l1, AscendC::LoadData2DParams(0, static_cast<uint8_t>((keys / 16) * (channels / 32)), 1, 0, 0, false, 0));
}

// V's Nz tile (keys x channels) -> B = V in Zn order: the square of Nz fractals (c1, 2q),
// (c1, 2q + 1) (keys 32q.. x channels 32c1..) becomes the Zn fractals (k1 = q, n1 = 2c1) and
// (q, 2c1 + 1); one call per 32 keys walks c1.
__aicore__ inline void Int8DigitLoadValues(const AscendC::LocalTensor<int8_t> &l0b,
                                           const AscendC::LocalTensor<int8_t> &l1, uint32_t keys, uint32_t channels)
{
    for (uint16_t q = 0; q < keys / 32; ++q) {
        AscendC::LoadDataWithTranspose(l0b[q * (channels / 16) * INT8_FRACTAL_BYTES], l1,
                                       AscendC::LoadData2dTransposeParams(q, static_cast<uint8_t>(channels / 32),
                                                                          static_cast<uint16_t>(keys / 32), 1, 0));
    }
}

// C (m x n int32) = A (m x k, L0A) . B (k x n, L0B), s8 x s8 -> s32.
__aicore__ inline void Int8DigitMmad(const AscendC::LocalTensor<int32_t> &l0c, const AscendC::LocalTensor<int8_t> &l0a,
                                     const AscendC::LocalTensor<int8_t> &l0b, uint32_t m, uint32_t n, uint32_t k)
{
    AscendC::MmadParams mm;
    mm.m = static_cast<uint16_t>(m);
    mm.n = static_cast<uint16_t>(n);
    mm.k = static_cast<uint16_t>(k);
    AscendC::Mmad(l0c, l0a, l0b, mm);
}

// The m x n int32 result -> row-major GM rows n apart, unconverted (NoQuant).
__aicore__ inline void Int8DigitFixpipe(const AscendC::GlobalTensor<int32_t> &dst,
                                        const AscendC::LocalTensor<int32_t> &l0c, uint32_t m, uint32_t n)
{
    AscendC::FixpipeParamsV220 fix;
    fix.nSize = static_cast<uint16_t>(n);
    fix.mSize = static_cast<uint16_t>(m);
    fix.srcStride = static_cast<uint16_t>(m);
    fix.dstStride = n;
    AscendC::Fixpipe(dst, l0c, fix);
}

}  // namespace AttentionCore
