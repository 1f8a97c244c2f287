// op::fp16_t: the host-side IEEE binary16 value type of CANN's opdev headers (include/aclnn/opdev),
// used by host code to fill and read half tensors. Stores the 16 bits; converts from any
// arithmetic value (round to nearest even) and to float, through which all arithmetic goes.
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
};

}  // namespace op
