// aclTensor, aclScalar, aclIntArray, aclFloatArray, aclBoolArray, aclTensorList, aclScalarList:
// create, destroy and query (aclnn/acl_meta.h).
#include <cstring>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "emu/acl_objects.h"
#include "emu/log.h"

bool aclTensor::IsContiguous() const
{
    if (IsEmpty()) return true;  // no element to place: any strides describe it
    int64_t expected = 1;
    for (size_t i = viewShape.size(); i-- > 0;) {
        if (viewShape[i] != 1 && strides[i] != expected) return false;
        if (__builtin_mul_overflow(expected, viewShape[i], &expected)) return false;  // no real packing that large
    }
    return true;
}

ge::Format aclTensor::GetStorageFormat() const { return static_cast<ge::Format>(format); }

void *aclTensor::ViewData() const
{
    if (data == nullptr) return nullptr;
    return static_cast<uint8_t *>(data) + offset * static_cast<int64_t>(aclDataTypeSize(dataType));
}

namespace {

int64_t *CopyOut(const std::vector<int64_t> &values)
{
    auto *out = new int64_t[values.empty() ? 1 : values.size()];
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return out;
}

#define EMU_CHECK_NOT_NULL(api, ptr)                                                                                   \
    do {                                                                                                               \
        if ((ptr) == nullptr) {                                                                                        \
            emu::LogError("%s: %s is null", api, #ptr);                                                                \
            return ACLNN_ERR_PARAM_NULLPTR;                                                                            \
        }                                                                                                              \
    } while (0)

}  // namespace

extern "C" {

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                           int64_t offset, aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                           void *tensorData)
{
    if ((viewDims == nullptr && viewDimsNum > 0) || (storageDims == nullptr && storageDimsNum > 0)) {
        emu::LogError("aclCreateTensor: %s is null but its length is not 0",
                      viewDims == nullptr ? "viewDims" : "storageDims");
        return nullptr;
    }
    if (offset < 0) {
        emu::LogError("aclCreateTensor: offset %lld is negative", static_cast<long long>(offset));
        return nullptr;
    }
    auto *t = new aclTensor;
    t->viewShape.assign(viewDims, viewDims + viewDimsNum);
    for (int64_t d : t->viewShape) {
        if (d < 0) {
            emu::LogError("aclCreateTensor: view shape %s has a negative dimension",
                          emu::ShapeString(t->viewShape).c_str());
            delete t;
            return nullptr;
        }
    }
    if (stride != nullptr) {
        t->strides.assign(stride, stride + viewDimsNum);
    } else {  // no strides: the contiguous packing of the view
        t->strides.assign(viewDimsNum, 1);
        for (size_t i = viewDimsNum; i-- > 1;) t->strides[i - 1] = t->strides[i] * t->viewShape[i];
    }
    t->offset = offset;
    t->dataType = dataType;
    t->format = format;
    t->storageShape.assign(storageDims, storageDims + storageDimsNum);
    t->data = tensorData;
    return t;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    const size_t size = aclDataTypeSize(dataType);
    if (value == nullptr || size == 0) {
        emu::LogError("aclCreateScalar: %s", value == nullptr ? "value is null" : "unsupported data type");
        return nullptr;
    }
    auto *s = new aclScalar;
    s->dataType = dataType;
    s->bytes.assign(static_cast<uint8_t *>(value), static_cast<uint8_t *>(value) + size);
    return s;
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    if (value == nullptr && size > 0) {
        emu::LogError("aclCreateIntArray: value is null but size is %llu", static_cast<unsigned long long>(size));
        return nullptr;
    }
    auto *a = new aclIntArray;
    a->values.assign(value, value + size);
    return a;
}

aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)
{
    if (value == nullptr && size > 0) {
        emu::LogError("aclCreateFloatArray: value is null but size is %llu", static_cast<unsigned long long>(size));
        return nullptr;
    }
    auto *a = new aclFloatArray;
    a->values.assign(value, value + size);
    return a;
}

aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)
{
    if (value == nullptr && size > 0) {
        emu::LogError("aclCreateBoolArray: value is null but size is %llu", static_cast<unsigned long long>(size));
        return nullptr;
    }
    auto *a = new aclBoolArray;
    a->values.assign(value, value + size);
    return a;
}

// The list takes ownership of the tensors: aclDestroyTensorList destroys them.
aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    if (value == nullptr && size > 0) {
        emu::LogError("aclCreateTensorList: value is null but size is %llu", static_cast<unsigned long long>(size));
        return nullptr;
    }
    auto *l = new aclTensorList;
    for (uint64_t i = 0; i < size; ++i) l->tensors.push_back(const_cast<aclTensor *>(value[i]));
    return l;
}

aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)
{
    if (value == nullptr && size > 0) {
        emu::LogError("aclCreateScalarList: value is null but size is %llu", static_cast<unsigned long long>(size));
        return nullptr;
    }
    auto *l = new aclScalarList;
    for (uint64_t i = 0; i < size; ++i) l->scalars.push_back(const_cast<aclScalar *>(value[i]));
    return l;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    delete tensor;
    return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    delete scalar;
    return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyIntArray(const aclIntArray *array)
{
    delete array;
    return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyFloatArray(const aclFloatArray *array)
{
    delete array;
    return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array)
{
    delete array;
    return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    if (array != nullptr)
        for (aclTensor *t : array->tensors) delete t;
    delete array;
    return ACLNN_SUCCESS;
}
aclnnStatus aclDestroyScalarList(const aclScalarList *array)
{
    if (array != nullptr)
        for (aclScalar *s : array->scalars) delete s;
    delete array;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    EMU_CHECK_NOT_NULL("aclGetViewShape", tensor);
    EMU_CHECK_NOT_NULL("aclGetViewShape", viewDims);
    EMU_CHECK_NOT_NULL("aclGetViewShape", viewDimsNum);
    *viewDims = CopyOut(tensor->viewShape);
    *viewDimsNum = tensor->viewShape.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    EMU_CHECK_NOT_NULL("aclGetViewStrides", tensor);
    EMU_CHECK_NOT_NULL("aclGetViewStrides", stridesValue);
    EMU_CHECK_NOT_NULL("aclGetViewStrides", stridesNum);
    *stridesValue = CopyOut(tensor->strides);
    *stridesNum = tensor->strides.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    EMU_CHECK_NOT_NULL("aclGetViewOffset", tensor);
    EMU_CHECK_NOT_NULL("aclGetViewOffset", offset);
    *offset = tensor->offset;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    EMU_CHECK_NOT_NULL("aclGetStorageShape", tensor);
    EMU_CHECK_NOT_NULL("aclGetStorageShape", storageDims);
    EMU_CHECK_NOT_NULL("aclGetStorageShape", storageDimsNum);
    *storageDims = CopyOut(tensor->storageShape);
    *storageDimsNum = tensor->storageShape.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    EMU_CHECK_NOT_NULL("aclGetFormat", tensor);
    EMU_CHECK_NOT_NULL("aclGetFormat", format);
    *format = tensor->format;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    EMU_CHECK_NOT_NULL("aclGetDataType", tensor);
    EMU_CHECK_NOT_NULL("aclGetDataType", dataType);
    *dataType = tensor->dataType;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr)
{
    EMU_CHECK_NOT_NULL("aclGetRawTensorAddr", tensor);
    EMU_CHECK_NOT_NULL("aclGetRawTensorAddr", addr);
    *addr = tensor->data;
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)
{
    EMU_CHECK_NOT_NULL("aclSetRawTensorAddr", tensor);
    tensor->data = addr;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size)
{
    EMU_CHECK_NOT_NULL("aclGetIntArraySize", array);
    EMU_CHECK_NOT_NULL("aclGetIntArraySize", size);
    *size = array->values.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size)
{
    EMU_CHECK_NOT_NULL("aclGetFloatArraySize", array);
    EMU_CHECK_NOT_NULL("aclGetFloatArraySize", size);
    *size = array->values.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size)
{
    EMU_CHECK_NOT_NULL("aclGetBoolArraySize", array);
    EMU_CHECK_NOT_NULL("aclGetBoolArraySize", size);
    *size = array->values.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size)
{
    EMU_CHECK_NOT_NULL("aclGetTensorListSize", tensorList);
    EMU_CHECK_NOT_NULL("aclGetTensorListSize", size);
    *size = tensorList->tensors.size();
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size)
{
    EMU_CHECK_NOT_NULL("aclGetScalarListSize", scalarList);
    EMU_CHECK_NOT_NULL("aclGetScalarListSize", size);
    *size = scalarList->scalars.size();
    return ACLNN_SUCCESS;
}

}  // extern "C"
