// Error log of the host code: on the CPU target the emulator's logger, which also keeps the
// last line for the harness (fakit.AclnnError); elsewhere stderr.
#pragma once
#if __has_include("emu/log.h")
#include "emu/log.h"
#define FA_LOGE(fmt, ...) EMU_LOGE(fmt, ##__VA_ARGS__)
#define FA_LOGW(fmt, ...) EMU_LOGW(fmt, ##__VA_ARGS__)
#else
#include <cstdio>
#define FA_LOGE(fmt, ...) std::fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)
#define FA_LOGW(fmt, ...) std::fprintf(stderr, "[WARNING] " fmt "\n", ##__VA_ARGS__)
#endif
