// What the GM hazard checker's case programs share: launching a small kernel on the emulator and
// a `main` that runs one named case (`<program> <case>`, `--list` prints them), printing
// "DONE <case>" when the kernel ran clean.
#pragma once

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>

#include "tikicpulib.h"

namespace race_cases {

using Cases = std::map<std::string, void (*)()>;

inline void Launch(const char *name, emu::CoreMix mix, uint32_t blockDim, const std::function<void()> &body)
{
    emu::LaunchConfig cfg;
    cfg.name = name;
    cfg.mix = mix;
    cfg.blockDim = blockDim;
    emu::Launch(cfg, body, ASCEND_EMU_ABI_STAMP);
}

inline int Main(const char *program, const Cases &cases, int argc, char **argv)
{
    if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
        for (const auto &c : cases) std::printf("%s\n", c.first.c_str());
        return 0;
    }
    if (argc != 2 || cases.count(argv[1]) == 0) {
        std::fprintf(stderr, "usage: %s <case>|--list\n", program);
        return 2;
    }
    cases.at(argv[1])();
    std::printf("DONE %s\n", argv[1]);
    return 0;
}

}  // namespace race_cases
