// opdev/common_types.h of the CPU target: the C++ view op_api code has of the aclnn objects
// (aclTensor, aclIntArray, ... with their accessors). CANN installs this header as
// <cann>/include/aclnn/opdev/common_types.h, reachable as "opdev/common_types.h" once
// <cann>/include/aclnn is on the include path; the CPU build adds emulator/include/aclnn the
// same way. Only what the project's op_api code uses is provided (a missing name fails to
// compile, as on CANN when a name is misspelled).
#pragma once
#include "emu/acl_objects.h"
#include "opdev/op_errno.h"
