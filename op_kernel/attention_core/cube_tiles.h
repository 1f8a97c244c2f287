// L1 -> L0A/L0B tile loads shared by every cube stage (forward, backward, sparse backward).
// Operands live in L1 as Nz: fractal (c1, r1) of a (rows x cols) matrix sits at c1 * R1 + r1,
// where R1 is the number of 16-row fractals per column of fractals in that L1 buffer.
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

// Columns [kd1*16, (kd1 + k1)*16) of an Nz operand with m1 row fractals -> L0A Zz (the left
// operand A of Mmad): one row of fractals per LoadData.
template <typename T>
__aicore__ inline void LoadRowsToL0A(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &srcL1,
                                     uint32_t m1, uint32_t kd1, uint32_t k1)
{
    for (uint32_t i = 0; i < m1; ++i) {
        AscendC::LoadData(l0a[i * k1 * 256], srcL1[(kd1 * m1 + i) * 256],
                          AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1), static_cast<uint16_t>(m1), 0, 0,
                                                    false, 0));
    }
}

// A whole Nz operand (fractals in Nz order) -> L0A Zz of its transpose: the same fractal order
// with every 16x16 fractal transposed, one LoadData.
template <typename T>
__aicore__ inline void LoadTransposedToL0A(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &srcL1,
                                           uint32_t fractals)
{
    AscendC::LoadData(l0a, srcL1, AscendC::LoadData2DParams(0, static_cast<uint8_t>(fractals), 1, 0, 0, true, 0));
}

// Columns [kd1*16, (kd1 + k1)*16) of B (n1 row fractals used of srcRows1 per column in L1) ->
// L0B as the right operand of A.B^T: an Nz B already is Zn of B^T, so with srcRows1 == n1 the
// chunk is one contiguous run of fractals.
template <typename T>
__aicore__ inline void LoadTransposeOperandToL0B(const AscendC::LocalTensor<T> &l0b,
                                                 const AscendC::LocalTensor<T> &srcL1, uint32_t kd1, uint32_t k1,
                                                 uint32_t n1, uint32_t srcRows1)
{
    if (srcRows1 == n1) {
        AscendC::LoadData(l0b, srcL1[kd1 * n1 * 256],
                          AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1 * n1), 1, 0, 0, false, 0));
        return;
    }
    for (uint32_t kk = 0; kk < k1; ++kk) {
        AscendC::LoadData(l0b[kk * n1 * 256], srcL1[(kd1 + kk) * srcRows1 * 256],
                          AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), 1, 0, 0, false, 0));
    }
}

// Columns [dd1*16, (dd1 + dc1)*16) of B (rows1 row fractals used of srcRows1 per column in L1)
// -> L0B Zn of B (the right operand of A.B): each 16x16 fractal transposed on the way.
template <typename T>
__aicore__ inline void LoadColumnsToL0B(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &srcL1,
                                        uint32_t dd1, uint32_t dc1, uint32_t rows1, uint32_t srcRows1)
{
    for (uint32_t i = 0; i < rows1; ++i) {
        AscendC::LoadData(l0b[i * dc1 * 256], srcL1[(dd1 * srcRows1 + i) * 256],
                          AscendC::LoadData2DParams(0, static_cast<uint8_t>(dc1), static_cast<uint16_t>(srcRows1), 0,
                                                    0, true, 0));
    }
}

}  // namespace AttentionCore
