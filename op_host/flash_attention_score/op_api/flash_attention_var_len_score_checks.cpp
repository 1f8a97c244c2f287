// Validation of aclnnFlashAttentionVarLenScore's arguments against spec 001 (Atlas A2 rules)
// and the limits of this implementation (each says so in its message). Target-neutral.
#include "flash_attention_var_len_score_checks.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../common/op_api/attention_checks.h"
#include "../../common/op_api/tensor_memory_checks.h"

namespace {

using fa_host::ParamChecker;
using fa_host::TensorDesc;
using Seqs = fa_host::SeqLengths;

// Spec 001, Atlas A2 limits (TND).
constexpr int64_t MAX_T = 1024 * 1024;
constexpr int64_t MAX_BATCH = 2048;
constexpr int64_t MAX_HEADS = 256;
constexpr int64_t MAX_SEQ = 1024 * 1024;
constexpr int64_t MAX_HEAD_DIM = 512;

long long L(int64_t v) { return static_cast<long long>(v); }

bool ReadCumulative(ParamChecker &c, const aclIntArray *arr, const char *name, int64_t total,
                    std::vector<int64_t> &lens)
{
    uint64_t n = 0;
    aclGetIntArraySize(arr, &n);
    if (!c.Require(n >= 1 && static_cast<int64_t>(n) <= MAX_BATCH, name, "has %llu values (batch must be in [1, %lld])",
                   static_cast<unsigned long long>(n), L(MAX_BATCH))) {
        return false;
    }
    int64_t prev = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const int64_t v = (*arr)[i];
        if (!c.Require(v >= prev, name, "[%llu] is %lld: cumulative lengths must not decrease (previous %lld)",
                       static_cast<unsigned long long>(i), L(v), L(prev)) ||
            !c.Require(v - prev <= MAX_SEQ, name, "[%llu]: sequence length %lld exceeds %lld",
                       static_cast<unsigned long long>(i), L(v - prev), L(MAX_SEQ))) {
            return false;
        }
        lens.push_back(v - prev);
        prev = v;
    }
    return c.Require(prev <= total, name, "ends at %lld, beyond the T axis (%lld) of its tensor", L(prev), L(total));
}

bool CheckShapes(ParamChecker &c, const VarLenScoreArgs &a, const TensorDesc &q, const TensorDesc &k,
                 const TensorDesc &v, Seqs &s)
{
    if (!c.Require(a.inputLayout != nullptr && std::strcmp(a.inputLayout, "TND") == 0, "inputLayout",
                   "is \"%s\" (aclnnFlashAttentionVarLenScore supports only TND)", a.inputLayout)) {
        return false;
    }
    for (const auto *t : {&q, &k, &v}) {
        const char *name = t == &q ? "query" : (t == &k ? "key" : "value");
        if (!c.Require(t->shape.size() == 3, name, "has shape %s but TND needs 3 dims [T, N, D]",
                       t->ShapeString().c_str())) {
            return false;
        }
    }
    const int64_t n = q.shape[1], nkv = k.shape[1], d = q.shape[2];
    if (!c.Require(a.headNum >= 1 && a.headNum <= MAX_HEADS, "headNum", "is %lld (must be in [1, %lld])", L(a.headNum),
                   L(MAX_HEADS)) ||
        !c.Require(n == a.headNum, "headNum", "is %lld but query has N = %lld", L(a.headNum), L(n)) ||
        !c.Require(v.shape == k.shape, "value", "has shape %s but key has %s (they must match)",
                   v.ShapeString().c_str(), k.ShapeString().c_str()) ||
        !c.Require(k.shape[2] == d, "key", "has head dim D = %lld but query has %lld", L(k.shape[2]), L(d)) ||
        !c.Require(nkv >= 1 && n % nkv == 0, "key", "has N = %lld: query heads %lld must be a multiple of it", L(nkv),
                   L(n)) ||
        !c.Require(d >= 1 && d <= MAX_HEAD_DIM, "query", "has head dim D = %lld (must be in [1, %lld])", L(d),
                   L(MAX_HEAD_DIM)) ||
        !c.Require(q.shape[0] >= 1 && q.shape[0] <= MAX_T, "query", "has T = %lld (must be in [1, %lld])",
                   L(q.shape[0]), L(MAX_T)) ||
        !c.Require(k.shape[0] >= 1 && k.shape[0] <= MAX_T, "key", "has T = %lld (must be in [1, %lld])", L(k.shape[0]),
                   L(MAX_T))) {
        return false;
    }
    if (!c.NotNull(a.actualSeqQLen, "actualSeqQLenOptional", "required with the TND layout") ||
        !c.NotNull(a.actualSeqKvLen, "actualSeqKvLenOptional", "required with the TND layout") ||
        !ReadCumulative(c, a.actualSeqQLen, "actualSeqQLenOptional", q.shape[0], s.q) ||
        !ReadCumulative(c, a.actualSeqKvLen, "actualSeqKvLenOptional", k.shape[0], s.kv) ||
        !c.Require(s.q.size() == s.kv.size(), "actualSeqKvLenOptional",
                   "has %zu batches but actualSeqQLenOptional has %zu", s.kv.size(), s.q.size())) {
        return false;
    }
    for (size_t b = 0; b < s.q.size(); ++b) {
        if (!c.Require(s.q[b] == 0 || s.kv[b] > 0, "actualSeqKvLenOptional",
                       "gives batch %zu no keys while it has %lld queries (Sq != 0 with Skv == 0 is not supported)", b,
                       L(s.q[b]))) {
            return false;
        }
        s.maxQ = std::max(s.maxQ, s.q[b]);
        s.maxKv = std::max(s.maxKv, s.kv[b]);
    }
    return true;
}

bool CheckAttributes(ParamChecker &c, const VarLenScoreArgs &a, bool hasMask)
{
    const int64_t m = a.sparseMode;
    if (!c.Require(m >= 0 && m <= 8 && m != 5, "sparseModeOptional", "is %lld (supported: 0, 1, 2, 3, 4, 6, 7, 8)",
                   L(m)) ||
        !c.Require(a.innerPrecise >= 0 && a.innerPrecise <= 2, "innerPreciseOptional", "is %lld (must be 0, 1 or 2)",
                   L(a.innerPrecise)) ||
        !c.Require(a.keepProb > 0.0 && a.keepProb <= 1.0, "keepProbOptional", "is %g (must lie in (0, 1])",
                   a.keepProb) ||
        !c.Require(std::isfinite(a.scaleValue) && std::fabs(a.scaleValue) <= FLT_MAX, "scaleValueOptional",
                   "is %g (must be finite as a float: the kernel scales in float)", a.scaleValue)) {
        return false;
    }
    return fa_host::CheckBandIntersects(c, "preTokensOptional", "nextTokensOptional", m, hasMask, a.preTokens,
                                        a.nextTokens);
}

bool CheckMask(ParamChecker &c, const VarLenScoreArgs &a, const TensorDesc &m, const Seqs &s)
{
    if (!m.present) return true;
    if (!c.DtypeIn(m, "attenMaskOptional", {ACL_BOOL, ACL_UINT8}) || !c.FormatND(m, "attenMaskOptional") ||
        !c.Contiguous(m, "attenMaskOptional") ||
        !c.Require(m.shape.size() == 2, "attenMaskOptional", "has shape %s but TND needs [maxSq, maxSkv]",
                   m.ShapeString().c_str())) {
        return false;
    }
    // Modes 0 and 1 read the mask itself; the others generate their mask from the mode.
    return a.sparseMode > 1 || c.Require(m.shape[0] >= s.maxQ && m.shape[1] >= s.maxKv, "attenMaskOptional",
                                         "has shape %s which does not cover maxSq x maxSkv = %lld x %lld",
                                         m.ShapeString().c_str(), L(s.maxQ), L(s.maxKv));
}

bool CheckPse(ParamChecker &c, const VarLenScoreArgs &a, const TensorDesc &p, const TensorDesc &q, const Seqs &s)
{
    if (!p.present) return true;
    if (!c.SameDtype(p, "realShiftOptional", q, "query") || !c.FormatND(p, "realShiftOptional") ||
        !c.Contiguous(p, "realShiftOptional") ||
        !c.Require(a.sparseMode != 7, "realShiftOptional", "is given with sparseModeOptional 7 (not supported)")) {
        return false;
    }
    return c.Require(!s.AnyEmptyQuery(), "realShiftOptional", "is given while a batch has Sq = 0 (not supported)") &&
           c.Require(a.sparseMode != 8 || s.AllEqual(), "realShiftOptional",
                     "is given with sparseModeOptional 8 but Sq != Skv in some batch (needs equal lengths)") &&
           fa_host::CheckPseShape(c, p, "realShiftOptional", "sparseModeOptional", a.sparseMode, q.shape[1], s);
}

bool CheckOutputs(ParamChecker &c, const VarLenScoreArgs &a, const TensorDesc &q)
{
    const TensorDesc mx = fa_host::Describe(a.softmaxMax);
    const TensorDesc sm = fa_host::Describe(a.softmaxSum);
    const TensorDesc o = fa_host::Describe(a.attentionOut);
    const std::vector<int64_t> stat{q.shape[0], q.shape[1], 8};
    TensorDesc want;
    want.shape = stat;
    for (const auto &named : {std::make_pair(&mx, "softmaxMaxOut"), std::make_pair(&sm, "softmaxSumOut")}) {
        if (!c.DtypeIn(*named.first, named.second, {ACL_FLOAT}) || !c.FormatND(*named.first, named.second) ||
            !c.Contiguous(*named.first, named.second) ||
            !c.Require(named.first->shape == stat, named.second, "has shape %s but must be %s ([T, N, 8])",
                       named.first->ShapeString().c_str(), want.ShapeString().c_str())) {
            return false;
        }
    }
    if (a.softmaxOut != nullptr) {
        const TensorDesc so = fa_host::Describe(a.softmaxOut);
        if (!c.DtypeIn(so, "softmaxOutOut", {ACL_FLOAT16, ACL_BF16, ACL_FLOAT}) || !c.FormatND(so, "softmaxOutOut")) {
            return false;
        }
    }
    return c.SameDtype(o, "attentionOutOut", q, "query") && c.FormatND(o, "attentionOutOut") &&
           c.Contiguous(o, "attentionOutOut") &&
           c.Require(o.shape == q.shape, "attentionOutOut", "has shape %s but must be query's %s",
                     o.ShapeString().c_str(), q.ShapeString().c_str());
}

// keep_prob == 1 disables dropout whatever the mask; keep_prob < 1 without a mask drops nothing.
bool CheckDropMask(ParamChecker &c, const VarLenScoreArgs &a, const TensorDesc &drop, const Seqs &s)
{
    if (!drop.present || a.keepProb >= 1.0) return true;
    const int64_t bits = fa_host::DropMaskBits(fa_host::Describe(a.query).shape[1], s);
    return c.Contiguous(drop, "dropMaskOptional") &&
           fa_host::CheckDropMaskSize(c, "dropMaskOptional", drop.Numel(), bits);
}

}  // namespace

bool VarLenScoreUsesPrefix(const VarLenScoreArgs &a) { return a.sparseMode == 6 && a.attenMask != nullptr; }

aclnnStatus FlashAttentionVarLenScoreCheckParams(const VarLenScoreArgs &a, const uint64_t *workspaceSize,
                                                 aclOpExecutor *const *executor)
{
    ParamChecker c("aclnnFlashAttentionVarLenScore");
    if (!c.NotNull(a.query, "query", "a required input") || !c.NotNull(a.key, "key", "a required input") ||
        !c.NotNull(a.value, "value", "a required input") ||
        !c.NotNull(a.inputLayout, "inputLayout", "a required attribute") ||
        !c.NotNull(a.softmaxMax, "softmaxMaxOut", "an output") ||
        !c.NotNull(a.softmaxSum, "softmaxSumOut", "an output") ||
        !c.NotNull(a.attentionOut, "attentionOutOut", "an output") ||
        !c.NotNull(workspaceSize, "workspaceSize", "an output") || !c.NotNull(executor, "executor", "an output")) {
        return c.Status();
    }
    if (!fa_host::CheckTensorsMemory(c, {{a.query, "query"},
                                         {a.key, "key"},
                                         {a.value, "value"},
                                         {a.realShift, "realShiftOptional"},
                                         {a.dropMask, "dropMaskOptional"},
                                         {a.paddingMask, "paddingMaskOptional"},
                                         {a.attenMask, "attenMaskOptional"},
                                         {a.softmaxMax, "softmaxMaxOut"},
                                         {a.softmaxSum, "softmaxSumOut"},
                                         {a.softmaxOut, "softmaxOutOut"},
                                         {a.attentionOut, "attentionOutOut"}})) {
        return c.Status();
    }
    const TensorDesc q = fa_host::Describe(a.query);
    const TensorDesc k = fa_host::Describe(a.key);
    const TensorDesc v = fa_host::Describe(a.value);
    const TensorDesc m = fa_host::Describe(a.attenMask);
    const TensorDesc p = fa_host::Describe(a.realShift);
    const TensorDesc drop = fa_host::Describe(a.dropMask);
    const TensorDesc pad = fa_host::Describe(a.paddingMask);
    Seqs s;
    bool ok =
        c.DtypeIn(q, "query", {ACL_FLOAT16, ACL_BF16, ACL_FLOAT}) && c.SameDtype(k, "key", q, "query") &&
        c.SameDtype(v, "value", q, "query") && c.FormatND(q, "query") && c.FormatND(k, "key") &&
        c.FormatND(v, "value") && c.Contiguous(q, "query") && c.Contiguous(k, "key") && c.Contiguous(v, "value") &&
        (!drop.present || (c.DtypeIn(drop, "dropMaskOptional", {ACL_UINT8}) && c.FormatND(drop, "dropMaskOptional"))) &&
        (!pad.present || (c.DtypeIn(pad, "paddingMaskOptional", {ACL_FLOAT16, ACL_BF16, ACL_FLOAT}) &&
                          c.FormatND(pad, "paddingMaskOptional"))) &&
        CheckShapes(c, a, q, k, v, s) && CheckAttributes(c, a, m.present) && CheckMask(c, a, m, s) &&
        fa_host::CheckPrefix(c, a.prefix, "sparseModeOptional", a.sparseMode, m.present, s) &&
        CheckPse(c, a, p, q, s) && CheckOutputs(c, a, q);
    ok = ok && CheckDropMask(c, a, drop, s);
    return ok ? ACLNN_SUCCESS : c.Status();
}
