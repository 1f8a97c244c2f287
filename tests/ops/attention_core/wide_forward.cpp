// Runs one forward call (FlashAttentionVarLenScore or PromptFlashAttention) on the CPU target
// twice with every output and the workspace filled with a canary byte: once with the blockDim
// its tiling planned, once with a wider one, as FAG V5's recompute launches the forward core
// (for the larger of the forward and backward plans). Cores past the forward plan have no
// units and must write nothing, so the second run must leave every byte of the outputs and of
// the workspace (plus a slack past its end, room for the extra cores' per-core regions) as the
// first run left them.
//
//     wide_forward fav <dtype> <N> <Nkv> <D> <qlens> <kvlens> <sparseMode> <keepProb> <pre> <next> <wide>
//     wide_forward pfa <dtype> <B> <N> <Nkv> <S> <Skv> <D> <mask 0|1> <pre> <next> <wide>
//
// dtype is fp16 or bf16; qlens / kvlens are comma-separated per-batch lengths. Prints one JSON
// line: {"used": planned cores, "wide": launched cores, "key": tiling key, "ws": workspace bytes, "diff": {name:
// bytes that differ between the runs}, "canary": {name: bytes still holding the canary in the
// planned run}}.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "emu/op_runner.h"
#include "flash_attention_score/op_api/aclnn_flash_attention_score.h"
#include "prompt_flash_attention/op_api/aclnn_prompt_flash_attention.h"
#include "attention_core/forward/forward_params.h"

namespace {
constexpr uint8_t CANARY = 0xA5;

[[noreturn]] void Die(const char *what)
{
    std::fprintf(stderr, "wide_forward: %s\n", what);
    std::exit(2);
}

void Check(int status, const char *what)
{
    if (status != 0) {
        std::fprintf(stderr, "wide_forward: %s returned %d\n", what, status);
        std::exit(2);
    }
}

std::vector<int64_t> Ints(const char *s)
{
    std::vector<int64_t> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ',')) v.push_back(std::stoll(item));
    return v;
}

// A device tensor with its host image.
struct Tensor {
    std::vector<int64_t> shape;
    aclDataType dtype = ACL_FLOAT16;
    size_t elemBytes = 2;
    std::vector<uint8_t> host;
    void *dev = nullptr;
    aclTensor *acl = nullptr;

    size_t Bytes() const { return host.size(); }
};

Tensor MakeTensor(std::vector<int64_t> shape, aclDataType dtype, size_t elemBytes)
{
    Tensor t;
    t.shape = std::move(shape);
    t.dtype = dtype;
    t.elemBytes = elemBytes;
    size_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<size_t>(d);
    t.host.assign(n * elemBytes, 0);
    return t;
}

uint32_t g_seed = 12345;
float Uniform()  // in [-1, 1)
{
    g_seed = g_seed * 1664525u + 1013904223u;
    return static_cast<float>(g_seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
}

uint16_t Half(float f, bool bf16)
{
    if (bf16) {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        return static_cast<uint16_t>(bits >> 16);
    }
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, 2);
    return bits;
}

void FillRandom(Tensor &t, bool bf16)
{
    for (size_t i = 0; i + 1 < t.host.size(); i += 2) {
        const uint16_t v = Half(Uniform(), bf16);
        std::memcpy(&t.host[i], &v, 2);
    }
}

// Creates the device copy of every tensor from its host image.
void Upload(Tensor &t)
{
    if (t.dev == nullptr) Check(aclrtMalloc(&t.dev, t.Bytes(), ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    Check(aclrtMemcpy(t.dev, t.Bytes(), t.host.data(), t.Bytes(), ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    if (t.acl == nullptr) {
        std::vector<int64_t> strides(t.shape.size(), 1);
        for (size_t i = t.shape.size(); i-- > 1;) strides[i - 1] = strides[i] * t.shape[i];
        t.acl = aclCreateTensor(t.shape.data(), t.shape.size(), t.dtype, strides.data(), 0, ACL_FORMAT_ND,
                                t.shape.data(), t.shape.size(), t.dev);
    }
}

std::vector<uint8_t> Download(const void *dev, size_t bytes)
{
    std::vector<uint8_t> h(bytes);
    Check(aclrtMemcpy(h.data(), bytes, dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST), "aclrtMemcpy");
    return h;
}

// The images of the outputs (by name) and the workspace after one run.
using Images = std::map<std::string, std::vector<uint8_t>>;

struct Call {
    // GetWorkspaceSize of the operator on the (canary-filled) outputs.
    aclnnStatus (*getWs)(Call &, uint64_t *, aclOpExecutor **) = nullptr;
    aclnnStatus (*launch)(void *, uint64_t, aclOpExecutor *, aclrtStream) = nullptr;
    std::map<std::string, Tensor *> outputs;
    // fav
    Tensor q, k, v, mask, drop, outMax, outSum, out;
    aclIntArray *qlen = nullptr, *kvlen = nullptr, *prefix = nullptr, *seq = nullptr;
    int64_t heads = 0, kvHeads = 0, mode = 0, pre = 0, next = 0;
    double scale = 0.125, keepProb = 1.0;
    std::string layout;
};

// Random Q, K and V on the device.
void FillQkv(Call &c, bool bf16)
{
    for (Tensor *t : {&c.q, &c.k, &c.v}) {
        FillRandom(*t, bf16);
        Upload(*t);
    }
}

// One run: outputs and workspace start as the canary; blockDim is the plan's (launch false) or
// `wide`. The extra cores' per-core workspace regions would lie past the plan's workspace: a
// slack of `wide` regions (wsBytesPerCore each) and 1 MiB past its end holds them, so a write
// there shows as a changed canary. Returns the images and the plan's core count / workspace size.
Images Run(Call &c, uint32_t wide, bool launchWide, uint32_t &used, uint64_t &wsBytes, uint64_t &key,
           aclrtStream stream)
{
    for (auto &o : c.outputs) {
        std::memset(o.second->host.data(), CANARY, o.second->Bytes());
        Upload(*o.second);
    }
    aclOpExecutor *exe = nullptr;
    Check(c.getWs(c, &wsBytes, &exe), "GetWorkspaceSize");
    const auto &tiling = *static_cast<const AttentionCore::ForwardParams *>(exe->call->tilingData.GetData());
    used = tiling.usedCores;
    key = exe->call->tilingKey;
    if (exe->call->blockDim != used) Die("the tiling's blockDim is not its usedCores");
    if (launchWide) exe->call->blockDim = wide;
    const size_t total = wsBytes + static_cast<uint64_t>(wide) * tiling.wsBytesPerCore + (1u << 20);
    void *ws = nullptr;
    Check(aclrtMalloc(&ws, total, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc(workspace)");
    const std::vector<uint8_t> canary(total, CANARY);
    Check(aclrtMemcpy(ws, total, canary.data(), total, ACL_MEMCPY_HOST_TO_DEVICE), "aclrtMemcpy");
    Check(c.launch(ws, wsBytes, exe, stream), "launch");
    Check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    Images img;
    for (auto &o : c.outputs) img[o.first] = Download(o.second->dev, o.second->Bytes());
    img["workspace"] = Download(ws, total);
    aclrtFree(ws);
    return img;
}

aclnnStatus FavWs(Call &c, uint64_t *ws, aclOpExecutor **exe)
{
    return aclnnFlashAttentionVarLenScoreGetWorkspaceSize(
        c.q.acl, c.k.acl, c.v.acl, nullptr, c.drop.acl, nullptr, c.mask.acl, c.prefix, c.qlen, c.kvlen, c.scale,
        c.keepProb, c.pre, c.next, c.heads, const_cast<char *>(c.layout.c_str()), 0, c.mode, c.outMax.acl, c.outSum.acl,
        nullptr, c.out.acl, ws, exe);
}

aclnnStatus PfaWs(Call &c, uint64_t *ws, aclOpExecutor **exe)
{
    return aclnnPromptFlashAttentionGetWorkspaceSize(c.q.acl, c.k.acl, c.v.acl, nullptr, c.mask.acl, nullptr, c.heads,
                                                     c.scale, c.pre, c.next, const_cast<char *>(c.layout.c_str()),
                                                     c.kvHeads, c.out.acl, ws, exe);
}

void SetUpFav(Call &c, char **a)
{
    const bool bf16 = std::strcmp(a[0], "bf16") == 0;
    const aclDataType dt = bf16 ? ACL_BF16 : ACL_FLOAT16;
    c.heads = std::stoll(a[1]);
    c.kvHeads = std::stoll(a[2]);
    const int64_t d = std::stoll(a[3]);
    const std::vector<int64_t> ql = Ints(a[4]), kl = Ints(a[5]);
    c.mode = std::stoll(a[6]);
    c.keepProb = std::stod(a[7]);
    c.pre = std::stoll(a[8]);
    c.next = std::stoll(a[9]);
    c.layout = "TND";
    std::vector<int64_t> cq, ck;
    int64_t tq = 0, tk = 0, maxQ = 0, maxK = 0, bits = 0;
    for (size_t b = 0; b < ql.size(); ++b) {
        cq.push_back(tq += ql[b]);
        ck.push_back(tk += kl[b]);
        maxQ = std::max(maxQ, ql[b]);
        maxK = std::max(maxK, kl[b]);
        bits += c.heads * ql[b] * kl[b];
    }
    c.q = MakeTensor({tq, c.heads, d}, dt, 2);
    c.k = MakeTensor({tk, c.kvHeads, d}, dt, 2);
    c.v = MakeTensor({tk, c.kvHeads, d}, dt, 2);
    FillQkv(c, bf16);
    c.qlen = aclCreateIntArray(cq.data(), cq.size());
    c.kvlen = aclCreateIntArray(ck.data(), ck.size());
    if (c.mode >= 1) {  // modes 2-4, 7, 8 the 2048 x 2048 causal mask, 6 the 3072 x 2048 one
        const int64_t rows = c.mode == 1 ? maxQ : c.mode == 6 ? 3072 : 2048;
        const int64_t cols = c.mode == 1 ? maxK : 2048;
        c.mask = MakeTensor({rows, cols}, ACL_BOOL, 1);
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < cols; ++j) {
                c.mask.host[i * cols + j] = i < 2048 ? j > i : j >= 1024;
            }
        }
        Upload(c.mask);
    }
    if (c.mode == 6) {
        std::vector<int64_t> pre;
        for (size_t b = 0; b < ql.size(); ++b) {  // halfway in [max(Skv - Sq, 0), Skv]
            const int64_t lo = std::max<int64_t>(kl[b] - ql[b], 0);
            pre.push_back(lo + (kl[b] - lo) / 2);
        }
        c.prefix = aclCreateIntArray(pre.data(), pre.size());
    }
    if (c.keepProb < 1.0) {
        c.drop = MakeTensor({(bits + 7) / 8}, ACL_UINT8, 1);
        for (auto &byte : c.drop.host) byte = static_cast<uint8_t>(Uniform() * 127.0f + 128.0f);
        Upload(c.drop);
    }
    c.outMax = MakeTensor({tq, c.heads, 8}, ACL_FLOAT, 4);
    c.outSum = MakeTensor({tq, c.heads, 8}, ACL_FLOAT, 4);
    c.out = MakeTensor({tq, c.heads, d}, dt, 2);
    c.outputs = {{"softmax_max", &c.outMax}, {"softmax_sum", &c.outSum}, {"attention_out", &c.out}};
    c.getWs = FavWs;
    c.launch = aclnnFlashAttentionVarLenScore;
}

void SetUpPfa(Call &c, char **a)
{
    const bool bf16 = std::strcmp(a[0], "bf16") == 0;
    const aclDataType dt = bf16 ? ACL_BF16 : ACL_FLOAT16;
    const int64_t b = std::stoll(a[1]);
    c.heads = std::stoll(a[2]);
    c.kvHeads = std::stoll(a[3]);
    const int64_t s = std::stoll(a[4]), skv = std::stoll(a[5]), d = std::stoll(a[6]);
    const bool mask = std::stoll(a[7]) != 0;
    c.pre = std::stoll(a[8]);
    c.next = std::stoll(a[9]);
    c.layout = "BNSD";
    c.q = MakeTensor({b, c.heads, s, d}, dt, 2);
    c.k = MakeTensor({b, c.kvHeads, skv, d}, dt, 2);
    c.v = MakeTensor({b, c.kvHeads, skv, d}, dt, 2);
    FillQkv(c, bf16);
    if (mask) {  // causal from the top-left corner
        c.mask = MakeTensor({s, skv}, ACL_BOOL, 1);
        for (int64_t i = 0; i < s; ++i) {
            for (int64_t j = 0; j < skv; ++j) c.mask.host[i * skv + j] = j > i;
        }
        Upload(c.mask);
    }
    c.out = MakeTensor({b, c.heads, s, d}, dt, 2);
    c.outputs = {{"attention_out", &c.out}};
    c.getWs = PfaWs;
    c.launch = aclnnPromptFlashAttention;
}
}  // namespace

int main(int argc, char **argv)
{
    if (argc != 13) Die("usage: see the head of wide_forward.cpp");
    const std::string op = argv[1];
    const uint32_t wide = static_cast<uint32_t>(std::stoul(argv[12]));
    Check(aclInit(nullptr), "aclInit");
    Check(aclrtSetDevice(0), "aclrtSetDevice");
    aclrtStream stream = nullptr;
    Check(aclrtCreateStream(&stream), "aclrtCreateStream");
    Call c;
    if (op == "fav") {
        SetUpFav(c, argv + 2);
    } else if (op == "pfa") {
        SetUpPfa(c, argv + 2);
    } else {
        Die("op must be fav or pfa");
    }
    uint32_t used = 0;
    uint64_t wsBytes = 0, key = 0;
    const Images planned = Run(c, wide, false, used, wsBytes, key, stream);
    if (wide <= used) Die("the wide launch must have more cores than the plan");
    const Images widened = Run(c, wide, true, used, wsBytes, key, stream);
    std::printf("{\"used\": %u, \"wide\": %u, \"key\": %llu, \"ws\": %llu, \"diff\": {", used, wide,
                static_cast<unsigned long long>(key), static_cast<unsigned long long>(wsBytes));
    const char *sep = "";
    for (const auto &img : planned) {
        const std::vector<uint8_t> &w = widened.at(img.first);
        size_t diff = 0;
        for (size_t i = 0; i < w.size(); ++i) diff += w[i] != img.second[i];
        std::printf("%s\"%s\": %zu", sep, img.first.c_str(), diff);
        sep = ", ";
    }
    std::printf("}, \"canary\": {");
    sep = "";
    for (const auto &img : planned) {
        size_t left = 0;
        for (uint8_t byte : img.second) left += byte == CANARY;
        std::printf("%s\"%s\": %zu", sep, img.first.c_str(), left);
        sep = ", ";
    }
    const std::vector<uint8_t> &ws = widened.at("workspace");
    size_t slackLeft = 0;
    for (size_t i = wsBytes; i < ws.size(); ++i) slackLeft += ws[i] == CANARY;
    std::printf("}, \"slack\": %llu, \"slack_canary\": %zu}\n", static_cast<unsigned long long>(ws.size() - wsBytes),
                slackLeft);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return 0;
}
