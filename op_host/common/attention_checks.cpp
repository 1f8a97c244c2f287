#include "attention_checks.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "op_log.h"

namespace fa_host {

int64_t TensorDesc::Numel() const
{
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::string TensorDesc::ShapeString() const
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
        s += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return s + "]";
}

TensorDesc Describe(const aclTensor *tensor)
{
    TensorDesc t;
    if (tensor == nullptr) return t;
    t.present = true;
    int64_t *dims = nullptr;
    uint64_t rank = 0;
    aclGetViewShape(tensor, &dims, &rank);
    t.shape.assign(dims, dims + rank);
    delete[] dims;
    aclGetDataType(tensor, &t.dtype);
    aclGetFormat(tensor, &t.format);
    int64_t *strides = nullptr;
    uint64_t nStrides = 0;
    aclGetViewStrides(tensor, &strides, &nStrides);
    int64_t expect = 1;
    for (uint64_t i = nStrides; i-- > 0;) {
        // size-1 and empty dimensions may carry any stride
        if (t.shape[i] > 1 && strides[i] != expect) t.contiguous = false;
        expect *= t.shape[i];
    }
    delete[] strides;
    if (t.Numel() == 0) t.contiguous = true;  // an empty view has no layout to violate
    return t;
}

const char *DtypeName(aclDataType dtype)
{
    switch (dtype) {
        case ACL_FLOAT: return "FLOAT";
        case ACL_FLOAT16: return "FLOAT16";
        case ACL_BF16: return "BFLOAT16";
        case ACL_INT8: return "INT8";
        case ACL_UINT8: return "UINT8";
        case ACL_BOOL: return "BOOL";
        case ACL_INT32: return "INT32";
        case ACL_INT64: return "INT64";
        case ACL_DOUBLE: return "DOUBLE";
        default: return "an unsupported dtype";
    }
}

void ParamChecker::Fail(aclnnStatus status, const std::string &message)
{
    if (status_ != 0) return;  // keep the first failure
    status_ = status;
    FA_LOGE("%s: %s", api_, message.c_str());
}

bool ParamChecker::NotNull(const void *ptr, const char *name, const char *what)
{
    if (ptr != nullptr) return true;
    Fail(STATUS_NULLPTR, std::string(name) + " is a null pointer (" + what + " must not be null)");
    return false;
}

bool ParamChecker::Require(bool cond, const char *name, const char *fmt, ...)
{
    if (cond) return true;
    char buf[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    Fail(STATUS_INVALID, std::string(name) + " " + buf);
    return false;
}

bool ParamChecker::DtypeIn(const TensorDesc &t, const char *name, std::initializer_list<aclDataType> allowed)
{
    std::string list;
    for (aclDataType d : allowed) {
        if (d == t.dtype) return true;
        list += (list.empty() ? "" : ", ") + std::string(DtypeName(d));
    }
    return Require(false, name, "has dtype %s (supported: %s)", DtypeName(t.dtype), list.c_str());
}

bool ParamChecker::SameDtype(const TensorDesc &t, const char *name, const TensorDesc &ref, const char *refName)
{
    return Require(t.dtype == ref.dtype, name, "has dtype %s but %s is %s (they must be the same)",
                   DtypeName(t.dtype), refName, DtypeName(ref.dtype));
}

bool ParamChecker::FormatND(const TensorDesc &t, const char *name)
{
    return Require(t.format == ACL_FORMAT_ND, name, "has format %d (only ND is supported)",
                   static_cast<int>(t.format));
}

bool ParamChecker::RankIn(const TensorDesc &t, const char *name, size_t lo, size_t hi)
{
    return Require(t.shape.size() >= lo && t.shape.size() <= hi, name, "has shape %s (%zu dims; %zu to %zu allowed)",
                   t.ShapeString().c_str(), t.shape.size(), lo, hi);
}

bool ParamChecker::Contiguous(const TensorDesc &t, const char *name)
{
    return Require(t.contiguous, name, "is not contiguous (non-contiguous tensors are not supported)");
}

Layout ParseLayout(const char *text)
{
    if (text == nullptr) return Layout::INVALID;
    if (std::strcmp(text, "BSH") == 0) return Layout::BSH;
    if (std::strcmp(text, "BSND") == 0) return Layout::BSND;
    if (std::strcmp(text, "BNSD") == 0) return Layout::BNSD;
    if (std::strcmp(text, "BNSD_BSND") == 0) return Layout::BNSD_BSND;
    if (std::strcmp(text, "TND") == 0) return Layout::TND;
    return Layout::INVALID;
}

const char *LayoutName(Layout layout)
{
    switch (layout) {
        case Layout::BSH: return "BSH";
        case Layout::BSND: return "BSND";
        case Layout::BNSD: return "BNSD";
        case Layout::BNSD_BSND: return "BNSD_BSND";
        case Layout::TND: return "TND";
        default: return "INVALID";
    }
}

bool DimsOf(const TensorDesc &t, Layout layout, int64_t heads, BnsdDims &out)
{
    const auto &s = t.shape;
    switch (layout) {
        case Layout::BSH:
            if (s.size() != 3 || heads <= 0) return false;
            out = {s[0], heads, s[1], s[2] / heads};
            return true;
        case Layout::BSND:
            if (s.size() != 4) return false;
            out = {s[0], s[2], s[1], s[3]};
            return true;
        case Layout::BNSD:
        case Layout::BNSD_BSND:
            if (s.size() != 4) return false;
            out = {s[0], s[1], s[2], s[3]};
            return true;
        default:
            return false;
    }
}

}  // namespace fa_host
