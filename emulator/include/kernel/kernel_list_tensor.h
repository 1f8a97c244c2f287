// ListTensorDesc: the kernel-side view of a dynamic (tensor-list) input. The GM block the host
// passes (emu/op_runner.cpp, BuildListTensorDesc) is, in uint64 words:
//   [0] byte offset of the data-pointer array,
//   then per tensor i: (dimNum | i << 32), dim 0 .. dim dimNum-1,
//   then one data pointer per tensor.
// Implemented: GetSize() and GetDataPtr<T>(index), the accessors decode kernels use.
#pragma once
#include "emu/core.h"
#include "kernel/kernel_common.h"

namespace AscendC {

class ListTensorDesc {
public:
    ListTensorDesc() = default;
    explicit ListTensorDesc(__gm__ void *data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff)
    {
        (void)length;
        (void)shapeSize;
        base_ = reinterpret_cast<__gm__ uint64_t *>(data);
        emu::CheckGm("ListTensorDesc", "data", base_, sizeof(uint64_t));
        const uint64_t ptrWord = base_[0] / sizeof(uint64_t);
        emu::CheckGm("ListTensorDesc", "data", base_, base_[0]);
        count_ = 0;
        for (uint64_t w = 1; w < ptrWord; w += 1 + (base_[w] & 0xffffffffULL)) ++count_;
        emu::CheckGm("ListTensorDesc", "data", base_, base_[0] + count_ * sizeof(uint64_t));
    }
    uint32_t GetSize() const { return count_; }
    template <typename T>
    __gm__ T *GetDataPtr(uint32_t index) const
    {
        if (index >= count_) emu::Fail("ListTensorDesc::GetDataPtr", "index %u is past the list's %u tensors", index, count_);
        return reinterpret_cast<__gm__ T *>(base_[base_[0] / sizeof(uint64_t) + index]);
    }

private:
    __gm__ uint64_t *base_ = nullptr;
    uint32_t count_ = 0;
};

}  // namespace AscendC
