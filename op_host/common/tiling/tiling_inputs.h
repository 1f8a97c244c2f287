// What every operator's tiling reads from its TilingContext the same way: shapes as vectors,
// the int64 value-dependent inputs (sequence lengths, prefix), and the core budget
// (AI core count and UB/L1/L0 sizes) from PlatformAscendC.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "exe_graph/runtime/tiling_context.h"
#include "forward_tiling.h"
#include "tiling/platform/platform_ascendc.h"

namespace fa_host {

std::vector<int64_t> Dims(const gert::Shape &shape);
// The storage dims of an optional input's shape; empty when the input is absent.
std::vector<int64_t> Dims(const gert::StorageShape *shape);

// Values of an optional int64 value-dependent input; empty when absent or without data.
std::vector<int64_t> Int64Values(const gert::TilingContext *context, size_t index);

// Per-batch lengths from cumulative ones (TND's actual_seq_qlen/kvlen).
std::vector<int64_t> Lengths(const std::vector<int64_t> &cumulative);

// The AI core count and per-core buffer sizes the plans must fit.
CoreBudget ReadCoreBudget(const platform_ascendc::PlatformAscendC &platform);

}  // namespace fa_host
