#include "attention_checks.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "op_log.h"
#include "acl_int_array.h"

namespace fa_host {

int64_t TensorDesc::Numel() const
{
    // Saturating: a hostile shape must not overflow here (tensor_memory_checks.h rejects it).
    int64_t n = 1;
    for (int64_t d : shape) {
        if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
    }
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
        if (__builtin_mul_overflow(expect, t.shape[i], &expect)) expect = INT64_MAX;  // saturate: see Numel
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

bool SeqLengths::AllEqual() const
{
    for (size_t b = 0; b < q.size(); ++b) {
        if (q[b] != kv[b]) return false;
    }
    return true;
}

bool SeqLengths::AnyEmptyQuery() const
{
    for (int64_t len : q) {
        if (len == 0) return true;
    }
    return false;
}

int64_t DropMaskBits(int64_t heads, const SeqLengths &s)
{
    int64_t bits = 0;
    for (size_t b = 0; b < s.q.size(); ++b) bits += heads * s.q[b] * ((s.kv[b] + 15) / 16 * 16);
    return bits;
}

bool CheckPrefix(ParamChecker &c, const aclIntArray *prefix, const char *modeName, int64_t sparseMode, bool hasMask,
                 const SeqLengths &s)
{
    if (sparseMode != 6 || !hasMask) return true;
    if (!c.Require(prefix != nullptr, "prefixOptional", "is null but %s 6 with a mask needs it", modeName)) {
        return false;
    }
    uint64_t n = 0;
    aclGetIntArraySize(prefix, &n);
    if (!c.Require(n == s.q.size(), "prefixOptional", "has %llu values but there are %zu batches",
                   static_cast<unsigned long long>(n), s.q.size()) ||
        !c.Require(static_cast<int64_t>(s.q.size()) <= MAX_BATCH_PREFIX, "prefixOptional",
                   "is given with %zu batches (at most %lld with prefix)", s.q.size(),
                   static_cast<long long>(MAX_BATCH_PREFIX))) {
        return false;
    }
    for (uint64_t b = 0; b < n; ++b) {
        const int64_t p = (*prefix)[b], sq = s.q[b], skv = s.kv[b];
        const int64_t lo = sq > skv ? 0 : skv - sq;
        if (!c.Require(p >= lo && p <= skv, "prefixOptional", "[%llu] is %lld (must be in [%lld, Skv = %lld] for Sq = %lld)",
                       static_cast<unsigned long long>(b), static_cast<long long>(p), static_cast<long long>(lo),
                       static_cast<long long>(skv), static_cast<long long>(sq))) {
            return false;
        }
    }
    return true;
}

bool CheckPseShape(ParamChecker &c, const TensorDesc &p, const char *name, const char *modeName, int64_t sparseMode,
                   int64_t heads, const SeqLengths &s)
{
    const int64_t batch = static_cast<int64_t>(s.q.size());
    if (!c.Require(p.shape.size() == 4 && (p.shape[0] == 1 || p.shape[0] == batch) && p.shape[1] == heads, name,
                   "has shape %s (must be [B or 1, N, H, Skv] with B = %lld, N = %lld)", p.ShapeString().c_str(),
                   static_cast<long long>(batch), static_cast<long long>(heads)) ||
        !c.Require(p.shape[3] >= s.maxKv, name, "has %lld columns, fewer than maxSkv = %lld",
                   static_cast<long long>(p.shape[3]), static_cast<long long>(s.maxKv))) {
        return false;
    }
    if (p.shape[2] >= s.maxQ) return true;
    const bool causal = sparseMode == 0 || sparseMode == 2 || sparseMode == 3;
    return c.Require(p.shape[2] == ALIBI_COMPRESSED_ROWS && s.AllEqual() && causal, name,
                     "has %lld rows for maxSq = %lld: fewer rows are only allowed as the alibi-compressed form "
                     "(H = %lld, Sq == Skv in every batch, %s 0, 2 or 3)",
                     static_cast<long long>(p.shape[2]), static_cast<long long>(s.maxQ),
                     static_cast<long long>(ALIBI_COMPRESSED_ROWS), modeName);
}

}  // namespace fa_host
