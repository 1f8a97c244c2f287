// Checks of how a tensor argument lies in memory, which every aclnn API runs on every tensor
// before it reads a shape: dimensions, element counts and byte spans that fit int64 arithmetic,
// non-negative strides, and a view (offset + strides) that stays inside the tensor's own storage
// shape. A caller's page-rounded allocation being large enough is no excuse: the storage shape
// is the contract. Failures are 161002 with a message naming the parameter.
// Header-only: op_api code only (it calls libnnopbase; docs/npu.md "Which code goes where").
// Public: CheckTensorMemory (one tensor, null passes), CheckTensorsMemory (a list
// of (tensor, name)), ReadIntTensor (a small contiguous int32/int64 tensor copied to the host
// with aclrtMemcpy, so host checks can judge block tables and lengths).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <initializer_list>
#include <utility>
#include <vector>

#include "aclnn/aclnn_base.h"
#include "acl/acl_rt.h"
#include "attention_checks.h"
#include "../checked_math.h"

namespace fa_host {

// Element counts above this are rejected: 2^40 elements is 16x the memory of any Atlas A2 device,
// and keeping every count below it keeps the checks' products of a few dims inside int64.
constexpr int64_t MAX_TENSOR_ELEMENTS = int64_t(1) << 40;

namespace memory_detail {

inline long long LL(int64_t v) { return static_cast<long long>(v); }

// The view / storage description of a tensor, read through the public aclnn queries.
struct MemoryDesc {
    std::vector<int64_t> view, strides, storage;
    int64_t offset = 0;
    aclDataType dtype = ACL_DT_UNDEFINED;
};

inline std::vector<int64_t> Take(int64_t *values, uint64_t n)
{
    std::vector<int64_t> out;
    if (values != nullptr) out.assign(values, values + n);
    delete[] values;
    return out;
}

inline MemoryDesc Read(const aclTensor *t)
{
    MemoryDesc m;
    int64_t *dims = nullptr;
    uint64_t n = 0;
    aclGetViewShape(t, &dims, &n);
    m.view = Take(dims, n);
    dims = nullptr;
    n = 0;
    aclGetViewStrides(t, &dims, &n);
    m.strides = Take(dims, n);
    dims = nullptr;
    n = 0;
    aclGetStorageShape(t, &dims, &n);
    m.storage = Take(dims, n);
    aclGetViewOffset(t, &m.offset);
    aclGetDataType(t, &m.dtype);
    return m;
}

inline std::string Text(const std::vector<int64_t> &v)
{
    TensorDesc d;
    d.shape = v;
    return d.ShapeString();
}

// Elements of a dim list, or -1 when a dim is negative or the count exceeds MAX_TENSOR_ELEMENTS.
inline int64_t BoundedCount(const std::vector<int64_t> &dims)
{
    int64_t n = 1;
    bool empty = false;
    for (int64_t d : dims) {
        if (d < 0) return -1;
        if (d == 0) empty = true;
        n = SaturatingMul(n, d == 0 ? 1 : d);
    }
    if (n > MAX_TENSOR_ELEMENTS) return -1;
    return empty ? 0 : n;
}

}  // namespace memory_detail

inline bool CheckTensorMemory(ParamChecker &c, const aclTensor *tensor, const char *name)
{
    if (tensor == nullptr) return true;
    const memory_detail::MemoryDesc m = memory_detail::Read(tensor);
    const int64_t count = memory_detail::BoundedCount(m.view);
    if (!c.Require(count >= 0, name, "has view shape %s: dims must be >= 0 and hold at most %lld elements",
                   memory_detail::Text(m.view).c_str(), memory_detail::LL(MAX_TENSOR_ELEMENTS)) ||
        !c.Require(m.strides.size() == m.view.size(), name, "has %zu strides for a %zu-dim view", m.strides.size(),
                   m.view.size()) ||
        !c.Require(m.offset >= 0, name, "has storage offset %lld (must be >= 0)", memory_detail::LL(m.offset))) {
        return false;
    }
    const int64_t storage = memory_detail::BoundedCount(m.storage);
    if (!c.Require(storage >= 0, name, "has storage shape %s: dims must be >= 0 and hold at most %lld elements",
                   memory_detail::Text(m.storage).c_str(), memory_detail::LL(MAX_TENSOR_ELEMENTS))) {
        return false;
    }
    if (count == 0) return true;  // an empty view addresses no element
    // Last element the view touches, saturating (a huge stride must read as "outside", never wrap).
    int64_t last = m.offset;
    for (size_t i = 0; i < m.view.size(); ++i) {
        if (!c.Require(m.strides[i] >= 0 && m.strides[i] <= MAX_TENSOR_ELEMENTS, name,
                       "has stride %lld in dim %zu (strides must be in [0, %lld])", memory_detail::LL(m.strides[i]), i,
                       memory_detail::LL(MAX_TENSOR_ELEMENTS))) {
            return false;
        }
        const int64_t term = SaturatingMul(m.view[i] - 1, m.strides[i]);
        last = SaturatingAdd(last, term);
    }
    return c.Require(m.offset < storage && last < storage, name,
                     "has a view (shape %s, strides %s, offset %lld) reaching element %lld, outside its storage shape "
                     "%s of %lld elements",
                     memory_detail::Text(m.view).c_str(), memory_detail::Text(m.strides).c_str(),
                     memory_detail::LL(m.offset), memory_detail::LL(last), memory_detail::Text(m.storage).c_str(),
                     memory_detail::LL(storage));
}

inline bool CheckTensorsMemory(ParamChecker &c,
                               std::initializer_list<std::pair<const aclTensor *, const char *>> tensors)
{
    for (const auto &t : tensors) {
        if (!CheckTensorMemory(c, t.first, t.second)) return false;
    }
    return true;
}

inline bool ReadIntTensor(ParamChecker &c, const aclTensor *tensor, const char *name, std::vector<int64_t> &values)
{
    values.clear();
    const TensorDesc d = Describe(tensor);
    const size_t width = d.dtype == ACL_INT64 ? 8 : d.dtype == ACL_INT32 ? 4 : 0;
    if (!c.Require(width != 0 && d.contiguous, name, "must be a contiguous INT32/INT64 tensor to be read")) {
        return false;
    }
    const int64_t count = d.Numel();
    if (count == 0) return true;
    void *base = nullptr;
    int64_t offset = 0;
    aclGetRawTensorAddr(tensor, &base);
    aclGetViewOffset(tensor, &offset);
    if (!c.Require(base != nullptr, name, "has no device memory (null data address)")) return false;
    std::vector<uint8_t> bytes(static_cast<size_t>(count) * width);
    const void *src = static_cast<const uint8_t *>(base) + offset * static_cast<int64_t>(width);
    if (!c.Require(aclrtMemcpy(bytes.data(), bytes.size(), src, bytes.size(), ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS,
                   name, "could not be copied to the host to check its values (aclrtMemcpy failed)")) {
        return false;
    }
    values.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        if (width == 8) {
            std::memcpy(&values[i], bytes.data() + i * 8, 8);
        } else {
            int32_t v = 0;
            std::memcpy(&v, bytes.data() + i * 4, 4);
            values[i] = v;
        }
    }
    return true;
}

}  // namespace fa_host
