// Force-included (-include) into an unchanged CATLASS matmul example by benchmarks/peers/
// calibration.py: the example's host golden (a plain triple loop, hours at the calibration
// shapes) is skipped, everything else - the kernel, its launch, the example's own main - is the
// example's. The comparison it prints afterwards fails in timing-only runs; only the modelled
// time is used. The guard of the examples' golden.hpp keeps its own definition out.
#pragma once
#ifndef K_MAX_SHAPE_DIM
#define K_MAX_SHAPE_DIM 0  // as the examples set it before their first include
#endif
#include "golden.hpp"

namespace Catlass::golden {
inline void SkipComputeMatmul() {}
}  // namespace Catlass::golden
#define ComputeMatmul(...) SkipComputeMatmul()
