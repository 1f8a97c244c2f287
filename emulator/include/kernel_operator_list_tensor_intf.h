// ListTensorDesc: the kernel-side view of a dynamic (tensor-list) input. As in CANN, it is
// declared by this header alone: kernel_operator.h does not include it, so a kernel that uses it
// includes "kernel_operator_list_tensor_intf.h" itself. Accessors are non-const, as declared
// there. The GM block the host passes (emu/op_runner.cpp, BuildListTensorDesc) is, in uint64
// words:
//   [0] byte offset of the data-pointer array,
//   then per tensor i: (dimNum | i << 32), dim 0 .. dim dimNum-1,
//   then one data pointer per tensor.
// Implemented: the constructors, Init, GetSize() and GetDataPtr<T>(index), the accessors decode
// kernels use; GetDesc/TensorDesc are not (a kernel using them does not compile here).
#pragma once
#include "kernel_operator.h"

namespace AscendC {

class ListTensorDesc {
public:
    ListTensorDesc() = default;
    ListTensorDesc(__gm__ void *data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff)
    {
        Init(data, length, shapeSize);
    }
    void Init(__gm__ void *data, uint32_t length = 0xffffffff, uint32_t shapeSize = 0xffffffff)
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
    uint32_t GetSize()
    {
        Initialised("GetSize");
        return count_;
    }
    template <class T> __gm__ T *GetDataPtr(uint32_t index)
    {
        Initialised("GetDataPtr");
        if (index >= count_)
            emu::Fail("ListTensorDesc::GetDataPtr", "index %u is past the list's %u tensors", index, count_);
        return reinterpret_cast<__gm__ T *>(base_[base_[0] / sizeof(uint64_t) + index]);
    }

private:
    void Initialised(const char *api) const
    {
        if (base_ == nullptr) emu::Fail(api, "ListTensorDesc used before Init (default-constructed)");
    }
    __gm__ uint64_t *base_ = nullptr;
    uint32_t count_ = 0;
};

}  // namespace AscendC
