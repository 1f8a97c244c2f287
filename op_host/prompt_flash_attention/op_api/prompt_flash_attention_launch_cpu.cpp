// The CPU target's aclnnInnerPromptFlashAttention (prompt_flash_attention_launch.h), defined from the
// seam's parameter list (launch_seam_cpu.h): what opbuild generates for the NPU package.
#include "prompt_flash_attention_launch.h"

#include "emu/op_runner.h"
#include "../../common/op_api/launch_seam_cpu.h"

FA_DEFINE_LAUNCH_SEAM_CPU(PromptFlashAttention, prompt_flash_attention, PROMPT_FLASH_ATTENTION_SEAM)
