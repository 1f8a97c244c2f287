// What the per-API cases of api_tests share: EXPECT (records a mismatch and carries on), the
// launch helpers, and the table each source file adds its cases to (api_tests_main.cpp runs one).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include "tikicpulib.h"

using namespace AscendC;

// Mismatches in this process; main prints PASS when a case left it at 0.
inline int g_failures = 0;
#define EXPECT(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                           \
            std::printf(__VA_ARGS__);                                                                                  \
            std::printf("\n");                                                                                         \
            ++g_failures;                                                                                              \
        }                                                                                                              \
    } while (0)

inline void Run(emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    emu::LaunchConfig cfg;
    cfg.name = "api_test";
    cfg.mix = mix;
    cfg.blockDim = blockDim;
    emu::Launch(cfg, body, ASCEND_EMU_ABI_STAMP);
}
inline void OnOneAiv(const std::function<void(TPipe &, TBuf<TPosition::VECCALC> &)> &body)
{
    Run(emu::CoreMix::AIV_ONLY, 1, [&] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 64 * 1024);
        body(pipe, buf);
    });
}

using ApiCases = std::map<std::string, void (*)()>;

// Adds one file's cases to the table; a name another file already took is a mistake in the build.
inline void AddCases(ApiCases &cases, const ApiCases &mine)
{
    for (const auto &c : mine)
        if (!cases.insert(c).second) {
            std::fprintf(stderr, "api_tests: case %s is defined twice\n", c.first.c_str());
            std::abort();
        }
}

void AddVectorCases(ApiCases &cases);  // api_vector_tests.cpp
void AddCubeCases(ApiCases &cases);    // api_cube_tests.cpp
void AddCopyCases(ApiCases &cases);    // api_copy_tests.cpp
void AddBufferCases(ApiCases &cases);  // api_buffer_tests.cpp
void AddSyncCases(ApiCases &cases);    // api_sync_tests.cpp
