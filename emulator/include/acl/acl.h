// Umbrella header of the acl runtime on the CPU target (as CANN's acl/acl.h).
#ifndef EMU_ACL_ACL_H_
#define EMU_ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 0
#define ACL_PATCH_VERSION 0

#endif  // EMU_ACL_ACL_H_
