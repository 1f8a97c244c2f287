// Error log of the host code (tiling, op_api checks). Host code, so a build-time switch:
//  - NPU build (cmake/npu.cmake defines FA_NPU_BUILD): CANN's device log, toolchain/slog.h,
//    module OP — what CANN's op_host code logs to; ASCEND_SLOG_PRINT_TO_STDOUT=1 shows it.
//    No emulator header is reachable there.
//  - CPU target: the emulator's logger, which also keeps the last line for the harness
//    (fakit.AclnnError).
//  - anything else (a bare compile of a host source): stderr.
#pragma once
#if defined(FA_NPU_BUILD)
#include "toolchain/slog.h"
#define FA_LOGE(fmt, ...) dlog_error(OP, "[FA] " fmt, ##__VA_ARGS__)
#define FA_LOGW(fmt, ...) dlog_warn(OP, "[FA] " fmt, ##__VA_ARGS__)
#elif __has_include("emu/log.h")
#include "emu/log.h"
#define FA_LOGE(fmt, ...) EMU_LOGE(fmt, ##__VA_ARGS__)
#define FA_LOGW(fmt, ...) EMU_LOGW(fmt, ##__VA_ARGS__)
#else
#include <cstdio>
#define FA_LOGE(fmt, ...) std::fprintf(stderr, "[ERROR] " fmt "\n", ##__VA_ARGS__)
#define FA_LOGW(fmt, ...) std::fprintf(stderr, "[WARNING] " fmt "\n", ##__VA_ARGS__)
#endif
