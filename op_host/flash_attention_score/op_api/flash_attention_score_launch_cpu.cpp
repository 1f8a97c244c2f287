// The CPU target's aclnnInnerFlashAttentionScore (flash_attention_score_launch.h), defined from the
// seam's parameter list (launch_seam_cpu.h): what opbuild generates for the NPU package.
#include "flash_attention_score_launch.h"

#include "emu/op_runner.h"
#include "../../common/op_api/launch_seam_cpu.h"

FA_DEFINE_LAUNCH_SEAM_CPU(FlashAttentionScore, flash_attention_score, FLASH_ATTENTION_SCORE_SEAM)
