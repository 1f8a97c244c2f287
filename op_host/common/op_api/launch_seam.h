// The launch seam of an operator, written once: its parameter list in OpDef order (inputs,
// attributes with their OpDef names, outputs) as one X-macro in the operator's <op>_launch.h,
//     #define MY_OP_SEAM(IN, ATTR, OUT) IN(const aclTensor *, query) ... ATTR(int64_t, numHeads,
//         "num_heads") ... OUT(const aclTensor *, out)
// from which FA_DECLARE_LAUNCH_SEAM declares the two-stage launcher aclnnInner<OpType> that the
// public aclnn API calls after its checks. On the NPU package opbuild generates that launcher
// from the OpDef (aclnnInner_<op>.h, seen in the same TU, so the compiler checks that both
// agree); on the CPU target FA_DEFINE_LAUNCH_SEAM_CPU (launch_seam_cpu.h) defines it from the
// same list.
#pragma once
#include <cstdint>

#include "aclnn/aclnn_base.h"

#define FA_SEAM_PARAM(type, name, ...) type name,

#define FA_DECLARE_LAUNCH_SEAM(OpType, PARAMS)                                                                         \
    extern "C" {                                                                                                       \
    aclnnStatus aclnnInner##OpType##GetWorkspaceSize(PARAMS(FA_SEAM_PARAM, FA_SEAM_PARAM, FA_SEAM_PARAM)               \
                                                         uint64_t *workspaceSize,                                      \
                                                     aclOpExecutor **executor);                                        \
    aclnnStatus aclnnInner##OpType(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,                   \
                                   aclrtStream stream);                                                                \
    }
