// Validation of aclnnPromptFlashAttention's arguments against spec 000 (Atlas A2 rules).
// Target-neutral: the CPU target's aclnn API calls it, and so can the NPU package's.
#include "prompt_flash_attention_checks.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <utility>

#include "../../common/op_api/attention_checks.h"
#include "../../common/op_api/tensor_memory_checks.h"

namespace {

using fa_host::BnsdDims;
using fa_host::Layout;
using fa_host::ParamChecker;
using fa_host::TensorDesc;

// Spec 000, Atlas A2 limits.
constexpr int64_t MAX_BATCH = 65536;
constexpr int64_t MAX_BATCH_UNALIGNED_D = 128;  // when D is not a multiple of 16 (fp16/bf16)
constexpr int64_t MAX_HEADS = 256;
constexpr int64_t MAX_SEQ = 20971520;
constexpr int64_t MAX_HEAD_DIM = 512;
constexpr int64_t MAX_HIDDEN = 65535;  // N*D must be below this for BSH/BSND
constexpr int64_t MAX_GQA_RATIO = 64;

struct Checked {
    Layout layout = Layout::INVALID;
    BnsdDims q, k;
    int64_t kvHeads = 0;
};

bool CheckLayoutAndShapes(ParamChecker &c, const TensorDesc &q, const TensorDesc &k, const TensorDesc &v,
                          const char *inputLayout, int64_t numHeads, int64_t numKeyValueHeads, Checked &out)
{
    out.layout = fa_host::ParseLayout(inputLayout);
    if (out.layout == Layout::TND) {
        return c.Require(false, "inputLayout",
                         "is TND: TND needs per-batch key/value lengths "
                         "(actualSeqLengthsKv), which aclnnPromptFlashAttention (V1) cannot pass");
    }
    if (!c.Require(out.layout != Layout::INVALID, "inputLayout", "is \"%s\" (supported: BSH, BSND, BNSD, BNSD_BSND)",
                   inputLayout)) {
        return false;
    }
    const size_t rank = out.layout == Layout::BSH ? 3 : 4;
    const char *layoutName = fa_host::LayoutName(out.layout);
    for (const auto &named : {std::make_pair(&q, "query"), std::make_pair(&k, "key"), std::make_pair(&v, "value")}) {
        if (!c.Require(named.first->shape.size() == rank, named.second,
                       "has shape %s but inputLayout %s needs %zu dims", named.first->ShapeString().c_str(), layoutName,
                       rank)) {
            return false;
        }
    }
    if (!c.Require(numHeads > 0 && numHeads <= MAX_HEADS, "numHeads", "is %lld (must be in [1, %lld])",
                   static_cast<long long>(numHeads), static_cast<long long>(MAX_HEADS))) {
        return false;
    }
    if (!c.Require(numKeyValueHeads >= 0, "numKeyValueHeads", "is %lld (must be >= 0; 0 means numHeads)",
                   static_cast<long long>(numKeyValueHeads))) {
        return false;
    }
    out.kvHeads = numKeyValueHeads == 0 ? numHeads : numKeyValueHeads;
    if (!c.Require(numHeads % out.kvHeads == 0, "numKeyValueHeads", "is %lld but numHeads %lld is not a multiple of it",
                   static_cast<long long>(out.kvHeads), static_cast<long long>(numHeads)) ||
        !c.Require(numHeads / out.kvHeads <= MAX_GQA_RATIO, "numKeyValueHeads",
                   "is %lld: numHeads / numKeyValueHeads = %lld exceeds %lld", static_cast<long long>(out.kvHeads),
                   static_cast<long long>(numHeads / out.kvHeads), static_cast<long long>(MAX_GQA_RATIO))) {
        return false;
    }
    if (out.layout == Layout::BSH) {
        if (!c.Require(q.shape[2] % numHeads == 0, "query", "has H = %lld, not a multiple of numHeads %lld",
                       static_cast<long long>(q.shape[2]), static_cast<long long>(numHeads))) {
            return false;
        }
    }
    fa_host::DimsOf(q, out.layout, numHeads, out.q);
    fa_host::DimsOf(k, out.layout, out.kvHeads, out.k);
    BnsdDims vd;
    fa_host::DimsOf(v, out.layout, out.kvHeads, vd);
    if (out.layout == Layout::BSH) {
        if (!c.Require(k.shape[2] == out.kvHeads * out.q.d, "key",
                       "has H = %lld but numKeyValueHeads %lld x D %lld = %lld (BSH)",
                       static_cast<long long>(k.shape[2]), static_cast<long long>(out.kvHeads),
                       static_cast<long long>(out.q.d), static_cast<long long>(out.kvHeads * out.q.d))) {
            return false;
        }
    } else {
        if (!c.Require(out.q.n == numHeads, "numHeads", "is %lld but query has N = %lld (%s)",
                       static_cast<long long>(numHeads), static_cast<long long>(out.q.n), layoutName) ||
            !c.Require(out.k.n == out.kvHeads, "numKeyValueHeads",
                       "is %lld but key has N = %lld (%s; 0 means numHeads)", static_cast<long long>(out.kvHeads),
                       static_cast<long long>(out.k.n), layoutName)) {
            return false;
        }
    }
    if (!c.Require(v.shape == k.shape, "value", "has shape %s but key has %s (they must match)",
                   v.ShapeString().c_str(), k.ShapeString().c_str()) ||
        !c.Require(out.k.b == out.q.b, "key", "has batch %lld but query has %lld", static_cast<long long>(out.k.b),
                   static_cast<long long>(out.q.b)) ||
        !c.Require(out.k.d == out.q.d, "key", "has head dim D = %lld but query has %lld",
                   static_cast<long long>(out.k.d), static_cast<long long>(out.q.d))) {
        return false;
    }
    const BnsdDims &d = out.q;
    const bool dAligned = d.d % 16 == 0;
    return c.Require(d.b <= MAX_BATCH, "query", "has batch B = %lld (at most %lld)", static_cast<long long>(d.b),
                     static_cast<long long>(MAX_BATCH)) &&
           c.Require(dAligned || d.b <= MAX_BATCH_UNALIGNED_D, "query",
                     "has batch B = %lld with D = %lld not a multiple of 16 (then B is at most %lld)",
                     static_cast<long long>(d.b), static_cast<long long>(d.d),
                     static_cast<long long>(MAX_BATCH_UNALIGNED_D)) &&
           c.Require(d.d <= MAX_HEAD_DIM, "query", "has head dim D = %lld (at most %lld)", static_cast<long long>(d.d),
                     static_cast<long long>(MAX_HEAD_DIM)) &&
           c.Require(d.s <= MAX_SEQ, "query", "has S = %lld (at most %lld)", static_cast<long long>(d.s),
                     static_cast<long long>(MAX_SEQ)) &&
           c.Require(out.k.s <= MAX_SEQ, "key", "has S = %lld (at most %lld)", static_cast<long long>(out.k.s),
                     static_cast<long long>(MAX_SEQ)) &&
           c.Require(!(out.layout == Layout::BSH || out.layout == Layout::BSND) || d.n * d.d < MAX_HIDDEN, "query",
                     "has N x D = %lld (must be below %lld for %s)", static_cast<long long>(d.n * d.d),
                     static_cast<long long>(MAX_HIDDEN), layoutName);
}

bool CheckMask(ParamChecker &c, const TensorDesc &m, const Checked &s)
{
    if (!m.present) return true;
    if (!c.DtypeIn(m, "attenMask", {ACL_BOOL, ACL_INT8, ACL_UINT8}) || !c.FormatND(m, "attenMask") ||
        !c.RankIn(m, "attenMask", 2, 4) || !c.Contiguous(m, "attenMask")) {
        return false;
    }
    const size_t r = m.shape.size();
    const int64_t rows = m.shape[r - 2];
    const int64_t cols = m.shape[r - 1];
    bool lead = true;
    if (r >= 3) lead = m.shape[0] == 1 || m.shape[0] == s.q.b;
    if (r == 4) lead = lead && (m.shape[1] == 1 || m.shape[1] == s.q.n);
    return c.Require(lead, "attenMask",
                     "has shape %s: leading dims must be (B or 1) and, for 4 dims, (N or 1) with B = %lld, N = %lld",
                     m.ShapeString().c_str(), static_cast<long long>(s.q.b), static_cast<long long>(s.q.n)) &&
           c.Require(rows >= s.q.s && cols >= s.k.s, "attenMask",
                     "has shape %s which does not cover Q_S x KV_S = %lld x %lld", m.ShapeString().c_str(),
                     static_cast<long long>(s.q.s), static_cast<long long>(s.k.s));
}

// With a mask (sparse mode 0) pre/next tokens bound a band; the sparse-mode page requires a
// negative bound to be covered by the other one and to stay inside the sequence. Written without
// negating a caller's value: INT64_MIN is a legal int64 and has no positive counterpart.
bool CheckBand(ParamChecker &c, bool hasMask, int64_t pre, int64_t next, const Checked &s)
{
    if (!hasMask) return true;  // without a mask the band is ignored
    // For x < 0: |x| < S  <=>  x > -S (S >= 0), and other >= |x|  <=>  other + x >= 0 (no overflow:
    // other >= 0 is required first, so other + x lies in [INT64_MIN, INT64_MAX)).
    if (next < 0 &&
        !c.Require(pre >= 0 && pre + next >= 0 && next > -s.k.s, "nextTokens",
                   "is %lld: a negative nextTokens needs preTokens (%lld) >= -nextTokens and "
                   "|nextTokens| < KV_S (%lld)",
                   static_cast<long long>(next), static_cast<long long>(pre), static_cast<long long>(s.k.s))) {
        return false;
    }
    return pre >= 0 ||
           c.Require(next >= 0 && next + pre >= 0 && pre > -s.q.s, "preTokens",
                     "is %lld: a negative preTokens needs nextTokens (%lld) >= -preTokens and "
                     "|preTokens| < Q_S (%lld)",
                     static_cast<long long>(pre), static_cast<long long>(next), static_cast<long long>(s.q.s));
}

bool CheckActualSeqLengths(ParamChecker &c, const aclIntArray *lens, const Checked &s)
{
    if (lens == nullptr) return true;
    uint64_t n = 0;
    aclGetIntArraySize(lens, &n);
    if (!c.Require(n == 1 || static_cast<int64_t>(n) == s.q.b, "actualSeqLengths",
                   "has %llu values (must be 1 or batch B = %lld)", static_cast<unsigned long long>(n),
                   static_cast<long long>(s.q.b))) {
        return false;
    }
    for (uint64_t i = 0; i < n; ++i) {
        const int64_t v = (*lens)[i];
        if (!c.Require(v >= 0 && v <= s.q.s, "actualSeqLengths", "[%llu] is %lld (must be in [0, query S = %lld])",
                       static_cast<unsigned long long>(i), static_cast<long long>(v), static_cast<long long>(s.q.s))) {
            return false;
        }
    }
    return true;
}

bool CheckOutput(ParamChecker &c, const TensorDesc &o, const TensorDesc &q, const Checked &s)
{
    if (o.dtype == ACL_INT8) {
        return c.Require(false, "attentionOut",
                         "is INT8: INT8 output needs quantScale2/quantOffset2, which aclnnPromptFlashAttention (V1) "
                         "cannot pass (use FLOAT16/BFLOAT16 as query)");
    }
    if (!c.DtypeIn(o, "attentionOut", {ACL_FLOAT16, ACL_BF16, ACL_INT8}) ||
        !c.SameDtype(o, "attentionOut", q, "query") || !c.FormatND(o, "attentionOut") ||
        !c.Contiguous(o, "attentionOut")) {
        return false;
    }
    std::vector<int64_t> want = q.shape;
    if (s.layout == Layout::BNSD_BSND) want = {s.q.b, s.q.s, s.q.n, s.q.d};
    TensorDesc w;
    w.shape = want;
    return c.Require(o.shape == want, "attentionOut", "has shape %s but must be %s (%s)", o.ShapeString().c_str(),
                     w.ShapeString().c_str(),
                     s.layout == Layout::BNSD_BSND ? "BNSD_BSND: the BSND form of query" : "the shape of query");
}

}  // namespace

aclnnStatus PromptFlashAttentionCheckParams(const aclTensor *query, const aclTensor *key, const aclTensor *value,
                                            const aclTensor *attenMask, const aclIntArray *actualSeqLengths,
                                            int64_t numHeads, double scaleValue, int64_t preTokens, int64_t nextTokens,
                                            const char *inputLayout, int64_t numKeyValueHeads,
                                            const aclTensor *attentionOut, const uint64_t *workspaceSize,
                                            aclOpExecutor *const *executor)
{
    ParamChecker c("aclnnPromptFlashAttention");
    if (!c.NotNull(query, "query", "a required input") || !c.NotNull(key, "key", "a required input") ||
        !c.NotNull(value, "value", "a required input") ||
        !c.NotNull(inputLayout, "inputLayout", "a required attribute") ||
        !c.NotNull(attentionOut, "attentionOut", "an output") ||
        !c.NotNull(workspaceSize, "workspaceSize", "an output") || !c.NotNull(executor, "executor", "an output")) {
        return c.Status();
    }
    if (!fa_host::CheckTensorsMemory(c, {{query, "query"},
                                         {key, "key"},
                                         {value, "value"},
                                         {attenMask, "attenMask"},
                                         {attentionOut, "attentionOut"}})) {
        return c.Status();
    }
    const TensorDesc q = fa_host::Describe(query);
    const TensorDesc k = fa_host::Describe(key);
    const TensorDesc v = fa_host::Describe(value);
    const TensorDesc o = fa_host::Describe(attentionOut);
    const TensorDesc m = fa_host::Describe(attenMask);
    Checked s;
    const bool ok = c.DtypeIn(q, "query", {ACL_FLOAT16, ACL_BF16}) && c.SameDtype(k, "key", q, "query") &&
                    c.SameDtype(v, "value", q, "query") && c.FormatND(q, "query") && c.FormatND(k, "key") &&
                    c.FormatND(v, "value") && c.RankIn(q, "query", 3, 4) && c.Contiguous(q, "query") &&
                    c.Contiguous(k, "key") && c.Contiguous(v, "value") &&
                    CheckLayoutAndShapes(c, q, k, v, inputLayout, numHeads, numKeyValueHeads, s) &&
                    CheckMask(c, m, s) && CheckBand(c, m.present, preTokens, nextTokens, s) &&
                    CheckActualSeqLengths(c, actualSeqLengths, s) && CheckOutput(c, o, q, s) &&
                    c.Require(std::isfinite(scaleValue) && std::fabs(scaleValue) <= FLT_MAX, "scaleValue",
                              "is %g (must be finite as a float: the kernel scales in float)", scaleValue);
    return ok ? ACLNN_SUCCESS : c.Status();
}
