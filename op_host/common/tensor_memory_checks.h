// Checks of how a tensor argument lies in memory, which every aclnn API runs on every tensor
// before it reads a shape: dimensions, element counts and byte spans that fit int64 arithmetic,
// non-negative strides, and a view (offset + strides) that stays inside the tensor's own storage
// shape. A caller's page-rounded allocation being large enough is no excuse: the storage shape
// is the contract. Failures are 161002 with a message naming the parameter.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "aclnn/aclnn_base.h"
#include "attention_checks.h"

namespace fa_host {

// Element counts above this are rejected: 2^40 elements is 16x the memory of any Atlas A2 device,
// and keeping every count below it keeps the checks' products of a few dims inside int64.
constexpr int64_t MAX_TENSOR_ELEMENTS = int64_t(1) << 40;

// a * b, saturating at INT64_MAX for non-negative operands (negative products are passed through
// only when they do not overflow; callers reject negative dims first).
int64_t SaturatingMul(int64_t a, int64_t b);

// Checks one tensor (null passes: presence is the caller's rule).
bool CheckTensorMemory(ParamChecker &c, const aclTensor *tensor, const char *name);
bool CheckTensorsMemory(ParamChecker &c, std::initializer_list<std::pair<const aclTensor *, const char *>> tensors);

// The integer values of a small int32/int64 tensor argument (a block table, cumulative lengths),
// copied from device memory with aclrtMemcpy so that host checks can judge them. Returns false
// (and logs through `c`) when the tensor is not a contiguous 1-D/2-D int32/int64 tensor or the
// copy fails.
bool ReadIntTensor(ParamChecker &c, const aclTensor *tensor, const char *name, std::vector<int64_t> &values);

}  // namespace fa_host
