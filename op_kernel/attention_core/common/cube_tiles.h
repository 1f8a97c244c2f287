// Cube operand tiles shared by every cube stage (forward, backward, sparse backward): how a
// row-major GM matrix is staged in L1 and how the four operand shapes of the attention matmuls
// reach L0A/L0B. A fractal is 512 bytes: 16 rows of C0 = 32 / sizeof(T) columns.
//
// CubeTiles<T> per element width:
//   16-bit (half, bfloat16_t): L1 tiles are Nz (what Nd2Nz writes: fractal (c1, r1) at
//     c1 * R1 + r1, R1 = rowsPad / 16); LoadData transposes a 16x16 fractal on the way.
//   32-bit (float): LoadDataWithTranspose transposes a 16x16 square made of two 16x8 fractals
//     that sit side by side, so L1 tiles are Zz (fractal (r1, c1) at r1 * C1 + c1, C1 =
//     colsPad / 8: every 16-row group is a row of fractals), written by one Nd2Nz per 16-row
//     group (ndNum). Every k extent is counted in 16s (two fractals) and Mmad runs with
//     kDirectionAlign, so a transposed operand's k padding matches the plain one's.
//
// The operand loads (L0A is Zz, L0B holds B^T's fractals, see the emulator's mm.cpp):
//   LoadA  : A = tile columns [kOff, kOff + kLen) of every row (or of the rows [row0, row0 + rows),
//            row0 a multiple of 16)
//   LoadBt : B = X^T for the first `rows` rows of the tile X (they are n, columns
//            [kOff, kOff + kLen) are k)
//   LoadB  : B = columns [nOff, nOff + nLen) of the first `rows` rows of the tile (they are k)
//   LoadAt : A = X^T for the whole tile X (columns are m, rows are k)
// `rows` may be fewer than the tile's rowsPad (a tile sized for a full key block holding a
// shorter one).
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

// Padded extent of an L1 tile (both multiples of 16).
struct L1Shape {
    uint32_t rowsPad;
    uint32_t colsPad;
};

template <typename T, bool WIDE = (sizeof(T) == 4)> struct CubeTiles;

template <typename T> struct CubeTiles<T, false> {
    static constexpr uint32_t C0 = 16;
    static constexpr uint32_t FRAC = 256;  // elements per fractal

    // `rows` GM rows of `cols` elements, `pitch` elements apart -> tile rows [row0, row0 + rows).
    // Nd2Nz's source pitch (srcDValue) is 16-bit: wider pitches (N x D > 65535 in BSH/BSND/TND)
    // take one Nd2Nz per row.
    __aicore__ inline static void CopyRows(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                           uint32_t rows, uint32_t cols, uint64_t pitch, const L1Shape &shape,
                                           uint32_t row0)
    {
        if (pitch <= 65535) {
            AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows), static_cast<uint16_t>(cols), 0,
                                    static_cast<uint16_t>(pitch), static_cast<uint16_t>(shape.rowsPad), 1, 0);
            AscendC::DataCopy(dst[row0 * C0], src, nd);
            return;
        }
        for (uint32_t r = 0; r < rows; ++r) {
            AscendC::Nd2NzParams nd(1, 1, static_cast<uint16_t>(cols), 0, static_cast<uint16_t>(cols),
                                    static_cast<uint16_t>(shape.rowsPad), 1, 0);
            AscendC::DataCopy(dst[(row0 + r) * C0], src[r * pitch], nd);
        }
    }

    // Wide-row tiles (key blocks of G = keys / 16 contiguous rows of `cols` elements, keys a
    // multiple of 16): the block's keys x cols elements -> a tile of keys / 16 * cols / C0
    // fractals, one Nd2Nz of 16 rows of G * cols elements. An Nd2Nz is charged per source
    // row, so the block costs 16 row starts instead of `keys`. Row r of the copy holds keys
    // G r ... G r + G - 1, so fractal j * (cols / C0) + c holds keys G r + j (r = 0 ... 15) and
    // columns [C0 c, C0 c + C0): key group j is every G-th key from key j. A product that
    // takes K and V of a block from such tiles sees the block's keys in that order on both
    // sides (S's columns, P's columns, V's rows), so it is the same sum where nothing depends
    // on a key's column (no mask, band or short block).
    // `blocks` (1 or 2) consecutive blocks into tiles `tileElems` elements apart: one Nd2Nz
    // matrix per block, one DMA start.
    __aicore__ inline static void CopyWide(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                           uint32_t keys, uint32_t cols, uint32_t blocks = 1, uint32_t tileElems = 0)
    {
        const uint16_t row = static_cast<uint16_t>(keys / 16 * cols);
        AscendC::Nd2NzParams nd(static_cast<uint16_t>(blocks), 16, row, static_cast<uint16_t>(keys * cols), row, 16, 1,
                                static_cast<uint16_t>(tileElems));
        AscendC::DataCopy(dst, src, nd);
    }

    // LoadBt of a wide-row tile of `keys` keys and colsPad columns: B^T's fractal (kk, j) is the
    // tile's fractal j * C1 + kk, one column of fractals per LoadData (srcStride C1).
    __aicore__ inline static void LoadBtWide(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                             uint32_t keys, uint32_t colsPad, uint32_t kOff, uint32_t kLen)
    {
        const uint32_t n1 = keys / 16;
        const uint32_t c1 = colsPad / 16;
        const uint32_t k1 = (kLen + 15) / 16;
        for (uint32_t kk = 0; kk < k1; ++kk) {
            AscendC::LoadData(
                l0b[kk * n1 * FRAC], src[(kOff / 16 + kk) * FRAC],
                AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), static_cast<uint16_t>(c1), 0, 0, false, 0));
        }
    }

    // LoadB of a wide-row tile: key group j's fractals along the columns are contiguous, so
    // all columns are one LoadData, a column chunk one per key group.
    __aicore__ inline static void LoadBWide(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                            uint32_t keys, uint32_t colsPad, uint32_t nOff, uint32_t nLen)
    {
        const uint32_t k1 = keys / 16;
        const uint32_t c1 = colsPad / 16;
        const uint32_t n1 = (nLen + 15) / 16;
        if (nOff == 0 && n1 == c1 && k1 * c1 <= 255) {
            AscendC::LoadData(l0b, src, AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1 * c1), 1, 0, 0, true, 0));
            return;
        }
        for (uint32_t j = 0; j < k1; ++j) {
            AscendC::LoadData(l0b[j * n1 * FRAC], src[(j * c1 + nOff / 16) * FRAC],
                              AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), 1, 0, 0, true, 0));
        }
    }

    // One LoadData 3D v2: an Nz tile is an NC1HWC0 feature map of H = 1, W = rowsPad positions
    // and colsPad channels, and the image-to-column window of a 1 x 1 filter at stride 1 is the
    // tile itself, written to L0A in Zz; the window's positions [row0, ...) are the rows. One
    // MTE1 start instead of one per row of fractals.
    __aicore__ inline static void LoadA(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &src,
                                        const L1Shape &shape, uint32_t kOff, uint32_t kLen, uint32_t row0 = 0,
                                        uint32_t rows = 0)
    {
        const uint32_t mExt = rows == 0 ? shape.rowsPad - row0 : (rows + 15) / 16 * 16;
        const uint8_t pad[4] = {0, 0, 0, 0};
        AscendC::LoadData(l0a, src,
                          AscendC::LoadData3DParamsV2<T>(
                              pad, 1, static_cast<uint16_t>(shape.rowsPad), static_cast<uint16_t>(shape.colsPad),
                              static_cast<uint16_t>((kLen + 15) / 16 * 16), static_cast<uint16_t>(mExt),
                              static_cast<uint16_t>(kOff), static_cast<uint16_t>(row0), 1, 1, 1, 1, 1, 1, false, false,
                              static_cast<T>(0)));
    }

    // Element offset of row row0 (a multiple of 16) in an L0A operand LoadA wrote with kLen.
    __aicore__ inline static uint32_t ARow(uint32_t row0, uint32_t kLen)
    {
        return row0 / 16 * ((kLen + 15) / 16) * FRAC;
    }

    // An Nz X already is B^T's fractal order: with every row used, the column chunk is one
    // run of fractals; otherwise one column of fractals per LoadData.
    __aicore__ inline static void LoadBt(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                         const L1Shape &shape, uint32_t rows, uint32_t kOff, uint32_t kLen)
    {
        const uint32_t r1 = shape.rowsPad / 16;
        const uint32_t n1 = (rows + 15) / 16;
        const uint32_t k1 = (kLen + 15) / 16;
        if (n1 == r1) {
            AscendC::LoadData(l0b, src[kOff / 16 * r1 * FRAC],
                              AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1 * n1), 1, 0, 0, false, 0));
            return;
        }
        for (uint32_t kk = 0; kk < k1; ++kk) {
            AscendC::LoadData(l0b[kk * n1 * FRAC], src[(kOff / 16 + kk) * r1 * FRAC],
                              AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), 1, 0, 0, false, 0));
        }
    }

    // Every fractal transposed on the way, one row of k fractals per LoadData.
    __aicore__ inline static void LoadB(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                        const L1Shape &shape, uint32_t rows, uint32_t nOff, uint32_t nLen)
    {
        const uint32_t r1 = shape.rowsPad / 16;
        const uint32_t k1 = (rows + 15) / 16;
        const uint32_t n1 = (nLen + 15) / 16;
        for (uint32_t i = 0; i < k1; ++i) {
            AscendC::LoadData(
                l0b[i * n1 * FRAC], src[(nOff / 16 * r1 + i) * FRAC],
                AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), static_cast<uint16_t>(r1), 0, 0, true, 0));
        }
    }

    // LoadB in as few LoadData as it takes: per row of fractals (srcStride r1), or, when every
    // row of the tile is read and the column chunk has fewer fractal columns than rows, per
    // column of fractals (k1 fractals in a row in the source, dstGap n1 - 1).
    __aicore__ inline static void LoadBFew(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                           const L1Shape &shape, uint32_t rows, uint32_t nOff, uint32_t nLen)
    {
        const uint32_t r1 = shape.rowsPad / 16;
        const uint32_t k1 = (rows + 15) / 16;
        const uint32_t n1 = (nLen + 15) / 16;
        if (n1 >= k1 || k1 != r1) {
            LoadB(l0b, src, shape, rows, nOff, nLen);
            return;
        }
        for (uint32_t j = 0; j < n1; ++j) {
            AscendC::LoadData(
                l0b[j * FRAC], src[(nOff / 16 + j) * r1 * FRAC],
                AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1), 1, 0, static_cast<uint16_t>(n1 - 1), true, 0));
        }
    }

    // X^T in Zz is X's Nz fractal order with every fractal transposed: one LoadData.
    __aicore__ inline static void LoadAt(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &src,
                                         const L1Shape &shape)
    {
        const uint32_t fractals = shape.rowsPad / 16 * (shape.colsPad / 16);
        AscendC::LoadData(l0a, src, AscendC::LoadData2DParams(0, static_cast<uint8_t>(fractals), 1, 0, 0, true, 0));
    }

    __aicore__ inline static AscendC::MmadParams Mmad(uint32_t m, uint32_t n, uint32_t k, bool init)
    {
        return AscendC::MmadParams(static_cast<uint16_t>(m), static_cast<uint16_t>(n), static_cast<uint16_t>(k), 0,
                                   false, init);
    }
};

template <typename T> struct CubeTiles<T, true> {
    static constexpr uint32_t C0 = 8;
    static constexpr uint32_t FRAC = 128;  // elements per fractal

    // Rows of a 16-row group land in one Nd2Nz matrix (ndNum groups per call); a copy that
    // starts inside a group, or whose group stride does not fit Nd2Nz's 16-bit fields, goes
    // row by row.
    __aicore__ inline static void CopyRows(const AscendC::LocalTensor<T> &dst, const AscendC::GlobalTensor<T> &src,
                                           uint32_t rows, uint32_t cols, uint64_t pitch, const L1Shape &shape,
                                           uint32_t row0)
    {
        const uint32_t group = shape.colsPad / C0 * FRAC;  // elements per 16-row group
        uint32_t r = 0;
        if (row0 % 16 == 0 && 16 * pitch <= 65535) {
            const uint32_t full = rows / 16;
            if (full > 0) {
                AscendC::Nd2NzParams nd(static_cast<uint16_t>(full), 16, static_cast<uint16_t>(cols),
                                        static_cast<uint16_t>(16 * pitch), static_cast<uint16_t>(pitch), 16, 1,
                                        static_cast<uint16_t>(group));
                AscendC::DataCopy(dst[row0 / 16 * group], src, nd);
            }
            r = full * 16;
            if (r < rows) {
                AscendC::Nd2NzParams nd(1, static_cast<uint16_t>(rows - r), static_cast<uint16_t>(cols), 0,
                                        static_cast<uint16_t>(pitch), 16, 1, 0);
                AscendC::DataCopy(dst[(row0 + r) / 16 * group], src[r * pitch], nd);
                r = rows;
            }
        }
        for (; r < rows; ++r) {
            const uint32_t row = row0 + r;
            AscendC::Nd2NzParams nd(1, 1, static_cast<uint16_t>(cols), 0, static_cast<uint16_t>(cols), 16, 1, 0);
            AscendC::DataCopy(dst[row / 16 * group + row % 16 * C0], src[r * pitch], nd);
        }
    }

    // One row of fractals per LoadData (they are contiguous in a Zz tile).
    __aicore__ inline static void LoadA(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &src,
                                        const L1Shape &shape, uint32_t kOff, uint32_t kLen, uint32_t row0 = 0,
                                        uint32_t rows = 0)
    {
        const uint32_t m1 = shape.rowsPad / 16;
        const uint32_t c1 = shape.colsPad / C0;
        const uint32_t k1 = (kLen + 15) / 16 * 2;
        const uint32_t i0 = row0 / 16;
        const uint32_t i1 = rows == 0 ? m1 : i0 + (rows + 15) / 16;
        for (uint32_t i = i0; i < i1; ++i) {
            AscendC::LoadData(l0a[(i - i0) * k1 * FRAC], src[(i * c1 + kOff / C0) * FRAC],
                              AscendC::LoadData2DParams(0, static_cast<uint8_t>(k1), 1, 0, 0, false, 0));
        }
    }

    // Element offset of row row0 (a multiple of 16) in an L0A operand LoadA wrote with kLen.
    __aicore__ inline static uint32_t ARow(uint32_t row0, uint32_t kLen)
    {
        return row0 / 16 * ((kLen + 15) / 16 * 2) * FRAC;
    }

    // B^T's fractal (k1, n1) is X's fractal (n1, k1): one column of fractals per LoadData.
    __aicore__ inline static void LoadBt(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                         const L1Shape &shape, uint32_t rows, uint32_t kOff, uint32_t kLen)
    {
        const uint32_t n1 = (rows + 15) / 16;
        const uint32_t c1 = shape.colsPad / C0;
        const uint32_t k1 = (kLen + 15) / 16 * 2;
        for (uint32_t kk = 0; kk < k1; ++kk) {
            AscendC::LoadData(
                l0b[kk * n1 * FRAC], src[(kOff / C0 + kk) * FRAC],
                AscendC::LoadData2DParams(0, static_cast<uint8_t>(n1), static_cast<uint16_t>(c1), 0, 0, false, 0));
        }
    }

    // Per 16-row group (k fractals 2 r1 and 2 r1 + 1): its squares along the chunk, transposed;
    // a square's two halves are one row of n fractals apart.
    __aicore__ inline static void LoadB(const AscendC::LocalTensor<T> &l0b, const AscendC::LocalTensor<T> &src,
                                        const L1Shape &shape, uint32_t rows, uint32_t nOff, uint32_t nLen)
    {
        const uint32_t groups = (rows + 15) / 16;
        const uint32_t c1 = shape.colsPad / C0;
        const uint32_t n1 = (nLen + 15) / 16;
        for (uint32_t r1 = 0; r1 < groups; ++r1) {
            AscendC::LoadDataWithTranspose(
                l0b[2 * r1 * n1 * FRAC], src[(r1 * c1 + nOff / C0) * FRAC],
                AscendC::LoadData2dTransposeParams(0, static_cast<uint8_t>(n1), 1, 0, static_cast<uint16_t>(n1 - 1)));
        }
    }

    // Per 16-row group of X (k fractals 2 r1, 2 r1 + 1 of every m row): its squares transposed,
    // one row of k fractals apart.
    __aicore__ inline static void LoadAt(const AscendC::LocalTensor<T> &l0a, const AscendC::LocalTensor<T> &src,
                                         const L1Shape &shape)
    {
        const uint32_t groups = shape.rowsPad / 16;
        const uint32_t c1 = shape.colsPad / C0;
        const uint32_t k1 = 2 * groups;
        for (uint32_t r1 = 0; r1 < groups; ++r1) {
            AscendC::LoadDataWithTranspose(l0a[2 * r1 * FRAC], src[r1 * c1 * FRAC],
                                           AscendC::LoadData2dTransposeParams(0, static_cast<uint8_t>(c1 / 2), 1,
                                                                              static_cast<uint16_t>(k1 - 1), 0));
        }
    }

    // fp32 operands in fp32 (HF32 off, the default mode): docs/golden.md has the precision.
    __aicore__ inline static AscendC::MmadParams Mmad(uint32_t m, uint32_t n, uint32_t k, bool init)
    {
        AscendC::MmadParams p(static_cast<uint16_t>(m), static_cast<uint16_t>(n), static_cast<uint16_t>(k), 0, false,
                              init);
        p.kDirectionAlign = true;
        return p;
    }
};

}  // namespace AttentionCore
