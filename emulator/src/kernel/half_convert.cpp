// Bulk fp16 <-> fp32 conversion (see half_convert.h).
#include "half_convert.h"

#include <immintrin.h>

#include "kernel/emu_types.h"

namespace emu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("f16c,avx"))) void HalfToFloatF16c(const uint16_t *src, float *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i))));
    for (; i < n; ++i) dst[i] = HalfBitsToFloat(src[i]);
}
__attribute__((target("f16c,avx"))) void FloatToHalfF16c(const float *src, uint16_t *dst, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) dst[i] = FloatToHalfBits(src[i]);
}
const bool kHasF16c = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
#else
const bool kHasF16c = false;
void HalfToFloatF16c(const uint16_t *, float *, size_t) {}
void FloatToHalfF16c(const float *, uint16_t *, size_t) {}
#endif

}  // namespace

void HalfToFloatN(const uint16_t *src, float *dst, size_t n)
{
    if (kHasF16c) return HalfToFloatF16c(src, dst, n);
    for (size_t i = 0; i < n; ++i) dst[i] = HalfBitsToFloat(src[i]);
}
void FloatToHalfN(const float *src, uint16_t *dst, size_t n)
{
    if (kHasF16c) return FloatToHalfF16c(src, dst, n);
    for (size_t i = 0; i < n; ++i) dst[i] = FloatToHalfBits(src[i]);
}

}  // namespace emu
