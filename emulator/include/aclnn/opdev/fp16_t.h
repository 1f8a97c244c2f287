// op::fp16_t: the host-side IEEE binary16 value type of CANN's opdev headers (include/aclnn/opdev),
// used by host code to fill and read half tensors. Stores the 16 bits; converts from any
// arithmetic value (round to nearest even) and to float. Arithmetic between two fp16_t values
// is half arithmetic, as in CANN: each operation rounds its result to half, so a golden written
// as `(b + zeroPoint) * scale` rounds twice, like the vector unit's Adds then Muls.
#pragma once
#include <cstdint>
#include <type_traits>

#include "acl/acl_base.h"

namespace op {

struct fp16_t {
    uint16_t val = 0;

    fp16_t() = default;
    template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value>>
    fp16_t(T v) : val(aclFloatToFloat16(static_cast<float>(v)))
    {
    }
    operator float() const { return aclFloat16ToFloat(val); }
    float toFloat() const { return aclFloat16ToFloat(val); }
    double toDouble() const { return aclFloat16ToFloat(val); }

    // Through float: rounding to float, then to half, gives the correctly rounded half result of
    // + - * / (double rounding is innocuous when the wider format has >= 2p + 2 bits: 24 >= 24).
    fp16_t operator+(const fp16_t fp) const { return fp16_t(toFloat() + fp.toFloat()); }
    fp16_t operator-(const fp16_t fp) const { return fp16_t(toFloat() - fp.toFloat()); }
    fp16_t operator*(const fp16_t fp) const { return fp16_t(toFloat() * fp.toFloat()); }
    fp16_t operator/(const fp16_t fp) const { return fp16_t(toFloat() / fp.toFloat()); }
    fp16_t operator+=(const fp16_t fp) { return *this = *this + fp; }
    fp16_t operator-=(const fp16_t fp) { return *this = *this - fp; }
    fp16_t operator*=(const fp16_t fp) { return *this = *this * fp; }
    fp16_t operator/=(const fp16_t fp) { return *this = *this / fp; }
};

}  // namespace op
