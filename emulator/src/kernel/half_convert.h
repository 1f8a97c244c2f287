// Bulk fp16 <-> fp32 conversion for the contiguous vector paths: F16C when the CPU has it
// (exact IEEE conversion, round to nearest even), the scalar bit routines otherwise.
#pragma once
#include <cstddef>
#include <cstdint>

namespace emu {
void HalfToFloatN(const uint16_t *src, float *dst, size_t n);
void FloatToHalfN(const float *src, uint16_t *dst, size_t n);
}  // namespace emu
