// The message that refuses a launch whose code was compiled against other emulator headers than
// the runtime's (their ASCEND_EMU_ABI_STAMP differs; 0: headers from before the stamp existed).
// Shared by emu::Launch and the `<<<>>>` launch sites. Not a CANN header.
#pragma once
#include <cstdint>
#include <string>

namespace emu {
// `launch` names the launch ("K" or "K<<<n>>> from F"), `subject` what was built ("the kernel").
std::string ForeignHeadersMessage(const std::string &launch, const char *subject, uint64_t stamp);
}  // namespace emu
