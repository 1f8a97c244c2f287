// Validation of aclnnFlashAttentionUnpaddingScoreGradV5's arguments against spec 003 (Atlas A2
// rules), plus the features this implementation does not provide yet (161002 with a message
// saying so; docs/ops/flash_attention_unpadding_score_grad_v5.md lists them).
#include "flash_attention_score_grad_checks.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "../../common/attention_checks.h"
#if __has_include("emu/acl_objects.h")
#include "emu/acl_objects.h"
#else
#include "opdev/common_types.h"
#endif

namespace {

using fa_host::ParamChecker;
using fa_host::TensorDesc;

constexpr int64_t MAX_T = 1048576;      // T: 1 ~ 1M
constexpr int64_t MAX_BATCH = 2097152;  // B: 1 ~ 2M
constexpr int64_t MAX_HEADS = 256;
constexpr int64_t MAX_SEQ = 1048576;
constexpr int64_t MAX_HEAD_DIM = 768;

long long L(int64_t v) { return static_cast<long long>(v); }

bool Unsupported(ParamChecker &c, bool present, const char *name, const char *feature)
{
    return c.Require(!present, name, "is given: %s is not implemented by this kernel yet", feature);
}

// A TND tensor of `dtype`-family with the exact expected shape.
bool CheckTnd(ParamChecker &c, const TensorDesc &t, const char *name, const TensorDesc &ref, const char *refName,
              const std::vector<int64_t> &shape)
{
    TensorDesc want;
    want.shape = shape;
    return c.SameDtype(t, name, ref, refName) && c.FormatND(t, name) && c.Contiguous(t, name) &&
           c.Require(t.shape == shape, name, "has shape %s but must be %s", t.ShapeString().c_str(),
                     want.ShapeString().c_str());
}

// Cumulative lengths: non-decreasing, within [0, rows]; returns the largest per-batch length.
bool CheckCumulative(ParamChecker &c, const aclIntArray *a, const char *name, int64_t rows, std::vector<int64_t> &out)
{
    uint64_t n = 0;
    aclGetIntArraySize(a, &n);
    if (!c.Require(n >= 1 && static_cast<int64_t>(n) <= MAX_BATCH, name, "has %llu values (batch B must be in [1, %lld])",
                   static_cast<unsigned long long>(n), L(MAX_BATCH))) {
        return false;
    }
    int64_t prev = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const int64_t v = (*a)[i];
        if (!c.Require(v >= prev && v <= rows, name,
                       "[%llu] is %lld: the cumulative lengths must be non-decreasing and within [0, T = %lld]",
                       static_cast<unsigned long long>(i), L(v), L(rows)) ||
            !c.Require(v - prev <= MAX_SEQ, name, "[%llu]: batch length %lld exceeds S <= %lld",
                       static_cast<unsigned long long>(i), L(v - prev), L(MAX_SEQ))) {
            return false;
        }
        out.push_back(v);
        prev = v;
    }
    return true;
}

bool CheckMask(ParamChecker &c, const TensorDesc &m, const FagV5Args &a, int64_t batch, int64_t heads, int64_t maxSq,
               int64_t maxSkv)
{
    if (!m.present) return true;
    if (!c.DtypeIn(m, "attenMaskOptional", {ACL_BOOL, ACL_UINT8}) || !c.FormatND(m, "attenMaskOptional") ||
        !c.Contiguous(m, "attenMaskOptional") ||
        !c.Require(m.shape.size() == 2 || m.shape.size() == 4, "attenMaskOptional",
                   "has shape %s (must be [B,N,Sq,Skv], [B,1,Sq,Skv], [1,1,Sq,Skv] or [Sq,Skv])",
                   m.ShapeString().c_str())) {
        return false;
    }
    if (m.shape.size() == 4 &&
        !c.Require((m.shape[0] == 1 || m.shape[0] == batch) && (m.shape[1] == 1 || m.shape[1] == heads) &&
                       !(m.shape[0] == 1 && m.shape[1] != 1),
                   "attenMaskOptional", "has shape %s: leading dims must be (B,N), (B,1) or (1,1) with B = %lld, N = %lld",
                   m.ShapeString().c_str(), L(batch), L(heads))) {
        return false;
    }
    if (a.sparseMode > 1) return true;  // modes 2-8 generate the mask; the tensor is a compressed form
    const size_t r = m.shape.size();
    return c.Require(m.shape[r - 2] >= maxSq && m.shape[r - 1] >= maxSkv, "attenMaskOptional",
                     "has shape %s which does not cover the largest batch Sq x Skv = %lld x %lld (sparseMode %lld)",
                     m.ShapeString().c_str(), L(maxSq), L(maxSkv), L(a.sparseMode));
}

bool CheckStats(ParamChecker &c, const TensorDesc &s, const char *name, bool tnd, int64_t t, int64_t n)
{
    const std::vector<int64_t> want = tnd ? std::vector<int64_t>{t, n, 8} : std::vector<int64_t>{n, t, 8};
    TensorDesc w;
    w.shape = want;
    return c.DtypeIn(s, name, {ACL_FLOAT}) && c.FormatND(s, name) && c.Contiguous(s, name) &&
           c.Require(s.shape == want, name, "has shape %s but must be %s (softmaxInLayout \"%s\")",
                     s.ShapeString().c_str(), w.ShapeString().c_str(), tnd ? "same_as_input" : "");
}

}  // namespace

aclnnStatus FagV5CheckParams(const FagV5Args &a)
{
    ParamChecker c("aclnnFlashAttentionUnpaddingScoreGradV5");
    if (!c.NotNull(a.query, "query", "a required input") || !c.NotNull(a.key, "keyIn", "a required input") ||
        !c.NotNull(a.value, "value", "a required input") || !c.NotNull(a.dy, "dy", "a required input") ||
        !c.NotNull(a.seqQ, "actualSeqQLenOptional", "required for TND") ||
        !c.NotNull(a.seqKv, "actualSeqKvLenOptional", "required for TND") ||
        !c.NotNull(a.inputLayout, "inputLayout", "a required attribute") ||
        !c.NotNull(a.softmaxInLayout, "softmaxInLayout", "a required attribute") ||
        !c.NotNull(a.dq, "dqOut", "an output") || !c.NotNull(a.dk, "dkOut", "an output") ||
        !c.NotNull(a.dv, "dvOut", "an output") || !c.NotNull(a.workspaceSize, "workspaceSize", "an output") ||
        !c.NotNull(a.executor, "executor", "an output")) {
        return c.Status();
    }
    const TensorDesc q = fa_host::Describe(a.query);
    const TensorDesc k = fa_host::Describe(a.key);
    const TensorDesc v = fa_host::Describe(a.value);
    const TensorDesc dy = fa_host::Describe(a.dy);
    if (!c.DtypeIn(q, "query", {ACL_FLOAT16, ACL_BF16, ACL_FLOAT}) ||
        !c.Require(q.dtype != ACL_FLOAT, "query", "is FLOAT32: the FLOAT32 kernel is not implemented yet "
                                                  "(use FLOAT16 or BFLOAT16)") ||
        !c.SameDtype(k, "keyIn", q, "query") || !c.SameDtype(v, "value", q, "query") ||
        !c.SameDtype(dy, "dy", q, "query") || !c.FormatND(q, "query") || !c.FormatND(k, "keyIn") ||
        !c.FormatND(v, "value") || !c.FormatND(dy, "dy") || !c.Contiguous(q, "query") || !c.Contiguous(k, "keyIn") ||
        !c.Contiguous(v, "value") || !c.Contiguous(dy, "dy")) {
        return c.Status();
    }
    if (!c.Require(std::strcmp(a.inputLayout, "TND") == 0, "inputLayout", "is \"%s\" (must be TND)", a.inputLayout) ||
        !c.Require(q.shape.size() == 3, "query", "has shape %s (TND needs 3 dims)", q.ShapeString().c_str()) ||
        !c.Require(k.shape.size() == 3, "keyIn", "has shape %s (TND needs 3 dims)", k.ShapeString().c_str()) ||
        !c.Require(v.shape == k.shape, "value", "has shape %s but keyIn has %s (they must match)",
                   v.ShapeString().c_str(), k.ShapeString().c_str()) ||
        !c.Require(dy.shape == q.shape, "dy", "has shape %s but query has %s (they must match)",
                   dy.ShapeString().c_str(), q.ShapeString().c_str())) {
        return c.Status();
    }
    const int64_t t = q.shape[0], n = q.shape[1], d = q.shape[2];
    const int64_t tkv = k.shape[0], nkv = k.shape[1];
    if (!c.Require(a.headNum == n, "headNum", "is %lld but query has N = %lld (they must match)", L(a.headNum), L(n)) ||
        !c.Require(n >= 1 && n <= MAX_HEADS, "query", "has N = %lld (must be in [1, %lld])", L(n), L(MAX_HEADS)) ||
        !c.Require(nkv >= 1 && n % nkv == 0, "keyIn", "has N = %lld: query's N = %lld must be a non-zero multiple of it",
                   L(nkv), L(n)) ||
        !c.Require(k.shape[2] == d, "keyIn", "has D = %lld but query has %lld (only equal head dims are supported)",
                   L(k.shape[2]), L(d)) ||
        !c.Require(d >= 1 && d <= MAX_HEAD_DIM, "query", "has D = %lld (must be in [1, %lld])", L(d),
                   L(MAX_HEAD_DIM)) ||
        !c.Require(t >= 1 && t <= MAX_T, "query", "has T = %lld (must be in [1, %lld])", L(t), L(MAX_T)) ||
        !c.Require(tkv >= 1 && tkv <= MAX_T, "keyIn", "has T = %lld (must be in [1, %lld])", L(tkv), L(MAX_T))) {
        return c.Status();
    }
    std::vector<int64_t> cumQ, cumKv;
    if (!CheckCumulative(c, a.seqQ, "actualSeqQLenOptional", t, cumQ) ||
        !CheckCumulative(c, a.seqKv, "actualSeqKvLenOptional", tkv, cumKv) ||
        !c.Require(cumQ.size() == cumKv.size(), "actualSeqKvLenOptional",
                   "has %zu values but actualSeqQLenOptional has %zu (one per batch each)", cumKv.size(),
                   cumQ.size())) {
        return c.Status();
    }
    int64_t maxSq = 0, maxSkv = 0;
    for (size_t b = 0; b < cumQ.size(); ++b) {
        const int64_t sq = cumQ[b] - (b == 0 ? 0 : cumQ[b - 1]);
        const int64_t sk = cumKv[b] - (b == 0 ? 0 : cumKv[b - 1]);
        if (!c.Require(sq == 0 || sk > 0, "actualSeqKvLenOptional",
                       "gives batch %zu no keys while it has %lld query rows (unsupported)", b, L(sq))) {
            return c.Status();
        }
        maxSq = sq > maxSq ? sq : maxSq;
        maxSkv = sk > maxSkv ? sk : maxSkv;
    }
    // Attributes.
    const bool statsTnd = std::strcmp(a.softmaxInLayout, "same_as_input") == 0;
    if (!c.Require(std::isfinite(a.scaleValue), "scaleValue", "is %g (must be finite)", a.scaleValue) ||
        !c.Require(a.keepProb > 0.0 && a.keepProb <= 1.0, "keepProb", "is %g (must be in (0, 1])", a.keepProb) ||
        !c.Require(a.sparseMode >= 0 && a.sparseMode <= 8 && a.sparseMode != 5, "sparseMode",
                   "is %lld (must be 0-8, 5 excluded)", L(a.sparseMode)) ||
        !c.Require(!(a.sparseMode == 6 && (a.queryRope != nullptr || a.keyRope != nullptr)), "sparseMode",
                   "is 6, which is not supported together with queryRope/keyRope") ||
        !c.Require(a.pseType >= 0 && a.pseType <= 3, "pseType", "is %lld (must be 0-3)", L(a.pseType)) ||
        !c.Require(a.pse != nullptr || a.pseType == 1, "pseType",
                   "is %lld without pseShiftOptional (must be 1 when no pse is given)", L(a.pseType)) ||
        !c.Require(a.innerPrecise >= 0 && a.innerPrecise <= 2, "innerPrecise", "is %lld (must be 0, 1 or 2)",
                   L(a.innerPrecise)) ||
        !c.Require(statsTnd || a.softmaxInLayout[0] == '\0', "softmaxInLayout",
                   "is \"%s\" (must be \"same_as_input\" for [T,N,8] or \"\" for [N,T,8])", a.softmaxInLayout)) {
        return c.Status();
    }
    // Optional inputs.
    const TensorDesc mask = fa_host::Describe(a.attenMask);
    const TensorDesc drop = fa_host::Describe(a.dropMask);
    const TensorDesc sMax = fa_host::Describe(a.softmaxMax);
    const TensorDesc sSum = fa_host::Describe(a.softmaxSum);
    const TensorDesc o = fa_host::Describe(a.attentionIn);
    const TensorDesc sink = fa_host::Describe(a.sink);
    const TensorDesc dsink = fa_host::Describe(a.dsink);
    if (!c.Require(a.paddingMask == nullptr, "paddingMaskOptional", "is given (reserved: must be nullptr)") ||
        !CheckMask(c, mask, a, static_cast<int64_t>(cumQ.size()), n, maxSq, maxSkv) ||
        !(drop.present ? c.DtypeIn(drop, "dropMaskOptional", {ACL_UINT8}) : true) ||
        !(sink.present ? c.DtypeIn(sink, "sinkInOptional", {ACL_FLOAT}) &&
                             c.Require(sink.shape == std::vector<int64_t>{n}, "sinkInOptional",
                                       "has shape %s (must be [headNum = %lld])", sink.ShapeString().c_str(), L(n))
                       : true) ||
        !(dsink.present ? c.DtypeIn(dsink, "dsinkOut", {ACL_FLOAT}) &&
                              c.Require(dsink.shape == std::vector<int64_t>{n}, "dsinkOut",
                                        "has shape %s (must be [headNum = %lld])", dsink.ShapeString().c_str(), L(n))
                        : true)) {
        return c.Status();
    }
    if (!c.Require(sMax.present && sSum.present && o.present, !sMax.present ? "softmaxMaxOptional"
                                                               : (!sSum.present ? "softmaxSumOptional"
                                                                                : "attentionInOptional"),
                   "is nullptr: recomputing the forward statistics is not implemented yet (pass the forward's "
                   "softmaxMax, softmaxSum and attention output)") ||
        !CheckStats(c, sMax, "softmaxMaxOptional", statsTnd, t, n) ||
        !CheckStats(c, sSum, "softmaxSumOptional", statsTnd, t, n) ||
        !CheckTnd(c, o, "attentionInOptional", q, "query", q.shape)) {
        return c.Status();
    }
    // Features the kernel does not implement yet.
    if (!Unsupported(c, a.queryRope != nullptr || a.keyRope != nullptr, a.queryRope ? "queryRope" : "keyInRope",
                     "the rope part (queryRope/keyInRope)") ||
        !Unsupported(c, a.pse != nullptr, "pseShiftOptional", "pse (pseType 0-3)") ||
        !Unsupported(c, drop.present && a.keepProb < 1.0, "dropMaskOptional", "dropout (keepProb < 1)") ||
        !(sink.present ? c.NotNull(a.dsink, "dsinkOut", "an output when sinkInOptional is given") : true) ||
        !Unsupported(c, a.sparseMode == 6 && mask.present, "sparseMode", "sparse mode 6 (prefix)")) {
        return c.Status();
    }
    // Outputs.
    if (!CheckTnd(c, fa_host::Describe(a.dq), "dqOut", q, "query", q.shape) ||
        !CheckTnd(c, fa_host::Describe(a.dk), "dkOut", q, "query", k.shape) ||
        !CheckTnd(c, fa_host::Describe(a.dv), "dvOut", q, "query", v.shape)) {
        return c.Status();
    }
    return ACLNN_SUCCESS;
}
