// The definition of aclIntArray (operator[]) for host code that reads the values of an
// aclIntArray argument: the emulator's on the CPU target, CANN's opdev header on the NPU.
#pragma once
#if __has_include("emu/acl_objects.h")
#include "emu/acl_objects.h"
#else
#include "opdev/common_types.h"
#endif
