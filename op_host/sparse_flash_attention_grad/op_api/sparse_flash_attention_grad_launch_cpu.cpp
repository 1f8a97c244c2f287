// The CPU target's aclnnInnerSparseFlashAttentionGrad (sparse_flash_attention_grad_launch.h), defined from the
// seam's parameter list (launch_seam_cpu.h): what opbuild generates for the NPU package.
#include "sparse_flash_attention_grad_launch.h"

#include "emu/op_runner.h"
#include "../../common/op_api/launch_seam_cpu.h"

FA_DEFINE_LAUNCH_SEAM_CPU(SparseFlashAttentionGrad, sparse_flash_attention_grad, SPARSE_FLASH_ATTENTION_GRAD_SEAM)
