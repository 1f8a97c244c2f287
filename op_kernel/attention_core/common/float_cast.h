// float <-> the operator's element type T on the vector cores. Cast has no float -> float form,
// so for T = float the conversion is an exact copy (a multiply by 1 keeps -0 and NaN payloads'
// class, which Adds 0 would not for -0).
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

template <typename T>
__aicore__ inline void CastToFloat(const AscendC::LocalTensor<float> &dst, const AscendC::LocalTensor<T> &src,
                                   uint32_t count)
{
    if constexpr (AscendC::IsSameType<T, float>::value) {
        AscendC::Muls(dst, src, 1.0f, static_cast<int32_t>(count));
    } else {
        AscendC::Cast(dst, src, AscendC::RoundMode::CAST_NONE, static_cast<int32_t>(count));
    }
}

template <typename T>
__aicore__ inline void CastFromFloat(const AscendC::LocalTensor<T> &dst, const AscendC::LocalTensor<float> &src,
                                     uint32_t count)
{
    if constexpr (AscendC::IsSameType<T, float>::value) {
        AscendC::Muls(dst, src, 1.0f, static_cast<int32_t>(count));
    } else {
        AscendC::Cast(dst, src, AscendC::RoundMode::CAST_RINT, static_cast<int32_t>(count));
    }
}

}  // namespace AttentionCore
