// Parameter checks shared by the attention operators' aclnn GetWorkspaceSize functions.
// Every failed check logs one line "<api>: <parameter> <what is wrong> (<the rule>)" and
// yields the documented aclnn status: 161001 for a null required argument, 161002 for a
// dtype / format / shape / attribute violation. A checker keeps the first failure.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "aclnn/aclnn_base.h"

namespace fa_host {

constexpr aclnnStatus STATUS_NULLPTR = 161001;  // ACLNN_ERR_PARAM_NULLPTR
constexpr aclnnStatus STATUS_INVALID = 161002;  // ACLNN_ERR_PARAM_INVALID

// What a check needs to know about one tensor argument.
struct TensorDesc {
    bool present = false;
    aclDataType dtype = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_ND;
    std::vector<int64_t> shape;
    bool contiguous = true;
    int64_t Numel() const;
    std::string ShapeString() const;
};

TensorDesc Describe(const aclTensor *tensor);
const char *DtypeName(aclDataType dtype);

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

// ------------------------------------------------------------------ layouts
enum class Layout { BSH, BSND, BNSD, BNSD_BSND, TND, INVALID };
Layout ParseLayout(const char *text);
const char *LayoutName(Layout layout);

// (B, N, S, D) of a Q/K/V tensor in `layout` (BNSD_BSND reads as BNSD); for BSH, N is the
// given head count and D = H / N. Returns false when the rank does not fit the layout.
struct BnsdDims {
    int64_t b = 0, n = 0, s = 0, d = 0;
};
bool DimsOf(const TensorDesc &t, Layout layout, int64_t heads, BnsdDims &out);

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

// Keep bits the dropout mask must hold: N * Sq * pad16(Skv) per batch, batches one after the other.
int64_t DropMaskBits(int64_t heads, const SeqLengths &s);

// Sparse mode 6 with a mask needs prefixOptional: one value per batch (at most
// MAX_BATCH_PREFIX batches), each in [Skv - Sq, Skv] (Sq <= Skv) or [0, Skv] (Sq > Skv).
// `modeName` is the API's name of its sparse-mode parameter.
bool CheckPrefix(ParamChecker &c, const aclIntArray *prefix, const char *modeName, int64_t sparseMode, bool hasMask,
                 const SeqLengths &s);

// The shape of a position bias of types 0/1 named `name`: [B or 1, N, H, Skv'] with Skv' >=
// maxSkv, and H >= maxSq unless it is the alibi-compressed form (H = ALIBI_COMPRESSED_ROWS,
// Sq == Skv in every batch, sparse mode 0, 2 or 3).
bool CheckPseShape(ParamChecker &c, const TensorDesc &p, const char *name, const char *modeName, int64_t sparseMode,
                   int64_t heads, const SeqLengths &s);

}  // namespace fa_host
