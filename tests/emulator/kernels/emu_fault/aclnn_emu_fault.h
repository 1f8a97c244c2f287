// aclnn API of the fault proof operator: y = x (float), with the misuse `mode` selects
// (emu_fault_tiling_data.h) after `iterations` vector passes.
#ifndef ACLNN_EMU_FAULT_H_
#define ACLNN_EMU_FAULT_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

aclnnStatus aclnnEmuFaultGetWorkspaceSize(const aclTensor *x, int64_t mode, int64_t iterations, aclTensor *y,
                                          uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnEmuFault(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
