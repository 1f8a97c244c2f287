// Host-side logging of the CPU target. Operators log the reason of a rejected aclnn call with
// EMU_LOGE (one line naming the parameter and the rule); the last error line is kept so that the
// harness can report it next to the status code. Not a CANN header.
#pragma once
#include <string>

namespace emu {

// Prints "[ERROR] <message>" to stderr and records it as the last error.
void LogError(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// Prints "[WARNING] <message>" to stderr and records it as the last warning.
void LogWarning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string LastErrorMessage();
std::string LastWarningMessage();
void ClearLastMessages();

}  // namespace emu

extern "C" {
// The last line logged with emu::LogError ("" when none since the last clear).
const char *ascendc_emu_last_error_message(void);
const char *ascendc_emu_last_warning_message(void);
void ascendc_emu_clear_last_messages(void);
// 1 (default): emu::LogError also prints "[ERROR] ..." to stderr. A caller that reports the last
// error itself (the Python harness raises it) sets 0, so each error is shown once.
void ascendc_emu_set_errors_to_stderr(int on);
}

#define EMU_LOGE(fmt, ...) ::emu::LogError(fmt, ##__VA_ARGS__)
#define EMU_LOGW(fmt, ...) ::emu::LogWarning(fmt, ##__VA_ARGS__)
