// CPU-twin driver of the genuine-style kernels (ICPU_RUN_KF, GmAlloc, SetKernelMode, as CANN's
// kernel unit tests drive a kernel). Prints "PASS <kernel>" per kernel whose output matches the
// host reference; exits non-zero on any mismatch.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tikicpulib.h"

extern "C" void events_vec_add(GM_ADDR x, GM_ADDR y);
extern "C" void events_mmad(GM_ADDR a, GM_ADDR b, GM_ADDR c);
extern "C" void list_gather(GM_ADDR list, GM_ADDR y);

namespace {
int g_failures = 0;

void Report(const char *name, int bad)
{
    if (bad == 0) {
        std::printf("PASS %s\n", name);
    } else {
        std::printf("FAIL %s: %d wrong elements\n", name, bad);
        ++g_failures;
    }
}

void VecAdd()
{
    constexpr uint32_t blocks = 3, n = blocks * 4 * 256;
    auto *x = static_cast<half *>(AscendC::GmAlloc(n * sizeof(half)));
    auto *y = static_cast<half *>(AscendC::GmAlloc(n * sizeof(half)));
    for (uint32_t i = 0; i < n; ++i) x[i] = half(static_cast<float>(i % 97) * 0.25f);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(events_vec_add, blocks, x, y);
    int bad = 0;
    for (uint32_t i = 0; i < n; ++i) bad += static_cast<float>(y[i]) != static_cast<float>(i % 97) * 0.25f + 1.5f;
    Report("events_vec_add", bad);
    AscendC::GmFree(x);
    AscendC::GmFree(y);
}

void Mmad()
{
    auto *a = static_cast<half *>(AscendC::GmAlloc(32 * 16 * sizeof(half)));
    auto *b = static_cast<half *>(AscendC::GmAlloc(16 * 32 * sizeof(half)));
    auto *c = static_cast<float *>(AscendC::GmAlloc(32 * 32 * sizeof(float)));
    for (int i = 0; i < 32 * 16; ++i) a[i] = half(static_cast<float>((i * 3) % 7) - 3.0f);
    for (int i = 0; i < 16 * 32; ++i) b[i] = half(static_cast<float>((i * 5) % 9) - 4.0f);
    AscendC::SetKernelMode(KernelMode::AIC_MODE);
    ICPU_RUN_KF(events_mmad, 1, a, b, c);
    int bad = 0;
    for (int i = 0; i < 32; ++i) {
        for (int j = 0; j < 32; ++j) {
            float s = 0.0f;
            for (int k = 0; k < 16; ++k) s += static_cast<float>(a[i * 16 + k]) * static_cast<float>(b[k * 32 + j]);
            bad += c[i * 32 + j] != s;
        }
    }
    Report("events_mmad", bad);
    AscendC::GmFree(a);
    AscendC::GmFree(b);
    AscendC::GmFree(c);
}

void ListGather()
{
    // The tensor-list block of three tensors of shapes (16), (2, 16), (32): header word = byte
    // offset of the pointer array, per tensor (dimNum | index << 32) and its dims, then pointers.
    half *t[3];
    const int sizes[3] = {16, 32, 32};
    for (int i = 0; i < 3; ++i) {
        t[i] = static_cast<half *>(AscendC::GmAlloc(sizes[i] * sizeof(half)));
        for (int e = 0; e < sizes[i]; ++e) t[i][e] = half(static_cast<float>(100 * i + e));
    }
    const uint64_t words[] = {8 * sizeof(uint64_t), 1, 16, 2ULL | (1ULL << 32), 2, 16, 1ULL | (2ULL << 32), 32};
    auto *desc = static_cast<uint64_t *>(AscendC::GmAlloc(11 * sizeof(uint64_t)));
    std::memcpy(desc, words, sizeof(words));
    for (int i = 0; i < 3; ++i) desc[8 + i] = reinterpret_cast<uintptr_t>(t[i]);
    auto *y = static_cast<half *>(AscendC::GmAlloc(3 * 16 * sizeof(half)));
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(list_gather, 1, desc, y);
    int bad = 0;
    for (int i = 0; i < 3; ++i) {
        for (int e = 0; e < 16; ++e) bad += static_cast<float>(y[i * 16 + e]) != static_cast<float>(100 * i + e);
    }
    Report("list_gather", bad);
    for (half *p : t) AscendC::GmFree(p);
    AscendC::GmFree(desc);
    AscendC::GmFree(y);
}
}  // namespace

int main()
{
    VecAdd();
    Mmad();
    ListGather();
    return g_failures == 0 ? 0 : 1;
}
