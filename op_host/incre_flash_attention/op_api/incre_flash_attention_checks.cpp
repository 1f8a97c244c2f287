// Validation of aclnnIncreFlashAttentionV4's arguments against spec 002 (Atlas A2 rules), plus
// the features this implementation does not provide yet (161002 with a message saying so; the
// list is in docs/ops/incre_flash_attention.md). Target-neutral.
#include "incre_flash_attention_checks.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "../../common/op_api/attention_checks.h"
#include "../../common/op_api/tensor_memory_checks.h"

namespace {

using fa_host::BnsdDims;
using fa_host::Layout;
using fa_host::ParamChecker;
using fa_host::TensorDesc;

// Spec 002, Atlas A2 limits.
constexpr int64_t MAX_BATCH = 65536;
constexpr int64_t MAX_HEADS = 256;
constexpr int64_t MAX_HEAD_DIM = 512;
constexpr int64_t MAX_GQA_RATIO = 64;
constexpr int64_t MAX_BLOCK_SIZE = 512;
constexpr int64_t MAX_PAGED_H = 65535;  // (blocknum, blocksize, H) caches: H limit of the hardware copy

long long LL(int64_t v) { return static_cast<long long>(v); }

const aclTensor *NullIfEmpty(const aclTensor *t)
{
    return t != nullptr && fa_host::Describe(t).Numel() == 0 ? nullptr : t;
}

struct State {
    Layout layout = Layout::INVALID;
    BnsdDims q;
    int64_t kvHeads = 0;
    int64_t seqKv = 0;
    bool paged = false;
    bool leftPadding = false;
    std::vector<int64_t> lens;
    std::vector<int64_t> listSeq;  // KV S of each key tensor (contiguous caches)
    std::vector<TensorDesc> keys, values;
};

// fa_host::CheckTensorMemory on every tensor of a list (named name[i]).
bool CheckListMemory(ParamChecker &c, const aclTensorList *list, const char *name)
{
    if (list == nullptr) return true;
    uint64_t n = 0;
    aclGetTensorListSize(list, &n);
    for (uint64_t i = 0; i < n; ++i) {
        const std::string item = std::string(name) + "[" + std::to_string(i) + "]";
        if (!c.NotNull((*list)[i], item.c_str(), "a tensor of the list") ||
            !fa_host::CheckTensorMemory(c, (*list)[i], item.c_str())) {
            return false;
        }
    }
    return true;
}

bool CheckQuery(ParamChecker &c, const IfaArgs &a, const TensorDesc &q, State &s)
{
    s.layout = fa_host::ParseLayout(a.inputLayout);
    if (!c.DtypeIn(q, "query", {ACL_FLOAT16, ACL_BF16}) || !c.FormatND(q, "query") || !c.Contiguous(q, "query") ||
        !c.Require(s.layout == Layout::BSH || s.layout == Layout::BSND || s.layout == Layout::BNSD, "inputLayout",
                   "is \"%s\" (supported: BSH, BSND, BNSD)", a.inputLayout)) {
        return false;
    }
    const size_t rank = s.layout == Layout::BSH ? 3 : 4;
    const char *name = fa_host::LayoutName(s.layout);
    if (!c.Require(q.shape.size() == rank, "query", "has shape %s but inputLayout %s needs %zu dims",
                   q.ShapeString().c_str(), name, rank) ||
        !c.Require(a.numHeads > 0 && a.numHeads <= MAX_HEADS, "numHeads", "is %lld (must be in [1, %lld])",
                   LL(a.numHeads), LL(MAX_HEADS)) ||
        !c.Require(a.numKeyValueHeads >= 0, "numKeyValueHeads", "is %lld (must be >= 0; 0 means numHeads)",
                   LL(a.numKeyValueHeads))) {
        return false;
    }
    s.kvHeads = a.numKeyValueHeads == 0 ? a.numHeads : a.numKeyValueHeads;
    if (!c.Require(a.numHeads % s.kvHeads == 0, "numKeyValueHeads", "is %lld but numHeads %lld is not a multiple of it",
                   LL(s.kvHeads), LL(a.numHeads)) ||
        !c.Require(a.numHeads / s.kvHeads <= MAX_GQA_RATIO, "numKeyValueHeads",
                   "is %lld: numHeads / numKeyValueHeads = %lld exceeds %lld", LL(s.kvHeads),
                   LL(a.numHeads / s.kvHeads), LL(MAX_GQA_RATIO)) ||
        !c.Require(s.layout != Layout::BSH || q.shape[2] % a.numHeads == 0, "query",
                   "has H = %lld, not a multiple of numHeads %lld", LL(q.shape[2]), LL(a.numHeads))) {
        return false;
    }
    fa_host::DimsOf(q, s.layout, a.numHeads, s.q);
    return c.Require(s.q.n == a.numHeads, "numHeads", "is %lld but query has N = %lld (%s)", LL(a.numHeads), LL(s.q.n),
                     name) &&
           c.Require(s.q.s == 1, "query", "has S = %lld (incremental inference needs query S = 1)", LL(s.q.s)) &&
           c.Require(s.q.b <= MAX_BATCH, "query", "has batch B = %lld (at most %lld)", LL(s.q.b), LL(MAX_BATCH)) &&
           c.Require(s.q.d > 0 && s.q.d <= MAX_HEAD_DIM, "query", "has head dim D = %lld (must be in [1, %lld])",
                     LL(s.q.d), LL(MAX_HEAD_DIM));
}

// antiquantScale/antiquantOffset of int8 K/V: query dtype; (2) per tensor, or per channel
// (2, N, 1, D), (2, N, D), (2, H) with N = numKeyValueHeads.
bool CheckAntiquantParams(ParamChecker &c, const IfaArgs &a, const TensorDesc &q, const State &s)
{
    const TensorDesc sc = fa_host::Describe(a.antiquantScale);
    const int64_t n = s.kvHeads, d = s.q.d;
    const auto &sh = sc.shape;
    const bool perTensor = sh == std::vector<int64_t>{2};
    const bool perChannel = (sh == std::vector<int64_t>{2, n, 1, d}) || (sh == std::vector<int64_t>{2, n, d}) ||
                            (sh == std::vector<int64_t>{2, n * d});
    if (!c.SameDtype(sc, "antiquantScale", q, "query") || !c.FormatND(sc, "antiquantScale") ||
        !c.Contiguous(sc, "antiquantScale") ||
        !c.Require(perTensor || perChannel, "antiquantScale",
                   "has shape %s (per tensor (2); per channel (2, N, 1, D), (2, N, D) or (2, H) with N = %lld, "
                   "D = %lld)",
                   sc.ShapeString().c_str(), LL(n), LL(d))) {
        return false;
    }
    if (a.antiquantOffset == nullptr) return true;
    const TensorDesc of = fa_host::Describe(a.antiquantOffset);
    return c.SameDtype(of, "antiquantOffset", sc, "antiquantScale") && c.Contiguous(of, "antiquantOffset") &&
           c.Require(of.shape == sc.shape, "antiquantOffset",
                     "has shape %s but antiquantScale has %s (they must "
                     "match)",
                     of.ShapeString().c_str(), sc.ShapeString().c_str());
}

// key/value lists: presence, dtypes, formats, pairwise shapes.
bool CheckKvLists(ParamChecker &c, const IfaArgs &a, const TensorDesc &q, State &s)
{
    uint64_t nk = 0, nv = 0;
    aclGetTensorListSize(a.key, &nk);
    aclGetTensorListSize(a.value, &nv);
    if (!c.Require(nk > 0, "key", "is an empty tensor list") ||
        !c.Require(nv == nk, "value", "holds %llu tensors but key holds %llu (they must match)",
                   static_cast<unsigned long long>(nv), static_cast<unsigned long long>(nk))) {
        return false;
    }
    for (uint64_t i = 0; i < nk; ++i) {
        if (!c.NotNull((*a.key)[i], "key[i]", "every tensor of the list must be given") ||
            !c.NotNull((*a.value)[i], "value[i]", "every tensor of the list must be given")) {
            return false;
        }
        s.keys.push_back(fa_host::Describe((*a.key)[i]));
        s.values.push_back(fa_host::Describe((*a.value)[i]));
        const TensorDesc &k = s.keys.back();
        const TensorDesc &v = s.values.back();
        if (!c.DtypeIn(k, "key", {ACL_FLOAT16, ACL_BF16, ACL_INT8}) || !c.SameDtype(v, "value", k, "key") ||
            !c.SameDtype(k, "key", s.keys[0], "key[0]") || !c.FormatND(k, "key") || !c.FormatND(v, "value") ||
            !c.Contiguous(k, "key") || !c.Contiguous(v, "value") ||
            !c.Require(v.shape == k.shape, "value", "[%llu] has shape %s but key has %s (they must match)",
                       static_cast<unsigned long long>(i), v.ShapeString().c_str(), k.ShapeString().c_str())) {
            return false;
        }
    }
    if (s.keys[0].dtype == ACL_INT8) {
        return c.Require(a.antiquantScale != nullptr, "antiquantScale",
                         "is null but key/value are INT8 (int8 KV needs the antiquant scale)") &&
               CheckAntiquantParams(c, a, q, s);
    }
    return c.SameDtype(s.keys[0], "key", q, "query") &&
           c.Require(a.antiquantScale == nullptr && a.antiquantOffset == nullptr, "antiquantScale",
                     "/antiquantOffset given but key/value are not INT8 (they dequantise int8 KV only)");
}

bool CheckContiguousKv(ParamChecker &c, State &s)
{
    const char *name = fa_host::LayoutName(s.layout);
    const bool list = s.keys.size() > 1;
    if (!c.Require(!list || static_cast<int64_t>(s.keys.size()) == s.q.b, "key",
                   "holds %zu tensors (must be 1 tensor of batch B or B = %lld tensors of batch 1)", s.keys.size(),
                   LL(s.q.b))) {
        return false;
    }
    const size_t rank = s.layout == Layout::BSH ? 3 : 4;
    for (size_t i = 0; i < s.keys.size(); ++i) {
        const TensorDesc &k = s.keys[i];
        if (!c.Require(k.shape.size() == rank, "key", "[%zu] has shape %s but inputLayout %s needs %zu dims", i,
                       k.ShapeString().c_str(), name, rank)) {
            return false;
        }
        BnsdDims kd;
        fa_host::DimsOf(k, s.layout, s.kvHeads, kd);
        s.seqKv = std::max(s.seqKv, kd.s);
        s.listSeq.push_back(kd.s);
        if (!c.Require(list ? kd.b == 1 : kd.b == s.q.b, "key", "[%zu] has batch %lld but must be %lld (%s)", i,
                       LL(kd.b), LL(list ? 1 : s.q.b),
                       list ? "a list of B tensors holds one batch each" : "the batch of query") ||
            !c.Require(s.layout == Layout::BSH ? k.shape[2] == s.kvHeads * s.q.d : kd.n == s.kvHeads, "key",
                       "[%zu] has shape %s: N must be numKeyValueHeads = %lld (%s, H = N x D = %lld)", i,
                       k.ShapeString().c_str(), LL(s.kvHeads), name, LL(s.kvHeads * s.q.d)) ||
            !c.Require(s.layout == Layout::BSH || kd.d == s.q.d, "key",
                       "[%zu] has head dim D = %lld but query has %lld", i, LL(kd.d), LL(s.q.d))) {
            return false;
        }
    }
    return true;
}

// Spec 002: the block table must be valid. Every entry a batch's actual length uses must name a
// block of the cache, [0, blocknum); entries past the length are padding and never read.
bool CheckBlockIds(ParamChecker &c, const IfaArgs &a, const State &s, const TensorDesc &t, int64_t blockNum)
{
    std::vector<int64_t> ids;
    if (!fa_host::ReadIntTensor(c, a.blockTable, "blocktable", ids)) return false;
    const int64_t cols = t.shape[1];
    for (int64_t b = 0; b < s.q.b; ++b) {
        const int64_t len = s.lens.empty() ? 0 : s.lens[s.lens.size() == 1 ? 0 : static_cast<size_t>(b)];
        const int64_t used = (len + a.blockSize - 1) / a.blockSize;
        for (int64_t j = 0; j < used; ++j) {
            const int64_t id = ids[static_cast<size_t>(b * cols + j)];
            if (!c.Require(id >= 0 && id < blockNum, "blocktable",
                           "[%lld][%lld] is %lld: a block id the actual length uses must be in [0, blocknum = %lld)",
                           LL(b), LL(j), LL(id), LL(blockNum))) {
                return false;
            }
        }
    }
    return true;
}

bool CheckPaged(ParamChecker &c, const IfaArgs &a, State &s)
{
    const TensorDesc t = fa_host::Describe(a.blockTable);
    if (!c.DtypeIn(t, "blocktable", {ACL_INT32}) || !c.FormatND(t, "blocktable") || !c.Contiguous(t, "blocktable") ||
        !c.Require(t.shape.size() == 2 && t.shape[0] == s.q.b, "blocktable",
                   "has shape %s (must be (B = %lld, maxBlockNumPerSeq))", t.ShapeString().c_str(), LL(s.q.b)) ||
        !c.Require(s.keys.size() == 1, "key", "holds %zu tensors (page attention needs one cache tensor)",
                   s.keys.size()) ||
        !c.Require(a.actualSeqLengths != nullptr, "actualSeqLengths", "is null (required with blocktable)") ||
        !c.Require(a.kvPaddingSize == nullptr, "kvPaddingSize",
                   "is given with blocktable (KV left padding applies to contiguous caches only)") ||
        !c.Require(a.blockSize > 0 && a.blockSize <= MAX_BLOCK_SIZE && a.blockSize % 16 == 0, "blockSize",
                   "is %lld (page attention needs a multiple of 16 in [16, %lld])", LL(a.blockSize),
                   LL(MAX_BLOCK_SIZE)) ||
        !c.Require(s.keys[0].dtype != ACL_INT8 || a.blockSize % 32 == 0, "blockSize",
                   "is %lld (INT8 key/value need a multiple of 32)", LL(a.blockSize))) {
        return false;
    }
    const TensorDesc &k = s.keys[0];
    const int64_t h = s.kvHeads * s.q.d;
    bool ok;
    if (k.shape.size() == 3) {
        ok = c.Require(k.shape[1] == a.blockSize && k.shape[2] == h, "key",
                       "has shape %s (paged cache (blocknum, blockSize = %lld, H = %lld))", k.ShapeString().c_str(),
                       LL(a.blockSize), LL(h)) &&
             c.Require(h <= MAX_PAGED_H, "key",
                       "has H = numKeyValueHeads x D = %lld above %lld, the hardware limit of the (blocknum, "
                       "blocksize, H) cache (use (blocknum, KV_N, blocksize, D) or fewer KV heads)",
                       LL(h), LL(MAX_PAGED_H));
    } else {
        ok = c.Require(k.shape.size() == 4, "key", "has shape %s (a paged cache is 3-D or 4-D)",
                       k.ShapeString().c_str()) &&
             c.Require(s.layout == Layout::BNSD, "key",
                       "is a (blocknum, KV_N, blocksize, D) cache, which needs inputLayout BNSD") &&
             c.Require(k.shape[1] == s.kvHeads && k.shape[2] == a.blockSize && k.shape[3] == s.q.d, "key",
                       "has shape %s (paged cache (blocknum, KV_N = %lld, blockSize = %lld, D = %lld))",
                       k.ShapeString().c_str(), LL(s.kvHeads), LL(a.blockSize), LL(s.q.d));
    }
    if (!ok) return false;
    s.paged = true;
    s.seqKv = t.shape[1] * a.blockSize;
    int64_t blocks = 0;
    for (size_t b = 0; b < static_cast<size_t>(s.q.b); ++b) {
        const int64_t len = s.lens.empty() ? 0 : s.lens[s.lens.size() == 1 ? 0 : b];
        if (!c.Require(len <= s.seqKv, "blocktable",
                       "has %lld columns of %lld tokens but actualSeqLengths[%zu] = %lld needs more", LL(t.shape[1]),
                       LL(a.blockSize), b, LL(len))) {
            return false;
        }
        blocks += (len + a.blockSize - 1) / a.blockSize;
    }
    return c.Require(blocks <= k.shape[0], "key", "has %lld blocks but actualSeqLengths need %lld", LL(k.shape[0]),
                     LL(blocks)) &&
           CheckBlockIds(c, a, s, t, k.shape[0]);
}

bool CheckLengths(ParamChecker &c, const IfaArgs &a, State &s)
{
    if (a.actualSeqLengths == nullptr) return true;
    uint64_t n = 0;
    aclGetIntArraySize(a.actualSeqLengths, &n);
    if (!c.Require(n == 1 || static_cast<int64_t>(n) == s.q.b, "actualSeqLengths",
                   "has %llu values (must be 1 or batch B = %lld)", static_cast<unsigned long long>(n), LL(s.q.b))) {
        return false;
    }
    for (uint64_t i = 0; i < n; ++i) {
        s.lens.push_back((*a.actualSeqLengths)[i]);
        if (!c.Require(s.lens.back() >= 0, "actualSeqLengths", "[%llu] is %lld (must be >= 0)",
                       static_cast<unsigned long long>(i), LL(s.lens.back()))) {
            return false;
        }
    }
    return true;
}

bool CheckLengthsFitCache(ParamChecker &c, const State &s)
{
    if (s.paged || s.leftPadding) return true;  // paged: checked there; left padding: empty windows allowed
    for (size_t b = 0; b < static_cast<size_t>(s.q.b) && !s.lens.empty(); ++b) {
        const size_t i = s.lens.size() == 1 ? 0 : b;
        const int64_t seq = s.listSeq.size() > 1 ? s.listSeq[b] : s.seqKv;
        if (!c.Require(s.lens[i] <= seq, "actualSeqLengths", "[%zu] is %lld, above the KV S %lld of batch %zu", i,
                       LL(s.lens[i]), LL(seq), b)) {
            return false;
        }
    }
    return true;
}

bool CheckPadding(ParamChecker &c, const IfaArgs &a, State &s)
{
    if (a.kvPaddingSize == nullptr) return true;
    const TensorDesc p = fa_host::Describe(a.kvPaddingSize);
    s.leftPadding = a.actualSeqLengths != nullptr && p.Numel() != 0;
    return c.DtypeIn(p, "kvPaddingSize", {ACL_INT64}) &&
           c.Require(p.Numel() <= 1, "kvPaddingSize", "has shape %s (must hold one value, or none)",
                     p.ShapeString().c_str());
}

// KV positions the mask / pse must cover.
int64_t PositionsUsed(const State &s)
{
    if (s.lens.empty() || s.leftPadding) return s.seqKv;
    return *std::max_element(s.lens.begin(), s.lens.end());
}

bool CheckMaskPse(ParamChecker &c, const IfaArgs &a, const TensorDesc &q, const State &s)
{
    const int64_t need = PositionsUsed(s);
    if (a.attenMask != nullptr) {
        const TensorDesc m = fa_host::Describe(a.attenMask);
        if (!c.DtypeIn(m, "attenMask", {ACL_BOOL, ACL_INT8, ACL_UINT8}) || !c.FormatND(m, "attenMask") ||
            !c.Contiguous(m, "attenMask") || !c.RankIn(m, "attenMask", 2, 4)) {
            return false;
        }
        bool ones = true;
        for (size_t i = 1; i + 1 < m.shape.size(); ++i) ones = ones && m.shape[i] == 1;
        if (!c.Require(m.shape[0] == s.q.b && ones, "attenMask",
                       "has shape %s (must be (B, S), (B, 1, S) or "
                       "(B, 1, 1, S) with B = %lld)",
                       m.ShapeString().c_str(), LL(s.q.b)) ||
            !c.Require(m.shape.back() >= need, "attenMask",
                       "has shape %s: its last dim must cover the %lld KV "
                       "positions used",
                       m.ShapeString().c_str(), LL(need))) {
            return false;
        }
    }
    if (a.pseShift != nullptr) {
        const TensorDesc p = fa_host::Describe(a.pseShift);
        if (!c.SameDtype(p, "pseShift", q, "query") || !c.FormatND(p, "pseShift") || !c.Contiguous(p, "pseShift")) {
            return false;
        }
        if (!c.Require(p.shape.size() == 4 && (p.shape[0] == 1 || p.shape[0] == s.q.b) && p.shape[1] == s.q.n &&
                           p.shape[2] == 1,
                       "pseShift", "has shape %s (must be (B, N, 1, S) or (1, N, 1, S) with B = %lld, N = %lld)",
                       p.ShapeString().c_str(), LL(s.q.b), LL(s.q.n)) ||
            !c.Require(p.shape[3] >= need, "pseShift",
                       "has shape %s: its last dim must cover the %lld KV "
                       "positions used",
                       p.ShapeString().c_str(), LL(need))) {
            return false;
        }
    }
    return true;
}

bool CheckQuantAndOutput(ParamChecker &c, const IfaArgs &a, const TensorDesc &q, const State &s)
{
    const struct {
        const aclTensor *t;
        const char *name;
    } unused[] = {
        {a.dequantScale1, "dequantScale1"}, {a.quantScale1, "quantScale1"}, {a.dequantScale2, "dequantScale2"}};
    for (const auto &u : unused) {
        if (!c.Require(u.t == nullptr, u.name,
                       "must be null: it applies to an int8 query, which Atlas A2 does not "
                       "support (query/key/value all INT8), and fp16/bf16 input with INT8 output forbids it")) {
            return false;
        }
    }
    const TensorDesc o = fa_host::Describe(a.attentionOut);
    if (!c.DtypeIn(o, "attentionOut", {ACL_FLOAT16, ACL_BF16, ACL_INT8}) || !c.FormatND(o, "attentionOut") ||
        !c.Contiguous(o, "attentionOut") ||
        !c.Require(o.shape == q.shape, "attentionOut", "has shape %s but must equal query's %s",
                   o.ShapeString().c_str(), q.ShapeString().c_str())) {
        return false;
    }
    if (o.dtype == ACL_INT8) {
        if (!c.Require(a.quantScale2 != nullptr, "quantScale2", "is null but attentionOut is INT8 (required)")) {
            return false;
        }
        const TensorDesc qs = fa_host::Describe(a.quantScale2);
        const int64_t channels = s.q.n * s.q.d;
        if (!c.DtypeIn(qs, "quantScale2", {ACL_FLOAT, ACL_BF16}) ||
            !c.Require(qs.dtype == ACL_FLOAT || q.dtype == ACL_BF16, "quantScale2",
                       "is BFLOAT16 but query is %s (BFLOAT16 quantisation parameters need a BFLOAT16 query)",
                       fa_host::DtypeName(q.dtype)) ||
            !c.FormatND(qs, "quantScale2") || !c.Contiguous(qs, "quantScale2") ||
            !c.Require(qs.Numel() == 1 || qs.Numel() == channels, "quantScale2",
                       "has shape %s (per-tensor: 1 element; per-channel: N x D = %lld elements)",
                       qs.ShapeString().c_str(), LL(channels))) {
            return false;
        }
        if (a.quantOffset2 == nullptr) return true;
        const TensorDesc qo = fa_host::Describe(a.quantOffset2);
        return c.SameDtype(qo, "quantOffset2", qs, "quantScale2") && c.Contiguous(qo, "quantOffset2") &&
               c.Require(qo.shape == qs.shape, "quantOffset2", "has shape %s but quantScale2 has %s (they must match)",
                         qo.ShapeString().c_str(), qs.ShapeString().c_str());
    }
    return c.SameDtype(o, "attentionOut", q, "query") &&
           c.Require(a.quantScale2 == nullptr && a.quantOffset2 == nullptr, "quantScale2",
                     "/quantOffset2 given but attentionOut is not INT8 (they quantise an INT8 output only)");
}

}  // namespace

aclnnStatus IncreFlashAttentionCheckParams(const IfaArgs &a)
{
    ParamChecker c("aclnnIncreFlashAttentionV4");
    if (!c.NotNull(a.query, "query", "a required input") || !c.NotNull(a.key, "key", "a required input") ||
        !c.NotNull(a.value, "value", "a required input") ||
        !c.NotNull(a.inputLayout, "inputLayout", "a required attribute") ||
        !c.NotNull(a.attentionOut, "attentionOut", "an output") ||
        !c.NotNull(a.workspaceSize, "workspaceSize", "an output") || !c.NotNull(a.executor, "executor", "an output")) {
        return c.Status();
    }
    if (!CheckListMemory(c, a.key, "key") || !CheckListMemory(c, a.value, "value") ||
        !fa_host::CheckTensorsMemory(c, {{a.query, "query"},
                                         {a.pseShift, "pseShift"},
                                         {a.attenMask, "attenMask"},
                                         {a.dequantScale1, "dequantScale1"},
                                         {a.quantScale1, "quantScale1"},
                                         {a.dequantScale2, "dequantScale2"},
                                         {a.quantScale2, "quantScale2"},
                                         {a.quantOffset2, "quantOffset2"},
                                         {a.antiquantScale, "antiquantScale"},
                                         {a.antiquantOffset, "antiquantOffset"},
                                         {a.blockTable, "blocktable"},
                                         {a.kvPaddingSize, "kvPaddingSize"},
                                         {a.attentionOut, "attentionOut"}})) {
        return c.Status();
    }
    const TensorDesc q = fa_host::Describe(a.query);
    State s;
    bool ok = CheckQuery(c, a, q, s) && CheckKvLists(c, a, q, s) && CheckLengths(c, a, s) && CheckPadding(c, a, s);
    if (ok) ok = a.blockTable != nullptr ? CheckPaged(c, a, s) : CheckContiguousKv(c, s);
    ok = ok && CheckLengthsFitCache(c, s) && CheckMaskPse(c, a, q, s) && CheckQuantAndOutput(c, a, q, s) &&
         c.Require(a.innerPrecise == 0 || a.innerPrecise == 1, "innerPrecise",
                   "is %lld (0 = high precision, 1 = high performance)", LL(a.innerPrecise)) &&
         c.Require(std::isfinite(a.scaleValue) && std::fabs(a.scaleValue) <= FLT_MAX, "scaleValue",
                   "is %g (must be finite as a float: the kernel scales in float)", a.scaleValue);
    return ok ? ACLNN_SUCCESS : c.Status();
}

IfaArgs IncreFlashAttentionDropEmptyOptionals(IfaArgs a)
{
    for (const aclTensor **t :
         {&a.pseShift, &a.attenMask, &a.dequantScale1, &a.quantScale1, &a.dequantScale2, &a.quantScale2,
          &a.quantOffset2, &a.antiquantScale, &a.antiquantOffset, &a.blockTable, &a.kvPaddingSize})
        *t = NullIfEmpty(*t);
    return a;
}

const aclTensor *IncreFlashAttentionLeftPadding(const IfaArgs &a)
{
    return a.actualSeqLengths != nullptr ? a.kvPaddingSize : nullptr;
}
