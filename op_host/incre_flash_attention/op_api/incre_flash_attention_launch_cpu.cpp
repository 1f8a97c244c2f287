// The CPU target's aclnnInnerIncreFlashAttention (incre_flash_attention_launch.h), defined from the
// seam's parameter list (launch_seam_cpu.h): what opbuild generates for the NPU package.
#include "incre_flash_attention_launch.h"

#include "emu/op_runner.h"
#include "../../common/op_api/launch_seam_cpu.h"

FA_DEFINE_LAUNCH_SEAM_CPU(IncreFlashAttention, incre_flash_attention, INCRE_FLASH_ATTENTION_SEAM)
