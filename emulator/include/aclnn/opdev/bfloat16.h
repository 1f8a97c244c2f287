// op::bfloat16: the host-side bfloat16 value type of CANN's opdev headers (include/aclnn/opdev).
// Stores the upper 16 bits of a binary32; converts from any arithmetic value (round to nearest
// even, NaN kept quiet) and to float, through which all arithmetic goes.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace op {

struct bfloat16 {
    uint16_t value = 0;

    bfloat16() = default;
    template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value>>
    bfloat16(T v) : value(FromFloat(static_cast<float>(v)))
    {
    }
    operator float() const
    {
        const uint32_t bits = static_cast<uint32_t>(value) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }

private:
    static uint16_t FromFloat(float f)
    {
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);  // NaN
        bits += 0x7fffu + ((bits >> 16) & 1u);
        return static_cast<uint16_t>(bits >> 16);
    }
};

}  // namespace op
