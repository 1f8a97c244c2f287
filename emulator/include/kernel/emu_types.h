// Scalar types and the qualifiers of the Ascend C kernel language as the CANN CPU twin defines
// them (__aicore__, __global__, __gm__ are empty in CPU builds, as in asc-devkit's CPU-debug configuration).
// `half` and `bfloat16_t` are storage types that convert to float for every arithmetic use and
// round to nearest even when built from a wider value, as the hardware's scalar unit does.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __global__
#define __global__
#endif
#ifndef __gm__
#define __gm__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __inline__
#define __inline__ inline
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
// Kernel qualifiers naming the core kind (a vector-only / cube-only kernel); the launcher is
// told the kernel type by the host.
#ifndef __vector__
#define __vector__
#endif
#ifndef __cube__
#define __cube__
#endif
#ifndef ASCENDC_CPU_DEBUG
#define ASCENDC_CPU_DEBUG 1
#endif
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201
#endif

#define GM_ADDR __gm__ uint8_t *

namespace emu {

inline uint32_t FloatBits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
inline float BitsFloat(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// IEEE binary16 <-> binary32, round to nearest even (F. Giesen's branch-light formulation).
inline float HalfBitsToFloat(uint16_t h)
{
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t em = static_cast<uint32_t>(h & 0x7fffu) << 13;
    const uint32_t exp = em & 0x0f800000u;
    em += (127u - 15u) << 23;
    if (exp == 0x0f800000u) {
        em += (128u - 16u) << 23;  // inf / nan
    } else if (exp == 0) {
        em += 1u << 23;  // subnormal: renormalise through the FPU
        em = FloatBits(BitsFloat(em) - BitsFloat(113u << 23));
    }
    return BitsFloat(em | sign);
}
inline uint16_t FloatToHalfBits(float fl)
{
    uint32_t f = FloatBits(fl);
    const uint32_t sign = f & 0x80000000u;
    f ^= sign;
    uint32_t o;
    if (f >= (143u << 23)) {  // >= 65536: overflow to inf, or inf/nan
        o = f > (255u << 23) ? 0x7e00u : 0x7c00u;
    } else if (f < (113u << 23)) {  // result is subnormal or zero: let the FPU round
        const uint32_t magic = 126u << 23;
        o = FloatBits(BitsFloat(f) + BitsFloat(magic)) - magic;
    } else {
        const uint32_t odd = (f >> 13) & 1u;
        f += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu;
        f += odd;
        o = f >> 13;
    }
    return static_cast<uint16_t>(o | (sign >> 16));
}
inline float Bf16BitsToFloat(uint16_t b) { return BitsFloat(static_cast<uint32_t>(b) << 16); }
inline uint16_t FloatToBf16Bits(float fl)
{
    uint32_t u = FloatBits(fl);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

// A 16-bit float storage type: arithmetic happens in float, every store rounds once (RNE).
template <class Tag> struct Float16Storage {
    uint16_t bits;
    Float16Storage() = default;
    template <class U, class = typename std::enable_if<std::is_arithmetic<U>::value>::type>
    Float16Storage(U v) : bits(Tag::FromFloat(static_cast<float>(v)))
    {
    }
    operator float() const { return Tag::ToFloat(bits); }
    float ToFloat() const { return Tag::ToFloat(bits); }
    static Float16Storage FromBits(uint16_t b)
    {
        Float16Storage r;
        r.bits = b;
        return r;
    }
    template <class U> Float16Storage &operator+=(U v) { return *this = Float16Storage(float(*this) + float(v)); }
    template <class U> Float16Storage &operator-=(U v) { return *this = Float16Storage(float(*this) - float(v)); }
    template <class U> Float16Storage &operator*=(U v) { return *this = Float16Storage(float(*this) * float(v)); }
    template <class U> Float16Storage &operator/=(U v) { return *this = Float16Storage(float(*this) / float(v)); }
};
struct HalfTag {
    static float ToFloat(uint16_t b) { return HalfBitsToFloat(b); }
    static uint16_t FromFloat(float f) { return FloatToHalfBits(f); }
};
struct Bf16Tag {
    static float ToFloat(uint16_t b) { return Bf16BitsToFloat(b); }
    static uint16_t FromFloat(float f) { return FloatToBf16Bits(f); }
};

}  // namespace emu

using half = emu::Float16Storage<emu::HalfTag>;
using bfloat16_t = emu::Float16Storage<emu::Bf16Tag>;
static_assert(sizeof(half) == 2 && sizeof(bfloat16_t) == 2, "16-bit storage types");
