// Host-side logging: stderr lines plus the last error/warning kept for the harness.
#include "emu/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace emu {
namespace {

std::mutex g_mu;
std::atomic<bool> g_errorsToStderr{true};
std::string g_lastError;
std::string g_lastWarning;

std::string Format(const char *fmt, va_list args)
{
    char buf[2048];
    std::vsnprintf(buf, sizeof(buf), fmt, args);
    return buf;
}

}  // namespace

void LogError(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    std::string msg = Format(fmt, args);
    va_end(args);
    if (g_errorsToStderr.load()) std::fprintf(stderr, "[ERROR] %s\n", msg.c_str());
    std::lock_guard<std::mutex> lock(g_mu);
    g_lastError = msg;
}

void LogWarning(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    std::string msg = Format(fmt, args);
    va_end(args);
    std::fprintf(stderr, "[WARNING] %s\n", msg.c_str());
    std::lock_guard<std::mutex> lock(g_mu);
    g_lastWarning = msg;
}

std::string LastErrorMessage()
{
    std::lock_guard<std::mutex> lock(g_mu);
    return g_lastError;
}

std::string LastWarningMessage()
{
    std::lock_guard<std::mutex> lock(g_mu);
    return g_lastWarning;
}

void ClearLastMessages()
{
    std::lock_guard<std::mutex> lock(g_mu);
    g_lastError.clear();
    g_lastWarning.clear();
}

}  // namespace emu

// The C exports hand out a copy that stays valid until the next call from the same thread.
extern "C" const char *ascendc_emu_last_error_message(void)
{
    thread_local std::string copy;
    copy = emu::LastErrorMessage();
    return copy.c_str();
}

extern "C" const char *ascendc_emu_last_warning_message(void)
{
    thread_local std::string copy;
    copy = emu::LastWarningMessage();
    return copy.c_str();
}

extern "C" void ascendc_emu_clear_last_messages(void) { emu::ClearLastMessages(); }

extern "C" void ascendc_emu_set_errors_to_stderr(int on) { emu::g_errorsToStderr.store(on != 0); }
