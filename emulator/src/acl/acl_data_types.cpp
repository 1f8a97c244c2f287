// aclDataTypeSize and the fp16 helpers of acl_base.h.
#include "acl/acl_base.h"
#include "emu/acl_objects.h"
#include "kernel/emu_types.h"  // the emulator's one binary16 conversion (round to nearest even)

extern "C" {

size_t aclDataTypeSize(aclDataType dataType)
{
    return static_cast<size_t>(ge::GetSizeByDataType(static_cast<ge::DataType>(dataType)));
}

float aclFloat16ToFloat(aclFloat16 value) { return emu::HalfBitsToFloat(value); }

aclFloat16 aclFloatToFloat16(float value) { return emu::FloatToHalfBits(value); }

}  // extern "C"

namespace emu {

const char *AclDataTypeName(aclDataType type)
{
    switch (type) {
        case ACL_FLOAT:
            return "ACL_FLOAT";
        case ACL_FLOAT16:
            return "ACL_FLOAT16";
        case ACL_INT8:
            return "ACL_INT8";
        case ACL_INT32:
            return "ACL_INT32";
        case ACL_UINT8:
            return "ACL_UINT8";
        case ACL_INT16:
            return "ACL_INT16";
        case ACL_UINT16:
            return "ACL_UINT16";
        case ACL_UINT32:
            return "ACL_UINT32";
        case ACL_INT64:
            return "ACL_INT64";
        case ACL_UINT64:
            return "ACL_UINT64";
        case ACL_DOUBLE:
            return "ACL_DOUBLE";
        case ACL_BOOL:
            return "ACL_BOOL";
        case ACL_STRING:
            return "ACL_STRING";
        case ACL_COMPLEX64:
            return "ACL_COMPLEX64";
        case ACL_COMPLEX128:
            return "ACL_COMPLEX128";
        case ACL_BF16:
            return "ACL_BF16";
        case ACL_INT4:
            return "ACL_INT4";
        case ACL_UINT1:
            return "ACL_UINT1";
        case ACL_COMPLEX32:
            return "ACL_COMPLEX32";
        case ACL_HIFLOAT8:
            return "ACL_HIFLOAT8";
        case ACL_FLOAT8_E5M2:
            return "ACL_FLOAT8_E5M2";
        case ACL_FLOAT8_E4M3FN:
            return "ACL_FLOAT8_E4M3FN";
        case ACL_FLOAT8_E8M0:
            return "ACL_FLOAT8_E8M0";
        default:
            return "ACL_DT_UNDEFINED";
    }
}

std::string ShapeString(const std::vector<int64_t> &shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

}  // namespace emu
