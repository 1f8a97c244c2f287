// Parameter checks shared by the attention operators' aclnn GetWorkspaceSize functions.
// Header-only and for op_api code only: it calls libnnopbase (aclGetViewShape, aclIntArray
// access, ...), which the public op_api library links and the tiling libraries do not
// (docs/npu.md, "Which code goes where").
// Every failed check logs one line "<api>: <parameter> <what is wrong> (<the rule>)" and
// yields the documented aclnn status: 161001 for a null required argument, 161002 for a
// dtype / format / shape / attribute violation. A checker keeps the first failure.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "aclnn/aclnn_base.h"
#include "../attention_layout.h"
#include "../checked_math.h"
#include "../op_log.h"
#include "opdev/common_types.h"

namespace fa_host {

constexpr aclnnStatus STATUS_NULLPTR = 161001;  // ACLNN_ERR_PARAM_NULLPTR
constexpr aclnnStatus STATUS_INVALID = 161002;  // ACLNN_ERR_PARAM_INVALID

class ParamChecker {
public:
    explicit ParamChecker(const char *api) : api_(api) {}

    aclnnStatus Status() const { return status_; }
    bool Ok() const { return status_ == 0; }

    // 161001 when `ptr` is null; `what` says which kind ("a required input", "an output", ...).
    bool NotNull(const void *ptr, const char *name, const char *what);
    // 161002 with the formatted message unless `cond` holds.
    bool Require(bool cond, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

    bool DtypeIn(const TensorDesc &t, const char *name, std::initializer_list<aclDataType> allowed);
    bool SameDtype(const TensorDesc &t, const char *name, const TensorDesc &ref, const char *refName);
    bool FormatND(const TensorDesc &t, const char *name);
    bool RankIn(const TensorDesc &t, const char *name, size_t lo, size_t hi);
    bool Contiguous(const TensorDesc &t, const char *name);

private:
    void Fail(aclnnStatus status, const std::string &message);
    const char *api_;
    aclnnStatus status_ = 0;
};

// ------------------------------------------------------------------ TND (varlen) arguments
// Limits shared by the TND operators (specs 001 and 003, Atlas A2).
constexpr int64_t MAX_BATCH_PREFIX = 1024;       // batches with prefixOptional
constexpr int64_t ALIBI_COMPRESSED_ROWS = 1024;  // H of the alibi-compressed position bias

// Per-batch query / key lengths (from the cumulative actualSeqQLen / actualSeqKvLen) and their
// maxima.
struct SeqLengths {
    std::vector<int64_t> q, kv;
    int64_t maxQ = 0, maxKv = 0;
    bool AllEqual() const;       // Sq == Skv in every batch
    bool AnyEmptyQuery() const;  // some batch has Sq == 0
};

// ------------------------------------------------------------------ definitions

// The view shape, dtype, format and contiguity of an aclTensor argument (absent when null).
inline TensorDesc Describe(const aclTensor *tensor)
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
        expect = SaturatingMul(expect, t.shape[i]);
    }
    delete[] strides;
    if (t.Numel() == 0) t.contiguous = true;  // an empty view has no layout to violate
    return t;
}

inline const char *DtypeName(aclDataType dtype)
{
    switch (dtype) {
        case ACL_FLOAT:
            return "FLOAT";
        case ACL_FLOAT16:
            return "FLOAT16";
        case ACL_BF16:
            return "BFLOAT16";
        case ACL_INT8:
            return "INT8";
        case ACL_UINT8:
            return "UINT8";
        case ACL_BOOL:
            return "BOOL";
        case ACL_INT32:
            return "INT32";
        case ACL_INT64:
            return "INT64";
        case ACL_DOUBLE:
            return "DOUBLE";
        default:
            return "an unsupported dtype";
    }
}

inline void ParamChecker::Fail(aclnnStatus status, const std::string &message)
{
    if (status_ != 0) return;  // keep the first failure
    status_ = status;
    FA_LOGE("%s: %s", api_, message.c_str());
}

inline bool ParamChecker::NotNull(const void *ptr, const char *name, const char *what)
{
    if (ptr != nullptr) return true;
    Fail(STATUS_NULLPTR, std::string(name) + " is a null pointer (" + what + " must not be null)");
    return false;
}

inline bool ParamChecker::Require(bool cond, const char *name, const char *fmt, ...)
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

inline bool ParamChecker::DtypeIn(const TensorDesc &t, const char *name, std::initializer_list<aclDataType> allowed)
{
    std::string list;
    for (aclDataType d : allowed) {
        if (d == t.dtype) return true;
        list += (list.empty() ? "" : ", ") + std::string(DtypeName(d));
    }
    return Require(false, name, "has dtype %s (supported: %s)", DtypeName(t.dtype), list.c_str());
}

inline bool ParamChecker::SameDtype(const TensorDesc &t, const char *name, const TensorDesc &ref, const char *refName)
{
    return Require(t.dtype == ref.dtype, name, "has dtype %s but %s is %s (they must be the same)", DtypeName(t.dtype),
                   refName, DtypeName(ref.dtype));
}

inline bool ParamChecker::FormatND(const TensorDesc &t, const char *name)
{
    return Require(t.format == ACL_FORMAT_ND, name, "has format %d (only ND is supported)", static_cast<int>(t.format));
}

inline bool ParamChecker::RankIn(const TensorDesc &t, const char *name, size_t lo, size_t hi)
{
    return Require(t.shape.size() >= lo && t.shape.size() <= hi, name, "has shape %s (%zu dims; %zu to %zu allowed)",
                   t.ShapeString().c_str(), t.shape.size(), lo, hi);
}

inline bool ParamChecker::Contiguous(const TensorDesc &t, const char *name)
{
    return Require(t.contiguous, name, "is not contiguous (non-contiguous tensors are not supported)");
}

inline bool SeqLengths::AllEqual() const
{
    for (size_t b = 0; b < q.size(); ++b) {
        if (q[b] != kv[b]) return false;
    }
    return true;
}

inline bool SeqLengths::AnyEmptyQuery() const
{
    for (int64_t len : q) {
        if (len == 0) return true;
    }
    return false;
}

// Keep bits of the dropout mask as the specs size it: dense, N * Sq * Skv per batch, batches one
// after the other ((sum over b of N * Sq * Skv) / 8 bytes). A mask padded per row is not a
// second accepted layout: its size can equal a dense mask's with trailing bytes, so the two
// cannot be told apart by size.
inline int64_t DropMaskBits(int64_t heads, const SeqLengths &s)
{
    int64_t bits = 0;
    for (size_t b = 0; b < s.q.size(); ++b) {
        bits = SaturatingAdd(bits, SaturatingMul(heads, SaturatingMul(s.q[b], s.kv[b])));
    }
    return bits;
}

// 161002 unless a dropout mask of `bytes` bytes holds `bits` keep bits; `name` is the API's
// name of the mask.
inline bool CheckDropMaskSize(ParamChecker &c, const char *name, int64_t bytes, int64_t bits)
{
    return c.Require(bytes >= bits / 8 + (bits % 8 != 0), name,
                     "has %lld bytes but the keep bits of all batches need %lld (sum over batches of N x Sq x "
                     "Skv bits, 8 per byte, rows not padded)",
                     static_cast<long long>(bytes), static_cast<long long>(bits / 8 + (bits % 8 != 0)));
}

// The band of sparse modes 0, 4, 7 and 8 with a mask is [-preTokens, nextTokens] around the
// diagonal; the sparse-mode page requires it to be non-empty (preTokens + nextTokens >= 0,
// evaluated without overflow for any int64 pair). `preName` / `nextName` are the API's names.
inline bool CheckBandIntersects(ParamChecker &c, const char *preName, const char *nextName, int64_t sparseMode,
                                bool hasMask, int64_t pre, int64_t next)
{
    const bool band = sparseMode == 0 || sparseMode == 4 || sparseMode == 7 || sparseMode == 8;
    if (!hasMask || !band) return true;
    return c.Require(SaturatingAdd(pre, next) >= 0, nextName,
                     "is %lld with %s %lld: the band [-pre, next] around the diagonal is empty (they must "
                     "intersect)",
                     static_cast<long long>(next), preName, static_cast<long long>(pre));
}

// Sparse mode 6 (prefix, compressed mask): with a mask prefixOptional is required; whenever it
// is given in mode 6 it holds one value per batch (at most MAX_BATCH_PREFIX batches), each in
// [Skv - Sq, Skv] (Sq <= Skv) or [0, Skv] (Sq > Skv) (sparse-mode page and specs 001 / 003).
// `modeName` is the API's name of its sparse-mode parameter.
inline bool CheckPrefix(ParamChecker &c, const aclIntArray *prefix, const char *modeName, int64_t sparseMode,
                        bool hasMask, const SeqLengths &s)
{
    if (sparseMode != 6 || (prefix == nullptr && !hasMask)) return true;
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
        if (!c.Require(p >= lo && p <= skv, "prefixOptional",
                       "[%llu] is %lld (must be in [%lld, Skv = %lld] for Sq = %lld)",
                       static_cast<unsigned long long>(b), static_cast<long long>(p), static_cast<long long>(lo),
                       static_cast<long long>(skv), static_cast<long long>(sq))) {
            return false;
        }
    }
    return true;
}

// The shape of a position bias of types 0/1 named `name`: [B or 1, N, H, Skv'] with Skv' >=
// maxSkv, and H >= maxSq unless it is the alibi-compressed form (H = ALIBI_COMPRESSED_ROWS,
// Sq == Skv in every batch, sparse mode 0, 2 or 3).
inline bool CheckPseShape(ParamChecker &c, const TensorDesc &p, const char *name, const char *modeName,
                          int64_t sparseMode, int64_t heads, const SeqLengths &s)
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
