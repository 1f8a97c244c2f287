// Validation of aclnnFlashAttentionUnpaddingScoreGradV5's arguments against spec 003 (Atlas A2
// rules), plus the features this implementation does not provide yet (161002 with a message
// saying so; docs/ops/flash_attention_score_grad.md lists them).
#include "flash_attention_score_grad_checks.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "../../common/op_api/attention_checks.h"
#include "../../common/op_api/tensor_memory_checks.h"

namespace {

using fa_host::ParamChecker;
using fa_host::TensorDesc;
using Seqs = fa_host::SeqLengths;

constexpr int64_t MAX_T = 1048576;      // T: 1 ~ 1M
constexpr int64_t MAX_BATCH = 2097152;  // B: 1 ~ 2M
constexpr int64_t MAX_HEADS = 256;
constexpr int64_t MAX_SEQ = 1048576;
constexpr int64_t MAX_HEAD_DIM = 768;
constexpr int64_t MAX_START_IDX = int64_t(1) << 40;  // |q/kv start index|: far beyond any S, far from overflow

long long L(int64_t v) { return static_cast<long long>(v); }

// A TND tensor of `dtype`-family with the exact expected shape.
bool CheckTnd(ParamChecker &c, const TensorDesc &t, const char *name, const TensorDesc &ref, const char *refName,
              const std::vector<int64_t> &shape)
{
    TensorDesc want;
    want.shape = shape;
    return c.SameDtype(t, name, ref, refName) && c.FormatND(t, name) &&
           c.Require(t.shape == shape, name, "has shape %s but must be %s", t.ShapeString().c_str(),
                     want.ShapeString().c_str());
}

// Cumulative lengths: non-decreasing, within [0, rows]; returns the largest per-batch length.
bool CheckCumulative(ParamChecker &c, const aclIntArray *a, const char *name, int64_t rows, std::vector<int64_t> &out)
{
    uint64_t n = 0;
    aclGetIntArraySize(a, &n);
    if (!c.Require(n >= 1 && static_cast<int64_t>(n) <= MAX_BATCH, name,
                   "has %llu values (batch B must be in [1, %lld])", static_cast<unsigned long long>(n),
                   L(MAX_BATCH))) {
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
        !c.Require(m.shape.size() == 2 || m.shape.size() == 4, "attenMaskOptional",
                   "has shape %s (must be [B,N,Sq,Skv], [B,1,Sq,Skv], [1,1,Sq,Skv] or [Sq,Skv])",
                   m.ShapeString().c_str())) {
        return false;
    }
    if (m.shape.size() == 4 &&
        !c.Require((m.shape[0] == 1 || m.shape[0] == batch) && (m.shape[1] == 1 || m.shape[1] == heads) &&
                       !(m.shape[0] == 1 && m.shape[1] != 1),
                   "attenMaskOptional",
                   "has shape %s: leading dims must be (B,N), (B,1) or (1,1) with B = %lld, N = %lld",
                   m.ShapeString().c_str(), L(batch), L(heads))) {
        return false;
    }
    if (a.sparseMode > 1) return true;  // modes 2-8 generate the mask; the tensor is a compressed form
    const size_t r = m.shape.size();
    return c.Require(m.shape[r - 2] >= maxSq && m.shape[r - 1] >= maxSkv, "attenMaskOptional",
                     "has shape %s which does not cover the largest batch Sq x Skv = %lld x %lld (sparseMode %lld)",
                     m.ShapeString().c_str(), L(maxSq), L(maxSkv), L(a.sparseMode));
}

// Start indices of the generated alibi: one value for all batches or one per batch, each within
// +-MAX_START_IDX (this implementation's limit: the kernel adds them to key and query positions
// in int64, which must not overflow).
bool CheckStartIdx(ParamChecker &c, const aclIntArray *idx, const char *name, size_t batch)
{
    if (idx == nullptr) return true;
    uint64_t n = 0;
    aclGetIntArraySize(idx, &n);
    if (!c.Require(n == 1 || n == batch, name, "has %llu values (must be 1 or one per batch, B = %zu)",
                   static_cast<unsigned long long>(n), batch)) {
        return false;
    }
    for (uint64_t i = 0; i < n; ++i) {
        const int64_t v = (*idx)[i];
        if (!c.Require(v >= -MAX_START_IDX && v <= MAX_START_IDX, name,
                       "[%llu] is %lld (this implementation supports start indices in [-%lld, %lld])",
                       static_cast<unsigned long long>(i), L(v), L(MAX_START_IDX), L(MAX_START_IDX))) {
            return false;
        }
    }
    return true;
}

// Types 0/1: [B or 1, N, H, Skv'] bottom-right aligned; H < maxSq only as the alibi-compressed
// form (H = 1024, Sq == Skv per batch, sparse modes 0/2/3). Types 2/3: FLOAT slopes [N] or
// [B, N].
bool CheckPse(ParamChecker &c, const FagV5Args &a, const TensorDesc &p, const TensorDesc &q, const Seqs &s)
{
    if (!p.present) return true;
    if (a.pseType >= 2) {
        const int64_t n = q.shape[1];
        const int64_t batch = static_cast<int64_t>(s.q.size());
        return c.DtypeIn(p, "pseShiftOptional", {ACL_FLOAT}) && c.FormatND(p, "pseShiftOptional") &&
               c.Require(p.shape == std::vector<int64_t>{n} || p.shape == std::vector<int64_t>{batch, n},
                         "pseShiftOptional",
                         "has shape %s (pseType %lld needs alibi slopes [N] or [B, N], N = %lld, "
                         "B = %lld)",
                         p.ShapeString().c_str(), L(a.pseType), L(n), L(batch)) &&
               CheckStartIdx(c, a.qStartIdx, "qStartIdxOptional", s.q.size()) &&
               CheckStartIdx(c, a.kvStartIdx, "kvStartIdxOptional", s.q.size());
    }
    return c.SameDtype(p, "pseShiftOptional", q, "query") && c.FormatND(p, "pseShiftOptional") &&
           c.Require(a.sparseMode != 7, "pseShiftOptional", "is given with sparseMode 7 (not supported)") &&
           c.Require(a.sparseMode != 8 || s.AllEqual(), "pseShiftOptional",
                     "is given with sparseMode 8 but Sq != Skv in some batch (needs equal lengths)") &&
           c.Require(!s.AnyEmptyQuery(), "pseShiftOptional", "is given while a batch has Sq = 0 (not supported)") &&
           fa_host::CheckPseShape(c, p, "pseShiftOptional", "sparseMode", a.sparseMode, q.shape[1], s);
}

// Dropout reads N * Sq * Skv keep bits per batch, batches one after the other (spec 001's size).
bool CheckDropMask(ParamChecker &c, const TensorDesc &d, int64_t n, const Seqs &s)
{
    return fa_host::CheckDropMaskSize(c, "dropMaskOptional", d.Numel(), fa_host::DropMaskBits(n, s));
}

// Rope parts: both or neither, BFLOAT16 like query, [T, N, Dr] and [Tkv, Nkv, Dr]; their
// gradients are then required outputs of the same shapes. Not with dropout (spec 003).
bool CheckRope(ParamChecker &c, const FagV5Args &a, const TensorDesc &q, const TensorDesc &k, bool dropout)
{
    if (a.queryRope == nullptr && a.keyRope == nullptr) return true;
    if (!c.Require(a.queryRope != nullptr, "queryRope", "is null while keyInRope is given (pass both or neither)") ||
        !c.Require(a.keyRope != nullptr, "keyInRope", "is null while queryRope is given (pass both or neither)") ||
        !c.NotNull(a.dqRope, "dqRopeOut", "an output when queryRope is given") ||
        !c.NotNull(a.dkRope, "dkRopeOut", "an output when keyInRope is given")) {
        return false;
    }
    const TensorDesc qr = fa_host::Describe(a.queryRope);
    const TensorDesc kr = fa_host::Describe(a.keyRope);
    if (!c.DtypeIn(qr, "queryRope", {ACL_BF16}) || !c.SameDtype(qr, "queryRope", q, "query") ||
        !c.SameDtype(kr, "keyInRope", q, "query") || !c.FormatND(qr, "queryRope") || !c.FormatND(kr, "keyInRope") ||
        !c.Require(!dropout, "dropMaskOptional",
                   "is given with keepProb < 1 together with queryRope/keyInRope "
                   "(dropout is not compatible with rope)") ||
        !c.Require(qr.shape.size() == 3 && qr.shape[0] == q.shape[0] && qr.shape[1] == q.shape[1], "queryRope",
                   "has shape %s (must be [T = %lld, N = %lld, Dr])", qr.ShapeString().c_str(), L(q.shape[0]),
                   L(q.shape[1]))) {
        return false;
    }
    const int64_t dr = qr.shape[2];
    const std::vector<int64_t> krShape{k.shape[0], k.shape[1], dr};
    TensorDesc want;
    want.shape = krShape;
    return c.Require(kr.shape == krShape, "keyInRope", "has shape %s but must be %s", kr.ShapeString().c_str(),
                     want.ShapeString().c_str()) &&
           c.Require(dr >= 1 && dr + q.shape[2] <= MAX_HEAD_DIM, "queryRope",
                     "has Dr = %lld: this kernel supports 1 <= Dr and D + Dr <= %lld (D = %lld)", L(dr),
                     L(MAX_HEAD_DIM), L(q.shape[2])) &&
           CheckTnd(c, fa_host::Describe(a.dqRope), "dqRopeOut", q, "query", qr.shape) &&
           CheckTnd(c, fa_host::Describe(a.dkRope), "dkRopeOut", q, "query", kr.shape);
}

bool CheckStats(ParamChecker &c, const TensorDesc &s, const char *name, bool tnd, int64_t t, int64_t n)
{
    const std::vector<int64_t> want = tnd ? std::vector<int64_t>{t, n, 8} : std::vector<int64_t>{n, t, 8};
    TensorDesc w;
    w.shape = want;
    return c.DtypeIn(s, name, {ACL_FLOAT}) && c.FormatND(s, name) &&
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
    if (!fa_host::CheckTensorsMemory(c, {{a.query, "query"},
                                         {a.queryRope, "queryRopeOptional"},
                                         {a.key, "keyIn"},
                                         {a.keyRope, "keyInRopeOptional"},
                                         {a.value, "value"},
                                         {a.dy, "dy"},
                                         {a.pse, "pseShiftOptional"},
                                         {a.dropMask, "dropMaskOptional"},
                                         {a.paddingMask, "paddingMaskOptional"},
                                         {a.attenMask, "attenMaskOptional"},
                                         {a.softmaxMax, "softmaxMaxOptional"},
                                         {a.softmaxSum, "softmaxSumOptional"},
                                         {a.softmaxIn, "softmaxInOptional"},
                                         {a.attentionIn, "attentionInOptional"},
                                         {a.sink, "sinkInOptional"},
                                         {a.dq, "dqOut"},
                                         {a.dqRope, "dqRopeOut"},
                                         {a.dk, "dkOut"},
                                         {a.dkRope, "dkRopeOut"},
                                         {a.dv, "dvOut"},
                                         {a.dpse, "dpseOut"},
                                         {a.dsink, "dsinkOut"}})) {
        return c.Status();
    }
    const TensorDesc q = fa_host::Describe(a.query);
    const TensorDesc k = fa_host::Describe(a.key);
    const TensorDesc v = fa_host::Describe(a.value);
    const TensorDesc dy = fa_host::Describe(a.dy);
    if (!c.DtypeIn(q, "query", {ACL_FLOAT16, ACL_BF16, ACL_FLOAT}) || !c.SameDtype(k, "keyIn", q, "query") ||
        !c.SameDtype(v, "value", q, "query") || !c.SameDtype(dy, "dy", q, "query") || !c.FormatND(q, "query") ||
        !c.FormatND(k, "keyIn") || !c.FormatND(v, "value") || !c.FormatND(dy, "dy")) {
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
        !c.Require(nkv >= 1 && n % nkv == 0, "keyIn",
                   "has N = %lld: query's N = %lld must be a non-zero multiple of it", L(nkv), L(n)) ||
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
    Seqs seqs;
    for (size_t b = 0; b < cumQ.size(); ++b) {
        const int64_t sq = cumQ[b] - (b == 0 ? 0 : cumQ[b - 1]);
        const int64_t sk = cumKv[b] - (b == 0 ? 0 : cumKv[b - 1]);
        if (!c.Require(sq == 0 || sk > 0, "actualSeqKvLenOptional",
                       "gives batch %zu no keys while it has %lld query rows (unsupported)", b, L(sq))) {
            return c.Status();
        }
        seqs.q.push_back(sq);
        seqs.kv.push_back(sk);
        seqs.maxQ = sq > seqs.maxQ ? sq : seqs.maxQ;
        seqs.maxKv = sk > seqs.maxKv ? sk : seqs.maxKv;
    }
    const int64_t maxSq = seqs.maxQ, maxSkv = seqs.maxKv;
    // Attributes.
    const bool statsTnd = std::strcmp(a.softmaxInLayout, "same_as_input") == 0;
    if (!c.Require(std::isfinite(a.scaleValue) && std::fabs(a.scaleValue) <= FLT_MAX, "scaleValue",
                   "is %g (must be finite as a float: the kernel scales in float)", a.scaleValue) ||
        !c.Require(a.keepProb > 0.0 && a.keepProb <= 1.0, "keepProb", "is %g (must be in (0, 1])", a.keepProb) ||
        !c.Require(a.sparseMode >= 0 && a.sparseMode <= 8 && a.sparseMode != 5, "sparseMode",
                   "is %lld (must be 0-8, 5 excluded)", L(a.sparseMode)) ||
        !c.Require(!(a.sparseMode == 6 && (a.queryRope != nullptr || a.keyRope != nullptr)), "sparseMode",
                   "is 6, which is not supported together with queryRope/keyRope") ||
        !fa_host::CheckBandIntersects(c, "preTokens", "nextTokens", a.sparseMode, a.attenMask != nullptr, a.preTokens,
                                      a.nextTokens) ||
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
    // The forward's outputs are optional each (spec: softmaxMax/Sum 可选输入): the given ones are
    // checked and used, the absent ones recomputed by the varlen forward core in the same launch,
    // which has no rope part, sink or pse types other than 1.
    const bool recompute = !sMax.present || !sSum.present || !o.present;
    const char *absent =
        !sMax.present ? "softmaxMaxOptional" : (!sSum.present ? "softmaxSumOptional" : "attentionInOptional");
    if ((recompute && !c.Require(a.queryRope == nullptr && a.keyRope == nullptr && !sink.present &&
                                     (a.pse == nullptr || a.pseType == 1),
                                 absent,
                                 "is nullptr: recomputing the forward's outputs is implemented without rope, sink "
                                 "and pse types 0/2/3 only (pass softmaxMax, softmaxSum and attentionIn)")) ||
        (sMax.present && !CheckStats(c, sMax, "softmaxMaxOptional", statsTnd, t, n)) ||
        (sSum.present && !CheckStats(c, sSum, "softmaxSumOptional", statsTnd, t, n)) ||
        (o.present && !CheckTnd(c, o, "attentionInOptional", q, "query", q.shape))) {
        return c.Status();
    }
    // Features the kernel does not implement yet.
    if (!CheckRope(c, a, q, k, drop.present && a.keepProb < 1.0) ||
        !(sink.present ? c.NotNull(a.dsink, "dsinkOut", "an output when sinkInOptional is given") : true)) {
        return c.Status();
    }
    if (!CheckPse(c, a, fa_host::Describe(a.pse), q, seqs) ||
        !(drop.present && a.keepProb < 1.0 ? CheckDropMask(c, drop, n, seqs) : true) ||
        !fa_host::CheckPrefix(c, a.prefix, "sparseMode", a.sparseMode, mask.present, seqs)) {
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
