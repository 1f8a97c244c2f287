// aclnn base header of the CPU target: aclnnInit/aclnnFinalize and the meta objects (as CANN's
// aclnn/aclnn_base.h). The status codes (ACLNN_SUCCESS, ...) are not here, as in CANN: op_api
// code gets them from opdev/op_errno.h.
#ifndef EMU_ACLNN_ACLNN_BASE_H_
#define EMU_ACLNN_ACLNN_BASE_H_

#include "aclnn/acl_meta.h"
#include "acl/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif  // EMU_ACLNN_ACLNN_BASE_H_
