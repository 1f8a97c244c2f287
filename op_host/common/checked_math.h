// int64 arithmetic on values a caller chose (attributes, lengths, prefixes, start indices, shape
// dims): a signed overflow is undefined behaviour, so every such sum, difference or product in
// the checks goes through these helpers (the planners clamp the token attributes to +-2^40
// first and add only lengths the checks bounded). They saturate at INT64_MIN / INT64_MAX,
// which keeps the sign and the order of the exact result: a saturated value compares with any
// bound the checks use the way the exact one would, so a check written with them answers the
// documented status for the extremes instead of wrapping into a wrong "valid".
// Header-only and free of aclnn types: op_api checks and tiling code include it alike.
#pragma once
#include <cstdint>

namespace fa_host {

inline int64_t SaturatingAdd(int64_t a, int64_t b)
{
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

inline int64_t SaturatingSub(int64_t a, int64_t b)
{
    int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

inline int64_t SaturatingMul(int64_t a, int64_t b)
{
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return (a < 0) == (b < 0) ? INT64_MAX : INT64_MIN;
    return r;
}

}  // namespace fa_host
