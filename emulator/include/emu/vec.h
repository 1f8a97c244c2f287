// The vector engine interface between kernel_vec.h (templated API surface) and vec_*.cpp.
// One call = one instruction issue (level 0) with the core's mask register, or a level-2
// count form that programs counter mode first (asc-devkit `docs/zh/api/SIMD-API/基础API/Memory矢量计算/SIMD计算说明/掩码.md`).
#pragma once
#include <cstdint>

#include "emu/dtype.h"

namespace emu {

enum class VOp : uint8_t {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,  // binary
    Adds,
    Muls,
    Maxs,
    Mins,  // tensor-scalar
    Exp,
    Ln,
    Abs,
    Sqrt,
    Reciprocal,
    Rsqrt,
    Relu,
    Copy,  // unary
    And,
    Or,
    Not,         // bitwise (int16_t / uint16_t)
    Axpy,        // dst = src * scalar + dst
    ShiftLeft,   // dst = src << scalar (16/32-bit integers)
    ShiftRight,  // dst = src >> scalar: logical for unsigned, arithmetic for signed elements
};
const char *VOpName(VOp op);

// Strides of one instruction, in 32-byte blocks (operand 0 = dst, 1 = src0, 2 = src1).
struct VGeom {
    uint32_t repeat = 1;
    uint32_t blk[3] = {1, 1, 1};
    uint32_t rep[3] = {8, 8, 8};
};

void SetMaskContinuous(uint64_t mask, int elemBytes);  // isSetMask with `uint64_t mask`
void SetMaskBits(uint64_t hi, uint64_t lo);            // isSetMask with `uint64_t mask[2]`
void BeginCount(uint64_t count);                       // level-2 prologue: counter mode, count
void EndCount();                                       // level-2 epilogue: normal mode, all ones

void VecBinary(const char *api, VOp op, DType t, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g);
// dst = src0 * src1 + dst (dst half/float; half sources into a float dst too).
void VecMulAddDst(const char *api, DType dt, DType st, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g);
// dst = src0 * dst + src1 (half or float; FusedMulAdd, vmadd).
void VecFusedMulAdd(const char *api, DType t, LocalRef dst, LocalRef s0, LocalRef s1, const VGeom &g);
void VecScalar(const char *api, VOp op, DType t, LocalRef dst, LocalRef src, double scalar, const VGeom &g);
// ShiftLeft / ShiftRight by `bits` (A2: [0, 16] for 16-bit, [0, 32] for 32-bit elements); roundEn
// (ShiftRight of int16_t / int32_t) adds the last bit shifted out.
void VecShift(const char *api, VOp op, DType t, LocalRef dst, LocalRef src, int64_t bits, bool roundEn, const VGeom &g);
void VecUnary(const char *api, VOp op, DType t, LocalRef dst, LocalRef src, const VGeom &g);
void VecDup(const char *api, DType t, LocalRef dst, double scalar, const VGeom &g);
void VecCast(const char *api, DType dt, DType st, int roundMode, LocalRef dst, LocalRef src, const VGeom &g);
void VecCompare(const char *api, DType t, int cmpMode, LocalRef dst, LocalRef s0, LocalRef s1, bool scalarForm,
                double scalar, const VGeom &g);
void VecSelect(const char *api, DType t, int selMode, LocalRef dst, LocalRef sel, LocalRef s0, LocalRef s1,
               bool scalarForm, double scalar, const VGeom &g);
// WholeReduce{Max,Min,Sum} (kind 0 max, 1 min, 2 sum); order = ReduceOrder.
void VecWholeReduce(const char *api, int kind, DType t, LocalRef dst, LocalRef src, uint32_t repeat, uint32_t dstRep,
                    uint32_t srcBlk, uint32_t srcRep, int order);
void VecBlockReduce(const char *api, int kind, DType t, LocalRef dst, LocalRef src, uint32_t repeat, uint32_t dstRep,
                    uint32_t srcBlk, uint32_t srcRep);
// Level-2 Reduce{Max,Min,Sum} over `count` contiguous elements (repeat == 0) or the level-0-like
// form over `repeat` repeats of the current mask with srcRep; writes dst[0] (+ index in dst[1]).
void VecReduce(const char *api, int kind, DType t, LocalRef dst, LocalRef src, LocalRef tmp, uint64_t count,
               uint32_t repeat, uint32_t srcRep, bool calIndex);
void VecBrcb(const char *api, DType t, LocalRef dst, LocalRef src, uint32_t repeat, uint32_t dstBlk, uint32_t dstRep);
// Sort (A2 layout: 8-byte (score, index) elements, descending, ties in input order) of
// repeat x 32 scores; full: all of them, else per group of 32. Extract splits them again. Both
// keep their data work in timing-only mode (kernels sort indices with them).
void VecSort(const char *api, DType t, LocalRef dst, LocalRef concat, LocalRef index, LocalRef tmp, int32_t repeat,
             bool full);
void VecExtract(const char *api, DType t, LocalRef dstValue, LocalRef dstIndex, LocalRef sorted, int32_t repeat);
// TransDataTo5HD: repeat x (16 x 16 transpose of the 32-byte blocks at the 16 source addresses
// into the 16 destination addresses); strides in 32-byte blocks.
// The UB operand at an integer address (from LocalTensor::GetPhyAddr), up to the end of UB.
LocalRef UbAddress(const char *api, const char *what, uint64_t address);
void TransDataTo5HD(const char *api, const LocalRef dst[16], const LocalRef src[16], int elemBytes, bool dstHigh,
                    bool srcHigh, uint32_t repeat, uint32_t dstRepStride, uint32_t srcRepStride);

}  // namespace emu
