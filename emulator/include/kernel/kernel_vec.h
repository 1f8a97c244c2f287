// Vector API surface (asc-devkit `include/basic_api/kernel_operator_vec_*_intf.h`): level-0 (mask + repeatTime + repeat params) and
// level-2 (count) forms. Each call forwards one instruction to the engine in vec_*.cpp.
#pragma once
#include "emu/vec.h"
#include "kernel/kernel_data_copy.h"

namespace AscendC {

struct BinaryRepeatParams {
    BinaryRepeatParams() {}
    BinaryRepeatParams(const uint8_t dstBlkStrideIn, const uint8_t src0BlkStrideIn, const uint8_t src1BlkStrideIn,
                       const uint8_t dstRepStrideIn, const uint8_t src0RepStrideIn, const uint8_t src1RepStrideIn)
        : dstBlkStride(dstBlkStrideIn),
          src0BlkStride(src0BlkStrideIn),
          src1BlkStride(src1BlkStrideIn),
          dstRepStride(dstRepStrideIn),
          src0RepStride(src0RepStrideIn),
          src1RepStride(src1RepStrideIn)
    {
    }
    uint32_t blockNumber = 8;
    uint8_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct UnaryRepeatParams {
    UnaryRepeatParams() {}
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn)
        : dstBlkStride(dstBlkStrideIn),
          srcBlkStride(srcBlkStrideIn),
          dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn)
    {
    }
    UnaryRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t srcBlkStrideIn, const uint8_t dstRepStrideIn,
                      const uint8_t srcRepStrideIn, const bool halfBlockIn)
        : dstBlkStride(dstBlkStrideIn),
          srcBlkStride(srcBlkStrideIn),
          dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn),
          halfBlock(halfBlockIn)
    {
    }
    uint32_t blockNumber = 8;
    uint16_t dstBlkStride = 1;
    uint16_t srcBlkStride = 1;
    uint8_t dstRepStride = 8;
    uint8_t srcRepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
    bool halfBlock = false;
};

struct BrcbRepeatParams {
    BrcbRepeatParams() {}
    BrcbRepeatParams(const uint16_t dstBlkStrideIn, const uint16_t dstRepStrideIn)
        : dstRepStride(dstRepStrideIn), dstBlkStride(dstBlkStrideIn)
    {
    }
    uint32_t blockNumber = 8;
    uint16_t dstRepStride = 8;
    uint16_t dstBlkStride = 1;
    uint8_t src0BlkStride = 1;
    uint8_t src1BlkStride = 1;
    uint8_t src0RepStride = 8;
    uint8_t src1RepStride = 8;
    bool repeatStrideMode = false;
    bool strideSizeMode = false;
};

struct DivConfig {};
constexpr DivConfig DEFAULT_DIV_CONFIG = {};

// Mask register.
// Writes the mask register; the mode itself only changes with SetMaskCount/SetMaskNorm.
template <typename T, MaskMode mode = MaskMode::NORMAL>
void SetVectorMask(const uint64_t maskHigh, const uint64_t maskLow)
{
    emu::SetMaskBits(maskHigh, maskLow);
}
template <typename T, MaskMode mode = MaskMode::NORMAL> void SetVectorMask(int32_t len)
{
    if (emu::Ctx().maskCounterMode)
        emu::SetMaskBits(0, static_cast<uint64_t>(len));
    else
        emu::SetMaskContinuous(static_cast<uint64_t>(len), sizeof(T));
}
inline void SetMaskCount() { emu::Ctx().maskCounterMode = true; }
inline void SetMaskNorm() { emu::Ctx().maskCounterMode = false; }
inline void ResetMask() { emu::SetMaskBits(~0ull, ~0ull); }

namespace detail {
inline emu::VGeom Geom(uint8_t repeat, const BinaryRepeatParams &p)
{
    emu::VGeom g;
    g.repeat = repeat;
    g.blk[0] = p.dstBlkStride;
    g.blk[1] = p.src0BlkStride;
    g.blk[2] = p.src1BlkStride;
    g.rep[0] = p.dstRepStride;
    g.rep[1] = p.src0RepStride;
    g.rep[2] = p.src1RepStride;
    return g;
}
inline emu::VGeom Geom(uint8_t repeat, const UnaryRepeatParams &p)
{
    emu::VGeom g;
    g.repeat = repeat;
    g.blk[0] = p.dstBlkStride;
    g.blk[1] = p.srcBlkStride;
    g.rep[0] = p.dstRepStride;
    g.rep[1] = p.srcRepStride;
    return g;
}
template <typename T, bool isSetMask> void Mask(uint64_t mask)
{
    if (isSetMask) emu::SetMaskContinuous(mask, sizeof(T));
}
template <typename T, bool isSetMask> void Mask(const uint64_t mask[])
{
    if (isSetMask) emu::SetMaskBits(mask[1], sizeof(T) == 4 ? mask[0] : mask[0]);
}
// Level-2 geometry for `count` elements of the widest operand: contiguous repeats.
// Default strides of a contiguous level-2 call (element sizes in bytes, or both in bits).
inline emu::VGeom CountGeom(int dstBytes, int srcBytes)
{
    emu::VGeom g;
    const int wide = dstBytes > srcBytes ? dstBytes : srcBytes;
    g.rep[0] = 8 * dstBytes / wide;
    g.rep[1] = g.rep[2] = 8 * srcBytes / wide;
    return g;
}
}  // namespace detail

#define EMU_VEC_BINARY(NAME)                                                                                           \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, uint64_t mask[],      \
              const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)                                        \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecBinary(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),               \
                       detail::Geom(repeatTime, repeatParams));                                                        \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, uint64_t mask,        \
              const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)                                        \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecBinary(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),               \
                       detail::Geom(repeatTime, repeatParams));                                                        \
    }                                                                                                                  \
    template <typename T>                                                                                              \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, const int32_t &count) \
    {                                                                                                                  \
        if (count <= 0) return;                                                                                        \
        emu::BeginCount(static_cast<uint64_t>(count));                                                                 \
        emu::VecBinary(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),               \
                       detail::CountGeom(sizeof(T), sizeof(T)));                                                       \
        emu::EndCount();                                                                                               \
    }
EMU_VEC_BINARY(Add)
EMU_VEC_BINARY(Sub)
EMU_VEC_BINARY(Mul)
EMU_VEC_BINARY(Max)
EMU_VEC_BINARY(Min)
EMU_VEC_BINARY(And)
EMU_VEC_BINARY(Or)
#undef EMU_VEC_BINARY

template <typename T, bool isSetMask = true, const DivConfig &config = DEFAULT_DIV_CONFIG>
void Div(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, uint64_t mask[],
         const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecBinary("Div", emu::VOp::Div, emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                   detail::Geom(repeatTime, repeatParams));
}
template <typename T, bool isSetMask = true, const DivConfig &config = DEFAULT_DIV_CONFIG>
void Div(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, uint64_t mask,
         const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecBinary("Div", emu::VOp::Div, emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                   detail::Geom(repeatTime, repeatParams));
}
template <typename T, const DivConfig &config = DEFAULT_DIV_CONFIG>
void Div(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, const int32_t &count)
{
    if (count <= 0) return;
    emu::BeginCount(static_cast<uint64_t>(count));
    emu::VecBinary("Div", emu::VOp::Div, emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                   detail::CountGeom(sizeof(T), sizeof(T)));
    emu::EndCount();
}

// dst = src0 * src1 + dst (kernel_operator_vec_binary_intf.h).
template <typename T, typename U, bool isSetMask = true>
void MulAddDst(const LocalTensor<T> &dst, const LocalTensor<U> &src0, const LocalTensor<U> &src1, const uint64_t mask[],
               const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecMulAddDst("MulAddDst", emu::DT<T>, emu::DT<U>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                      detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void MulAddDst(const LocalTensor<T> &dst, const LocalTensor<U> &src0, const LocalTensor<U> &src1, uint64_t mask,
               const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecMulAddDst("MulAddDst", emu::DT<T>, emu::DT<U>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                      detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U>
void MulAddDst(const LocalTensor<T> &dst, const LocalTensor<U> &src0, const LocalTensor<U> &src1, const int32_t &count)
{
    if (count <= 0) return;
    emu::BeginCount(static_cast<uint64_t>(count));
    emu::VecMulAddDst("MulAddDst", emu::DT<T>, emu::DT<U>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                      detail::CountGeom(sizeof(T), sizeof(U)));
    emu::EndCount();
}

// dst = src0 * dst + src1, half or float (kernel_operator_vec_binary_intf.h, vmadd).
template <typename T, bool isSetMask = true>
void FusedMulAdd(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, uint64_t mask[],
                 const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecFusedMulAdd("FusedMulAdd", emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                        detail::Geom(repeatTime, repeatParams));
}
template <typename T, bool isSetMask = true>
void FusedMulAdd(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, uint64_t mask,
                 const uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecFusedMulAdd("FusedMulAdd", emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                        detail::Geom(repeatTime, repeatParams));
}
template <typename T>
void FusedMulAdd(const LocalTensor<T> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1,
                 const int32_t &count)
{
    if (count <= 0) return;
    emu::BeginCount(static_cast<uint64_t>(count));
    emu::VecFusedMulAdd("FusedMulAdd", emu::DT<T>, emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                        detail::CountGeom(sizeof(T), sizeof(T)));
    emu::EndCount();
}

#define EMU_VEC_SCALAR(NAME)                                                                                           \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, uint64_t mask[],             \
              const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)                                         \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecScalar(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                \
                       static_cast<double>(scalarValue), detail::Geom(repeatTime, repeatParams));                      \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, uint64_t mask,               \
              const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)                                         \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecScalar(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                \
                       static_cast<double>(scalarValue), detail::Geom(repeatTime, repeatParams));                      \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, const int32_t &count)        \
    {                                                                                                                  \
        if (count <= 0) return;                                                                                        \
        emu::BeginCount(static_cast<uint64_t>(count));                                                                 \
        emu::VecScalar(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                \
                       static_cast<double>(scalarValue), detail::CountGeom(sizeof(T), sizeof(T)));                     \
        emu::EndCount();                                                                                               \
    }
EMU_VEC_SCALAR(Adds)
EMU_VEC_SCALAR(Muls)
EMU_VEC_SCALAR(Maxs)
EMU_VEC_SCALAR(Mins)
#undef EMU_VEC_SCALAR

// ShiftLeft / ShiftRight (kernel_operator_vec_binary_scalar_intf.h): the level-0 forms of
// ShiftRight take `roundEn` (int16_t / int32_t: add the last bit shifted out).
#define EMU_VEC_SHIFT(NAME, ROUND_PARAM, ROUND)                                                                        \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, uint64_t mask[],             \
              const uint8_t repeatTime, const UnaryRepeatParams &repeatParams ROUND_PARAM)                             \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecShift(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                 \
                      static_cast<int64_t>(scalarValue), ROUND, detail::Geom(repeatTime, repeatParams));               \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, uint64_t mask,               \
              const uint8_t repeatTime, const UnaryRepeatParams &repeatParams ROUND_PARAM)                             \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecShift(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                 \
                      static_cast<int64_t>(scalarValue), ROUND, detail::Geom(repeatTime, repeatParams));               \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const T &scalarValue, const int32_t &count)        \
    {                                                                                                                  \
        if (count <= 0) return;                                                                                        \
        emu::BeginCount(static_cast<uint64_t>(count));                                                                 \
        emu::VecShift(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                 \
                      static_cast<int64_t>(scalarValue), false, detail::CountGeom(sizeof(T), sizeof(T)));              \
        emu::EndCount();                                                                                               \
    }
#define EMU_COMMA ,
EMU_VEC_SHIFT(ShiftLeft, , false)
EMU_VEC_SHIFT(ShiftRight, EMU_COMMA bool roundEn = false, roundEn)
#undef EMU_COMMA
#undef EMU_VEC_SHIFT

// Axpy: dst = src * scalar + dst (same element type for dst and src on this emulator).
template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U scalarValue, uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    static_assert(sizeof(T) == sizeof(U), "Axpy with mixed precision is not implemented by the emulator");
    detail::Mask<T, isSetMask>(mask);
    emu::VecScalar("Axpy", emu::VOp::Axpy, emu::DT<T>, emu::Ref(dst), emu::Ref(src), static_cast<double>(scalarValue),
                   detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U scalarValue, uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    static_assert(sizeof(T) == sizeof(U), "Axpy with mixed precision is not implemented by the emulator");
    detail::Mask<T, isSetMask>(mask);
    emu::VecScalar("Axpy", emu::VOp::Axpy, emu::DT<T>, emu::Ref(dst), emu::Ref(src), static_cast<double>(scalarValue),
                   detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U>
void Axpy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const U scalarValue, const int32_t &count)
{
    static_assert(sizeof(T) == sizeof(U), "Axpy with mixed precision is not implemented by the emulator");
    if (count <= 0) return;
    emu::BeginCount(static_cast<uint64_t>(count));
    emu::VecScalar("Axpy", emu::VOp::Axpy, emu::DT<T>, emu::Ref(dst), emu::Ref(src), static_cast<double>(scalarValue),
                   detail::CountGeom(sizeof(T), sizeof(T)));
    emu::EndCount();
}

#define EMU_VEC_UNARY(NAME)                                                                                            \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, uint64_t mask[], const uint8_t repeatTime,         \
              const UnaryRepeatParams &repeatParams)                                                                   \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecUnary(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                 \
                      detail::Geom(repeatTime, repeatParams));                                                         \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, uint64_t mask, const uint8_t repeatTime,           \
              const UnaryRepeatParams &repeatParams)                                                                   \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecUnary(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                 \
                      detail::Geom(repeatTime, repeatParams));                                                         \
    }                                                                                                                  \
    template <typename T> void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t &count)        \
    {                                                                                                                  \
        if (count <= 0) return;                                                                                        \
        emu::BeginCount(static_cast<uint64_t>(count));                                                                 \
        emu::VecUnary(#NAME, emu::VOp::NAME, emu::DT<T>, emu::Ref(dst), emu::Ref(src),                                 \
                      detail::CountGeom(sizeof(T), sizeof(T)));                                                        \
        emu::EndCount();                                                                                               \
    }
EMU_VEC_UNARY(Exp)
EMU_VEC_UNARY(Ln)
EMU_VEC_UNARY(Abs)
EMU_VEC_UNARY(Sqrt)
EMU_VEC_UNARY(Reciprocal)
EMU_VEC_UNARY(Rsqrt)
EMU_VEC_UNARY(Relu)
EMU_VEC_UNARY(Not)
#undef EMU_VEC_UNARY

// Duplicate: the level-0 form takes the two dst strides as scalars.
template <typename T, bool isSetMask = true>
void Duplicate(const LocalTensor<T> &dst, const T &scalarValue, uint64_t mask, const uint8_t repeatTime,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VGeom g;
    g.repeat = repeatTime;
    g.blk[0] = dstBlockStride;
    g.rep[0] = dstRepeatStride;
    emu::VecDup("Duplicate", emu::DT<T>, emu::Ref(dst), static_cast<double>(scalarValue), g);
}
template <typename T, bool isSetMask = true>
void Duplicate(const LocalTensor<T> &dst, const T &scalarValue, uint64_t mask[], const uint8_t repeatTime,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride)
{
    detail::Mask<T, isSetMask>(static_cast<const uint64_t *>(mask));
    emu::VGeom g;
    g.repeat = repeatTime;
    g.blk[0] = dstBlockStride;
    g.rep[0] = dstRepeatStride;
    emu::VecDup("Duplicate", emu::DT<T>, emu::Ref(dst), static_cast<double>(scalarValue), g);
}
template <typename T> void Duplicate(const LocalTensor<T> &dst, const T &scalarValue, const int32_t &count)
{
    if (count <= 0) return;
    emu::BeginCount(static_cast<uint64_t>(count));
    emu::VecDup("Duplicate", emu::DT<T>, emu::Ref(dst), static_cast<double>(scalarValue),
                detail::CountGeom(sizeof(T), sizeof(T)));
    emu::EndCount();
}

// Cast.
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T> &dst, const LocalTensor<U> &src, const RoundMode &roundMode, const uint64_t mask[],
          const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    if (isSetMask) emu::SetMaskBits(mask[1], mask[0]);
    emu::VecCast("Cast", emu::DT<T>, emu::DT<U>, static_cast<int>(roundMode), emu::Ref(dst), emu::Ref(src),
                 detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Cast(const LocalTensor<T> &dst, const LocalTensor<U> &src, const RoundMode &roundMode, const uint64_t mask,
          const uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    if (isSetMask) emu::SetMaskContinuous(mask, sizeof(T) > sizeof(U) ? sizeof(T) : sizeof(U));
    emu::VecCast("Cast", emu::DT<T>, emu::DT<U>, static_cast<int>(roundMode), emu::Ref(dst), emu::Ref(src),
                 detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U>
void Cast(const LocalTensor<T> &dst, const LocalTensor<U> &src, const RoundMode &roundMode, const uint32_t count)
{
    if (count == 0) return;
    emu::BeginCount(count);
    emu::VecCast("Cast", emu::DT<T>, emu::DT<U>, static_cast<int>(roundMode), emu::Ref(dst), emu::Ref(src),
                 detail::CountGeom(SizeOfBits<T>::value, SizeOfBits<U>::value));  // int4b_t: half a byte
    emu::EndCount();
}

// Compare / Compares / CompareScalar. On A2 the mask is reserved: all lanes compare.
template <typename T, typename U, bool isSetMask = true>
void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, CMPMODE cmpMode,
             const uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    (void)mask;
    emu::VecCompare("Compare", emu::DT<T>, static_cast<int>(cmpMode), emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                    false, 0, detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, CMPMODE cmpMode,
             const uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    (void)mask;
    emu::VecCompare("Compare", emu::DT<T>, static_cast<int>(cmpMode), emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                    false, 0, detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U>
void Compare(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const LocalTensor<T> &src1, CMPMODE cmpMode,
             uint32_t count)
{
    if (count * sizeof(T) % 256 != 0)
        emu::Fail("Compare", "count %u x %zu bytes is not a multiple of 256 bytes", count, sizeof(T));
    emu::VGeom g;
    g.repeat = count * sizeof(T) / 256;
    emu::VecCompare("Compare", emu::DT<T>, static_cast<int>(cmpMode), emu::Ref(dst), emu::Ref(src0), emu::Ref(src1),
                    false, 0, g);
}
template <typename T, typename U, bool isSetMask = true>
void Compares(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar, CMPMODE cmpMode,
              const uint64_t mask[], uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    (void)mask;
    emu::VecCompare("Compares", emu::DT<T>, static_cast<int>(cmpMode), emu::Ref(dst), emu::Ref(src0), emu::Ref(src0),
                    true, static_cast<double>(src1Scalar), detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Compares(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar, CMPMODE cmpMode,
              const uint64_t mask, uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    (void)mask;
    emu::VecCompare("Compares", emu::DT<T>, static_cast<int>(cmpMode), emu::Ref(dst), emu::Ref(src0), emu::Ref(src0),
                    true, static_cast<double>(src1Scalar), detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U>
void Compares(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar, CMPMODE cmpMode,
              uint32_t count)
{
    if (count * sizeof(T) % 256 != 0)
        emu::Fail("Compares", "count %u x %zu bytes is not a multiple of 256 bytes", count, sizeof(T));
    emu::VGeom g;
    g.repeat = count * sizeof(T) / 256;
    emu::VecCompare("Compares", emu::DT<T>, static_cast<int>(cmpMode), emu::Ref(dst), emu::Ref(src0), emu::Ref(src0),
                    true, static_cast<double>(src1Scalar), g);
}
template <typename T, typename U, bool isSetMask = true, typename M>
void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar, CMPMODE cmpMode, M mask,
                   uint8_t repeatTime, const UnaryRepeatParams &repeatParams)
{
    Compares<T, U, isSetMask>(dst, src0, src1Scalar, cmpMode, mask, repeatTime, repeatParams);
}
template <typename T, typename U>
void CompareScalar(const LocalTensor<U> &dst, const LocalTensor<T> &src0, const T src1Scalar, CMPMODE cmpMode,
                   uint32_t count)
{
    Compares<T, U>(dst, src0, src1Scalar, cmpMode, count);
}

// Select.
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
            const LocalTensor<T> &src1, SELMODE selMode, uint64_t mask, uint8_t repeatTime,
            const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecSelect("Select", emu::DT<T>, static_cast<int>(selMode), emu::Ref(dst), emu::Ref(selMask), emu::Ref(src0),
                   emu::Ref(src1), false, 0, detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
            const LocalTensor<T> &src1, SELMODE selMode, uint64_t mask[], uint8_t repeatTime,
            const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecSelect("Select", emu::DT<T>, static_cast<int>(selMode), emu::Ref(dst), emu::Ref(selMask), emu::Ref(src0),
                   emu::Ref(src1), false, 0, detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0, T src1,
            SELMODE selMode, uint64_t mask, uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecSelect("Select", emu::DT<T>, static_cast<int>(selMode), emu::Ref(dst), emu::Ref(selMask), emu::Ref(src0),
                   emu::Ref(src0), true, static_cast<double>(src1), detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U, bool isSetMask = true>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0, T src1,
            SELMODE selMode, uint64_t mask[], uint8_t repeatTime, const BinaryRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecSelect("Select", emu::DT<T>, static_cast<int>(selMode), emu::Ref(dst), emu::Ref(selMask), emu::Ref(src0),
                   emu::Ref(src0), true, static_cast<double>(src1), detail::Geom(repeatTime, repeatParams));
}
template <typename T, typename U>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0,
            const LocalTensor<T> &src1, SELMODE selMode, uint32_t count)
{
    if (count == 0) return;
    emu::BeginCount(count);
    emu::VecSelect("Select", emu::DT<T>, static_cast<int>(selMode), emu::Ref(dst), emu::Ref(selMask), emu::Ref(src0),
                   emu::Ref(src1), false, 0, detail::CountGeom(sizeof(T), sizeof(T)));
    emu::EndCount();
}
template <typename T, typename U>
void Select(const LocalTensor<T> &dst, const LocalTensor<U> &selMask, const LocalTensor<T> &src0, T src1,
            SELMODE selMode, uint32_t count)
{
    if (count == 0) return;
    emu::BeginCount(count);
    emu::VecSelect("Select", emu::DT<T>, static_cast<int>(selMode), emu::Ref(dst), emu::Ref(selMask), emu::Ref(src0),
                   emu::Ref(src0), true, static_cast<double>(src1), detail::CountGeom(sizeof(T), sizeof(T)));
    emu::EndCount();
}

// Reductions.
#define EMU_WHOLE_REDUCE_MAXMIN(NAME, KIND)                                                                            \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t mask, const int32_t repeatTime,      \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                      \
              ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)                                                      \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(static_cast<uint64_t>(mask));                                                       \
        emu::VecWholeReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, dstRepStride,           \
                            srcBlkStride, srcRepStride, static_cast<int>(order));                                      \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[], const int32_t repeatTime,   \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride,                      \
              ReduceOrder order = ReduceOrder::ORDER_VALUE_INDEX)                                                      \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecWholeReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, dstRepStride,           \
                            srcBlkStride, srcRepStride, static_cast<int>(order));                                      \
    }
EMU_WHOLE_REDUCE_MAXMIN(WholeReduceMax, 0)
EMU_WHOLE_REDUCE_MAXMIN(WholeReduceMin, 1)
#undef EMU_WHOLE_REDUCE_MAXMIN

template <typename T, bool isSetMask = true>
void WholeReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t mask, const int32_t repeatTime,
                    const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride)
{
    detail::Mask<T, isSetMask>(static_cast<uint64_t>(mask));
    emu::VecWholeReduce("WholeReduceSum", 2, emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, dstRepStride,
                        srcBlkStride, srcRepStride, 2);
}
template <typename T, bool isSetMask = true>
void WholeReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[],
                    const int32_t repeatTime, const int32_t dstRepStride, const int32_t srcBlkStride,
                    const int32_t srcRepStride)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VecWholeReduce("WholeReduceSum", 2, emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, dstRepStride,
                        srcBlkStride, srcRepStride, 2);
}

// The older name of WholeReduceSum with a lane count (kernel_operator_vec_reduce_intf_impl.h for
// 2201: the same instruction; dstBlkStride has no effect).
template <typename T, bool isSetMask = true>
void RepeatReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t repeatTime, const int32_t mask,
                     const int32_t dstBlkStride, const int32_t srcBlkStride, const int32_t dstRepStride,
                     const int32_t srcRepStride)
{
    (void)dstBlkStride;
    WholeReduceSum<T, isSetMask>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride);
}

#define EMU_BLOCK_REDUCE(NAME, KIND)                                                                                   \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t repeatTime, const int32_t mask,      \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride)                      \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(static_cast<uint64_t>(mask));                                                       \
        emu::VecBlockReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, dstRepStride,           \
                            srcBlkStride, srcRepStride);                                                               \
    }                                                                                                                  \
    template <typename T, bool isSetMask = true>                                                                       \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const int32_t repeatTime, const uint64_t mask[],   \
              const int32_t dstRepStride, const int32_t srcBlkStride, const int32_t srcRepStride)                      \
    {                                                                                                                  \
        detail::Mask<T, isSetMask>(mask);                                                                              \
        emu::VecBlockReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, dstRepStride,           \
                            srcBlkStride, srcRepStride);                                                               \
    }
EMU_BLOCK_REDUCE(BlockReduceMax, 0)
EMU_BLOCK_REDUCE(BlockReduceMin, 1)
EMU_BLOCK_REDUCE(BlockReduceSum, 2)
#undef EMU_BLOCK_REDUCE

#define EMU_REDUCE(NAME, KIND)                                                                                         \
    template <typename T>                                                                                              \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,             \
              const int32_t count, bool calIndex = 0)                                                                  \
    {                                                                                                                  \
        emu::VecReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), emu::Ref(sharedTmpBuffer), count, 0, 8,  \
                       calIndex);                                                                                      \
    }                                                                                                                  \
    template <typename T>                                                                                              \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,             \
              const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0)             \
    {                                                                                                                  \
        emu::SetMaskContinuous(static_cast<uint64_t>(mask), sizeof(T));                                                \
        emu::VecReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), emu::Ref(sharedTmpBuffer), 0,            \
                       repeatTime, srcRepStride, calIndex);                                                            \
    }                                                                                                                  \
    template <typename T>                                                                                              \
    void NAME(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,             \
              const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride, bool calIndex = 0)          \
    {                                                                                                                  \
        emu::SetMaskBits(mask[1], mask[0]);                                                                            \
        emu::VecReduce(#NAME, KIND, emu::DT<T>, emu::Ref(dst), emu::Ref(src), emu::Ref(sharedTmpBuffer), 0,            \
                       repeatTime, srcRepStride, calIndex);                                                            \
    }
EMU_REDUCE(ReduceMax, 0)
EMU_REDUCE(ReduceMin, 1)
#undef EMU_REDUCE
template <typename T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
               const int32_t count)
{
    emu::VecReduce("ReduceSum", 2, emu::DT<T>, emu::Ref(dst), emu::Ref(src), emu::Ref(sharedTmpBuffer), count, 0, 8,
                   false);
}
template <typename T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
               const int32_t mask, const int32_t repeatTime, const int32_t srcRepStride)
{
    if (isSetMask) emu::SetMaskContinuous(static_cast<uint64_t>(mask), sizeof(T));
    emu::VecReduce("ReduceSum", 2, emu::DT<T>, emu::Ref(dst), emu::Ref(src), emu::Ref(sharedTmpBuffer), 0, repeatTime,
                   srcRepStride, false);
}
template <typename T, bool isSetMask = true>
void ReduceSum(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<T> &sharedTmpBuffer,
               const uint64_t mask[], const int32_t repeatTime, const int32_t srcRepStride)
{
    if (isSetMask) emu::SetMaskBits(mask[1], mask[0]);
    emu::VecReduce("ReduceSum", 2, emu::DT<T>, emu::Ref(dst), emu::Ref(src), emu::Ref(sharedTmpBuffer), 0, repeatTime,
                   srcRepStride, false);
}

// Brcb and Copy.
template <typename T>
void Brcb(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint8_t repeatTime,
          const BrcbRepeatParams &repeatParams)
{
    emu::VecBrcb("Brcb", emu::DT<T>, emu::Ref(dst), emu::Ref(src), repeatTime, repeatParams.dstBlkStride,
                 repeatParams.dstRepStride);
}
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask[], const uint8_t repeatTime,
          const CopyRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VGeom g;
    g.repeat = repeatTime;
    g.blk[0] = repeatParams.dstStride;
    g.blk[1] = repeatParams.srcStride;
    g.rep[0] = repeatParams.dstRepeatSize;
    g.rep[1] = repeatParams.srcRepeatSize;
    emu::VecUnary("Copy", emu::VOp::Copy, emu::DT<T>, emu::Ref(dst), emu::Ref(src), g);
}
template <typename T, bool isSetMask = true>
void Copy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint64_t mask, const uint8_t repeatTime,
          const CopyRepeatParams &repeatParams)
{
    detail::Mask<T, isSetMask>(mask);
    emu::VGeom g;
    g.repeat = repeatTime;
    g.blk[0] = repeatParams.dstStride;
    g.blk[1] = repeatParams.srcStride;
    g.rep[0] = repeatParams.dstRepeatSize;
    g.rep[1] = repeatParams.srcRepeatSize;
    emu::VecUnary("Copy", emu::VOp::Copy, emu::DT<T>, emu::Ref(dst), emu::Ref(src), g);
}

// NCHW -> NC1HWC0 (kernel_struct_transpose.h / kernel_operator_vec_transpose_intf.h).
constexpr int32_t NCHW_CONV_ADDR_LIST_SIZE = 16;
struct TransDataTo5HDParams {
    constexpr TransDataTo5HDParams() = default;
    constexpr TransDataTo5HDParams(const bool dstHighHalfIn, const bool srcHighHalfIn, const uint8_t repeatTimesIn,
                                   const uint16_t dstRepStrideIn, const uint16_t srcRepStrideIn)
        : dstHighHalf(dstHighHalfIn),
          srcHighHalf(srcHighHalfIn),
          repeatTimes(repeatTimesIn),
          dstRepStride(dstRepStrideIn),
          srcRepStride(srcRepStrideIn)
    {
    }
    bool dstHighHalf = false;
    bool srcHighHalf = false;
    uint8_t repeatTimes = 1;
    uint16_t dstRepStride = 0;
    uint16_t srcRepStride = 0;
};
template <typename T>
void TransDataTo5HD(const LocalTensor<T> (&dstList)[NCHW_CONV_ADDR_LIST_SIZE],
                    const LocalTensor<T> (&srcList)[NCHW_CONV_ADDR_LIST_SIZE], const TransDataTo5HDParams &p)
{
    emu::LocalRef d[16], s[16];
    for (int i = 0; i < 16; ++i) {
        d[i] = emu::Ref(dstList[i]);
        s[i] = emu::Ref(srcList[i]);
    }
    emu::TransDataTo5HD("TransDataTo5HD", d, s, sizeof(T), p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride,
                        p.srcRepStride);
}
// The address-list form: UB addresses as integers (`bytes + tensor.GetPhyAddr()`).
template <typename T>
void TransDataTo5HD(uint64_t dstList[NCHW_CONV_ADDR_LIST_SIZE], uint64_t srcList[NCHW_CONV_ADDR_LIST_SIZE],
                    const TransDataTo5HDParams &p)
{
    emu::LocalRef d[16], s[16];
    for (int i = 0; i < 16; ++i) {
        d[i] = emu::UbAddress("TransDataTo5HD", "dstList", dstList[i]);
        s[i] = emu::UbAddress("TransDataTo5HD", "srcList", srcList[i]);
    }
    emu::TransDataTo5HD("TransDataTo5HD", d, s, sizeof(T), p.dstHighHalf, p.srcHighHalf, p.repeatTimes, p.dstRepStride,
                        p.srcRepStride);
}

}  // namespace AscendC
