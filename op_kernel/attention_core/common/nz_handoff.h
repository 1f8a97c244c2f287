// A 16-bit matrix the vector cores hand to the cube through a GM slot (P; the backward's P and
// dS; K/V staged by kv_nz.h) in the cube's Nz order: column blocks of 16 elements, `slotRows`
// rows each. The cube then stages it in L1 with one plain copy instead of an Nd2Nz that
// converts every row on the way (a cost per converted row, docs/performance.md "Calibration");
// the vector cores pay one Copy per row (a 32-byte block stride) in UB. 32-bit hand-offs keep
// their Nd2Nz (CubeTiles<float> stages Zz tiles).
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

template <typename T> struct NzHandoff {
    static constexpr bool ENABLED = sizeof(T) == 2;
    static constexpr uint32_t C0 = 16;      // elements per 32-byte block
    static constexpr uint32_t LANES = 128;  // 16-bit elements per Copy repeat (8 blocks)

    // rows x cols in UB (row pitch `pitch`, default cols; both multiples of 16) -> nz: column
    // block j holds the rows' elements [16 j, 16 j + 16), `rows` rows apart. One Copy per LANES
    // columns, one repeat per row (rows <= 255).
    __aicore__ inline static void Arrange(const AscendC::LocalTensor<T> &nz, const AscendC::LocalTensor<T> &nd,
                                          uint32_t rows, uint32_t cols, uint32_t pitch = 0)
    {
        const AscendC::LocalTensor<uint16_t> dst = nz.template ReinterpretCast<uint16_t>();
        const AscendC::LocalTensor<uint16_t> src = nd.template ReinterpretCast<uint16_t>();
        const uint16_t srcRepeat = static_cast<uint16_t>((pitch == 0 ? cols : pitch) / C0);
        for (uint32_t k0 = 0; k0 < cols; k0 += LANES) {
            const uint32_t lanes = cols - k0 < LANES ? cols - k0 : LANES;
            AscendC::Copy(dst[k0 * rows], src[k0], lanes, static_cast<uint8_t>(rows),
                          AscendC::CopyRepeatParams(static_cast<uint16_t>(rows), 1, 1, srcRepeat));
        }
    }

    // rows x cols floats in UB (row-major, cols a multiple of 64) -> T in the layout Arrange
    // produces, rounded as CastFromFloat: the cast's destination block stride puts a row's
    // 16-column blocks `rows` blocks apart, so the cast itself arranges (no Copy pass). One
    // Cast per 64 columns, one repeat per row (rows <= 255). Rows before `skip` are left out.
    __aicore__ inline static void CastArranged(const AscendC::LocalTensor<T> &nz,
                                               const AscendC::LocalTensor<float> &src, uint32_t rows, uint32_t cols,
                                               uint32_t skip = 0)
    {
        for (uint32_t k0 = 0; k0 < cols; k0 += 64) {
            AscendC::Cast(
                nz[k0 * rows + skip * C0], src[skip * cols + k0], AscendC::RoundMode::CAST_RINT, 64,
                static_cast<uint8_t>(rows - skip),
                AscendC::UnaryRepeatParams(static_cast<uint16_t>(rows), 1, 1, static_cast<uint8_t>(cols / 8)));
        }
    }
    // Arranged rows but the first `skip` -> rows [row0 + skip, row0 + rows) of the slot
    // (slotRows rows per column block).
    __aicore__ inline static void Store(const AscendC::GlobalTensor<T> &slot, const AscendC::LocalTensor<T> &nz,
                                        uint32_t row0, uint32_t rows, uint32_t cols, uint32_t slotRows,
                                        uint32_t skip = 0)
    {
        StoreRows(slot, nz, row0, rows, cols, slotRows, skip, rows);
    }
    // Arranged rows [first, last) of `rows` -> rows [row0 + first, row0 + last) of the slot, their
    // first `cols` columns (a staircase stores each piece with the columns its rows see).
    __aicore__ inline static void StoreRows(const AscendC::GlobalTensor<T> &slot, const AscendC::LocalTensor<T> &nz,
                                            uint32_t row0, uint32_t rows, uint32_t cols, uint32_t slotRows,
                                            uint32_t first, uint32_t last)
    {
        const uint32_t n = last - first;
        AscendC::DataCopy(slot[(row0 + first) * C0], nz[first * C0],
                          AscendC::DataCopyParams(static_cast<uint16_t>(cols / C0), static_cast<uint16_t>(n),
                                                  static_cast<uint16_t>(rows - n),
                                                  static_cast<uint16_t>(slotRows - n)));
    }

    // The slot's rows [row0, rows) (rows 0: rowsPad) of its first colsPad columns -> the same
    // rows of an Nz L1 tile of rowsPad rows. The padding rows past `rows` only reach output rows
    // nobody reads and the slot never held them (a decode unit of 8 rows would load twice its bytes).
    __aicore__ inline static void Load(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &slot,
                                       uint32_t rowsPad, uint32_t colsPad, uint32_t slotRows, uint32_t row0 = 0,
                                       uint32_t rows = 0)
    {
        const uint32_t n = (rows == 0 ? rowsPad : rows) - row0;
        AscendC::DataCopy(dst[row0 * C0], slot[row0 * C0],
                          AscendC::DataCopyParams(static_cast<uint16_t>(colsPad / C0), static_cast<uint16_t>(n),
                                                  static_cast<uint16_t>(slotRows - n),
                                                  static_cast<uint16_t>(rowsPad - n)));
    }
};

}  // namespace AttentionCore
