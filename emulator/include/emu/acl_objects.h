// The aclnn meta objects of the CPU target, visible to host code (op_api, op runner, tests).
// Public C code only sees them as opaque types through aclnn/acl_meta.h. Not a CANN header; the
// accessor names follow the C++ view CANN's op_api code has of the same objects.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "aclnn/acl_meta.h"
#include "graph/types.h"

struct aclTensor {
    std::vector<int64_t> viewShape;
    std::vector<int64_t> strides;  // elements
    int64_t offset = 0;            // elements
    std::vector<int64_t> storageShape;
    aclDataType dataType = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_ND;
    void *data = nullptr;  // device address of the storage

    size_t GetDimNum() const { return viewShape.size(); }
    int64_t GetDim(size_t i) const { return viewShape[i]; }
    const std::vector<int64_t> &GetViewShape() const { return viewShape; }
    int64_t Numel() const
    {  // saturating: a hostile shape must not overflow (the aclnn checks reject it)
        int64_t n = 1;
        for (int64_t d : viewShape) {
            if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
        }
        return n;
    }
    bool IsEmpty() const { return Numel() == 0; }
    // True when the view is the row-major packing of its shape (size-1 dims may have any stride;
    // an empty view is contiguous).
    bool IsContiguous() const;
    ge::DataType GetDataType() const { return static_cast<ge::DataType>(dataType); }
    ge::Format GetStorageFormat() const;
    // Device address of element 0 of the view.
    void *ViewData() const;
};

struct aclScalar {
    aclDataType dataType = ACL_DT_UNDEFINED;
    std::vector<uint8_t> bytes;
};

struct aclIntArray {
    std::vector<int64_t> values;
    uint64_t Size() const { return values.size(); }
    const int64_t *GetData() const { return values.data(); }
    const int64_t &operator[](uint64_t i) const { return values[i]; }
};

struct aclFloatArray {
    std::vector<float> values;
    uint64_t Size() const { return values.size(); }
    const float *GetData() const { return values.data(); }
    const float &operator[](uint64_t i) const { return values[i]; }
};

struct aclBoolArray {
    std::vector<bool> values;
    uint64_t Size() const { return values.size(); }
    bool operator[](size_t i) const { return values[i]; }
};

struct aclTensorList {
    std::vector<aclTensor *> tensors;  // owned
    uint64_t Size() const { return tensors.size(); }
    const aclTensor *operator[](size_t i) const { return tensors[i]; }
};

struct aclScalarList {
    std::vector<aclScalar *> scalars;  // owned
    uint64_t Size() const { return scalars.size(); }
    const aclScalar *operator[](size_t i) const { return scalars[i]; }
};

namespace emu {
// "ACL_FLOAT16" etc.
const char *AclDataTypeName(aclDataType type);
// "[2, 8, 128]"
std::string ShapeString(const std::vector<int64_t> &shape);
}  // namespace emu
