// Element-type codes passed from the templated kernel headers to the emulator's .cpp engines.
#pragma once
#include <cstdint>

#include "kernel/emu_types.h"

namespace emu {

// I4 is AscendC::int4b_t, two elements per byte (its DTypeSize is the byte that holds a pair;
// the engines that take it count its elements in nibbles).
enum class DType : uint8_t { F16, BF16, F32, I8, U8, I16, U16, I32, U32, I64, U64, I4, UNKNOWN };

template <class T> struct DTypeOf {
    static constexpr DType value = DType::UNKNOWN;
};
template <> struct DTypeOf<half> {
    static constexpr DType value = DType::F16;
};
template <> struct DTypeOf<bfloat16_t> {
    static constexpr DType value = DType::BF16;
};
template <> struct DTypeOf<float> {
    static constexpr DType value = DType::F32;
};
template <> struct DTypeOf<int8_t> {
    static constexpr DType value = DType::I8;
};
template <> struct DTypeOf<uint8_t> {
    static constexpr DType value = DType::U8;
};
template <> struct DTypeOf<int16_t> {
    static constexpr DType value = DType::I16;
};
template <> struct DTypeOf<uint16_t> {
    static constexpr DType value = DType::U16;
};
template <> struct DTypeOf<int32_t> {
    static constexpr DType value = DType::I32;
};
template <> struct DTypeOf<uint32_t> {
    static constexpr DType value = DType::U32;
};
template <> struct DTypeOf<int64_t> {
    static constexpr DType value = DType::I64;
};
template <> struct DTypeOf<uint64_t> {
    static constexpr DType value = DType::U64;
};
template <class T> constexpr DType DT = DTypeOf<T>::value;

const char *DTypeName(DType t);
int DTypeSize(DType t);

// A local tensor view handed to an engine: host address, bytes visible through the tensor,
// physical buffer, and whether this core has that buffer at all.
struct LocalRef {
    void *p;
    uint64_t bytes;
    int buf;  // emu::Buf
};

}  // namespace emu
