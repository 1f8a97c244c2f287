// Validation of aclnnSparseFlashAttentionGrad's arguments against spec 004 (Atlas A2 rules).
// Each rule is one check with one log line naming the parameter and the rule. Non-contiguous
// tensors are accepted (spec: 非连续Tensor √); the launch works on contiguous copies.
#include "sparse_flash_attention_grad_checks.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <vector>

#include "../../common/op_api/attention_checks.h"
#include "../../common/op_api/tensor_memory_checks.h"

namespace {

using fa_host::ParamChecker;
using fa_host::TensorDesc;

constexpr int64_t HEAD_DIM = 512;    // D
constexpr int64_t ROPE_DIM = 64;     // Dr
constexpr int64_t TOP_K = 2048;      // K of sparse_indices (spec: "K：2048")
constexpr int64_t MAX_BATCH = 256;   // B: 1 ~ 256
constexpr int64_t MAX_SEQ = 131072;  // S1, S2: 1 ~ 128K
constexpr int64_t NO_BAND = 2147483647;

long long L(int64_t v) { return static_cast<long long>(v); }

std::string ShapeText(const std::vector<int64_t> &shape)
{
    TensorDesc t;
    t.shape = shape;
    return t.ShapeString();
}

// One tensor of the call: dtype like `ref` (or in `allowed` when ref is null), ND, exactly
// `shape` (any strides).
bool Tensor(ParamChecker &c, const TensorDesc &t, const char *name, const TensorDesc *ref, const char *refName,
            std::initializer_list<aclDataType> allowed, const std::vector<int64_t> &shape)
{
    const bool dtypeOk = ref != nullptr ? c.SameDtype(t, name, *ref, refName) : c.DtypeIn(t, name, allowed);
    return dtypeOk && c.FormatND(t, name) &&
           c.Require(t.shape == shape, name, "has shape %s but must be %s", t.ShapeString().c_str(),
                     ShapeText(shape).c_str());
}

bool PowerOfTwoHeads(int64_t n) { return n >= 1 && n <= 128 && (n & (n - 1)) == 0; }

// The values of an actual-lengths tensor (spec 004): with TND they are cumulative, so they must
// not decrease, start at >= 0 and end at exactly T (累加和与T1/T2保持一致); with BSND each is a
// batch's length in [0, S]. The kernel addresses tokens with them, so they are read and judged here.
bool CheckSeqValues(ParamChecker &c, const aclTensor *t, const char *name, bool tnd, int64_t total,
                    const char *totalName, const char *seqName)
{
    if (t == nullptr) return true;
    std::vector<int64_t> v;
    if (!fa_host::ReadIntTensor(c, t, name, v)) return false;
    int64_t prev = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (tnd ? !c.Require(v[i] >= prev, name,
                             "[%zu] is %lld, below the previous cumulative value %lld (cumulative "
                             "lengths must not decrease)",
                             i, L(v[i]), L(prev))
                : !c.Require(v[i] >= 0 && v[i] <= total, name, "[%zu] is %lld (must be in [0, %s = %lld])", i, L(v[i]),
                             seqName, L(total))) {
            return false;
        }
        prev = v[i];
    }
    return !tnd || c.Require(!v.empty() && v.back() == total, name,
                             "ends at %lld but its cumulative sum must equal %s = %lld", L(prev), totalName, L(total));
}

}  // namespace

const char *SfagLayout(const char *layoutOptional) { return layoutOptional == nullptr ? "BSND" : layoutOptional; }

aclnnStatus SfagCheckParams(const SfagArgs &a)
{
    ParamChecker c("aclnnSparseFlashAttentionGradGetWorkspaceSize");
    const bool rope = a.queryRope != nullptr;
    if (!c.NotNull(a.query, "query", "a required input") || !c.NotNull(a.key, "key", "a required input") ||
        !c.NotNull(a.value, "value", "a required input") ||
        !c.NotNull(a.sparseIndices, "sparseIndices", "a required input") ||
        !c.NotNull(a.dOut, "dOut", "a required input") || !c.NotNull(a.out, "out", "a required input") ||
        !c.NotNull(a.softmaxMax, "softmaxMax", "a required input") ||
        !c.NotNull(a.softmaxSum, "softmaxSum", "a required input") || !c.NotNull(a.dq, "dQueryOut", "an output") ||
        !c.NotNull(a.dk, "dKeyOut", "an output") || !c.NotNull(a.dv, "dValueOut", "an output") ||
        (rope && !c.NotNull(a.keyRope, "keyRopeOptional", "required with queryRopeOptional")) ||
        (rope && !c.NotNull(a.dqRope, "dQueryRopeOutOptional", "an output required with queryRopeOptional")) ||
        (rope && !c.NotNull(a.dkRope, "dKeyRopeOutOptional", "an output required with queryRopeOptional")) ||
        !c.NotNull(a.workspaceSize, "workspaceSize", "a required output") ||
        !c.NotNull(a.executor, "executor", "a required output")) {
        return c.Status();
    }
    if (!fa_host::CheckTensorsMemory(c, {{a.query, "query"},
                                         {a.key, "key"},
                                         {a.value, "value"},
                                         {a.sparseIndices, "sparseIndices"},
                                         {a.dOut, "dOut"},
                                         {a.out, "out"},
                                         {a.softmaxMax, "softmaxMax"},
                                         {a.softmaxSum, "softmaxSum"},
                                         {a.seqQ, "actualSeqLengthsQueryOptional"},
                                         {a.seqKv, "actualSeqLengthskvOptional"},
                                         {a.queryRope, "queryRopeOptional"},
                                         {a.keyRope, "keyRopeOptional"},
                                         {a.dq, "dQueryOut"},
                                         {a.dk, "dKeyOut"},
                                         {a.dv, "dValueOut"},
                                         {a.dqRope, "dQueryRopeOutOptional"},
                                         {a.dkRope, "dKeyRopeOutOptional"}})) {
        return c.Status();
    }
    const char *layout = SfagLayout(a.layout);
    const bool tnd = std::strcmp(layout, "TND") == 0;
    if (!c.Require(tnd || std::strcmp(layout, "BSND") == 0, "layoutOptional",
                   "is \"%s\": the supported layouts are BSND and TND", layout) ||
        !c.Require(!(a.keyRope != nullptr && !rope), "keyRopeOptional",
                   "is given without queryRopeOptional (the "
                   "rope parts come together)") ||
        (tnd && !c.NotNull(a.seqQ, "actualSeqLengthsQueryOptional", "required with layout TND")) ||
        (tnd && !c.NotNull(a.seqKv, "actualSeqLengthskvOptional", "required with layout TND")) ||
        !c.Require(a.sparseBlockSize == 1 || a.sparseBlockSize == 8 || a.sparseBlockSize == 16 ||
                       a.sparseBlockSize == 32 || a.sparseBlockSize == 64,
                   "sparseBlockSize", "is %lld: supported values are 1, 8, 16, 32, 64", L(a.sparseBlockSize)) ||
        !c.Require(std::isfinite(a.scaleValue) && std::fabs(a.scaleValue) <= FLT_MAX, "scaleValue",
                   "is %g (must be finite as a float: the kernel scales in float)", a.scaleValue) ||
        !c.Require(a.sparseMode == 0 || a.sparseMode == 3, "sparseMode",
                   "is %lld: only 0 (no mask) and 3 (rightDownCausal) are supported", L(a.sparseMode)) ||
        !c.Require(a.preTokens == NO_BAND, "preTokens", "is %lld: the only supported value is 2147483647",
                   L(a.preTokens)) ||
        !c.Require(a.nextTokens == NO_BAND, "nextTokens", "is %lld: the only supported value is 2147483647",
                   L(a.nextTokens))) {
        return c.Status();
    }

    const TensorDesc q = fa_host::Describe(a.query);
    const size_t rank = tnd ? 3 : 4;
    if (!c.DtypeIn(q, "query", {ACL_FLOAT16, ACL_BF16}) || !c.FormatND(q, "query") ||
        !c.Require(q.shape.size() == rank, "query", "has shape %s: layout %s needs %s", q.ShapeString().c_str(), layout,
                   tnd ? "(T1, N1, D)" : "(B, S1, N1, D)")) {
        return c.Status();
    }
    const TensorDesc k = fa_host::Describe(a.key);
    if (!c.SameDtype(k, "key", q, "query") ||
        !c.Require(k.shape.size() == rank, "key", "has shape %s: layout %s needs %s", k.ShapeString().c_str(), layout,
                   tnd ? "(T2, N2, D)" : "(B, S2, N2, D)")) {
        return c.Status();
    }
    // Token dims: BSND (B, S1) / (B, S2); TND (T1) / (T2).
    const std::vector<int64_t> qTok(q.shape.begin(), q.shape.end() - 2);
    const std::vector<int64_t> kTok(k.shape.begin(), k.shape.end() - 2);
    const int64_t n1 = q.shape[rank - 2];
    const int64_t t1 = tnd ? q.shape[0] : q.shape[0] * q.shape[1];
    const bool emptyQuery = q.Numel() == 0;  // spec: an empty query returns at once
    if (!c.Require(PowerOfTwoHeads(n1), "query", "has N1 = %lld heads: supported are 1, 2, 4, 8, 16, 32, 64, 128",
                   L(n1)) ||
        !c.Require(q.shape[rank - 1] == HEAD_DIM, "query", "has D = %lld: D must be 512", L(q.shape[rank - 1])) ||
        !c.Require(k.shape[rank - 2] == 1, "key", "has N2 = %lld KV heads: N2 must be 1 (MQA)", L(k.shape[rank - 2])) ||
        !c.Require(k.shape[rank - 1] == HEAD_DIM, "key", "has D = %lld: D must be 512", L(k.shape[rank - 1]))) {
        return c.Status();
    }
    if (!tnd) {
        if (!c.Require(k.shape[0] == q.shape[0], "key", "has B = %lld but query has B = %lld", L(k.shape[0]),
                       L(q.shape[0])) ||
            !c.Require(emptyQuery || (q.shape[0] >= 1 && q.shape[0] <= MAX_BATCH), "query",
                       "has B = %lld: B must be in [1, 256]", L(q.shape[0])) ||
            !c.Require(emptyQuery || (q.shape[1] >= 1 && q.shape[1] <= MAX_SEQ), "query",
                       "has S1 = %lld: S1 must be in [1, 131072]", L(q.shape[1])) ||
            !c.Require(k.shape[1] >= 1 && k.shape[1] <= MAX_SEQ, "key", "has S2 = %lld: S2 must be in [1, 131072]",
                       L(k.shape[1]))) {
            return c.Status();
        }
    } else if (!c.Require(k.shape[0] >= 1, "key", "has T2 = %lld: T2 must be at least 1", L(k.shape[0]))) {
        return c.Status();
    }

    auto with = [](std::vector<int64_t> v, std::initializer_list<int64_t> tail) {
        v.insert(v.end(), tail);
        return v;
    };
    const std::vector<int64_t> qShape = q.shape, kShape = k.shape;
    const std::vector<int64_t> stats =
        tnd ? std::vector<int64_t>{1, t1, n1} : std::vector<int64_t>{q.shape[0], 1, q.shape[1], n1};
    const TensorDesc v = fa_host::Describe(a.value), idx = fa_host::Describe(a.sparseIndices);
    const TensorDesc dO = fa_host::Describe(a.dOut), o = fa_host::Describe(a.out);
    const TensorDesc smax = fa_host::Describe(a.softmaxMax), ssum = fa_host::Describe(a.softmaxSum);
    if (!Tensor(c, q, "query", nullptr, nullptr, {ACL_FLOAT16, ACL_BF16}, qShape) ||
        !Tensor(c, k, "key", &q, "query", {}, kShape) || !Tensor(c, v, "value", &q, "query", {}, kShape) ||
        !Tensor(c, idx, "sparseIndices", nullptr, nullptr, {ACL_INT32, ACL_INT64},
                with(qTok, {1, idx.shape.empty() ? 0 : idx.shape.back()})) ||
        !c.Require(idx.shape.back() == TOP_K, "sparseIndices",
                   "has K = %lld entries per token: the spec supports K = 2048", L(idx.shape.back())) ||
        !Tensor(c, dO, "dOut", &q, "query", {}, qShape) || !Tensor(c, o, "out", &q, "query", {}, qShape) ||
        !Tensor(c, smax, "softmaxMax", nullptr, nullptr, {ACL_FLOAT}, stats) ||
        !Tensor(c, ssum, "softmaxSum", nullptr, nullptr, {ACL_FLOAT}, stats)) {
        return c.Status();
    }

    // Actual sequence lengths: (B,) each, INT32 or INT64 (the same for both).
    const int64_t batch = tnd ? -1 : q.shape[0];
    const TensorDesc sq = fa_host::Describe(a.seqQ), skv = fa_host::Describe(a.seqKv);
    for (const auto &[t, name] : {std::pair<const TensorDesc &, const char *>{sq, "actualSeqLengthsQueryOptional"},
                                  std::pair<const TensorDesc &, const char *>{skv, "actualSeqLengthskvOptional"}}) {
        if (!t.present) continue;
        const int64_t len = t.shape.size() == 1 ? t.shape[0] : -1;
        if (!c.DtypeIn(t, name, {ACL_INT32, ACL_INT64}) || !c.FormatND(t, name) ||
            !c.Require(t.contiguous, name,
                       "is non-contiguous: the lengths are read on the host and must be contiguous") ||
            !c.Require(len >= 1 && len <= MAX_BATCH && (batch < 0 || len == batch), name,
                       "has shape %s but must be (B,) with B in [1, 256]%s", t.ShapeString().c_str(),
                       batch < 0 ? "" : " equal to query's B")) {
            return c.Status();
        }
    }
    if (sq.present && skv.present &&
        (!c.SameDtype(skv, "actualSeqLengthskvOptional", sq, "actualSeqLengthsQueryOptional") ||
         !c.Require(skv.shape == sq.shape, "actualSeqLengthskvOptional",
                    "has shape %s but "
                    "actualSeqLengthsQueryOptional has %s (one length per batch each)",
                    skv.ShapeString().c_str(), sq.ShapeString().c_str()))) {
        return c.Status();
    }

    if (!CheckSeqValues(c, a.seqQ, "actualSeqLengthsQueryOptional", tnd, tnd ? t1 : q.shape[1], "T1", "S1") ||
        !CheckSeqValues(c, a.seqKv, "actualSeqLengthskvOptional", tnd, tnd ? k.shape[0] : k.shape[1], "T2", "S2")) {
        return c.Status();
    }

    if (rope) {
        const TensorDesc qr = fa_host::Describe(a.queryRope), kr = fa_host::Describe(a.keyRope);
        if (!Tensor(c, qr, "queryRopeOptional", &q, "query", {}, with(qTok, {n1, ROPE_DIM})) ||
            !Tensor(c, kr, "keyRopeOptional", &q, "query", {}, with(kTok, {1, ROPE_DIM}))) {
            return c.Status();
        }
    } else if (!c.Require(a.dqRope == nullptr && a.dkRope == nullptr, "dQueryRopeOutOptional",
                          "or dKeyRopeOutOptional is given without queryRopeOptional (the rope gradients exist only "
                          "with the rope inputs)")) {
        return c.Status();
    }
    const TensorDesc dq = fa_host::Describe(a.dq), dk = fa_host::Describe(a.dk), dv = fa_host::Describe(a.dv);
    if (!Tensor(c, dq, "dQueryOut", &q, "query", {}, qShape) || !Tensor(c, dk, "dKeyOut", &q, "query", {}, kShape) ||
        !Tensor(c, dv, "dValueOut", &q, "query", {}, kShape)) {
        return c.Status();
    }
    if (rope) {
        const TensorDesc dqr = fa_host::Describe(a.dqRope), dkr = fa_host::Describe(a.dkRope);
        if (!Tensor(c, dqr, "dQueryRopeOutOptional", &q, "query", {}, with(qTok, {n1, ROPE_DIM})) ||
            !Tensor(c, dkr, "dKeyRopeOutOptional", &q, "query", {}, with(kTok, {1, ROPE_DIM}))) {
            return c.Status();
        }
    }
    return c.Status();
}
