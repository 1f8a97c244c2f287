// CANN's register/op_def_registry.h: OpDef, OP_ADD and the tiling/infershape registration.
#ifndef EMU_REGISTER_OP_DEF_REGISTRY_H_
#define EMU_REGISTER_OP_DEF_REGISTRY_H_
#include "register/op_def.h"
#include "register/op_impl_registry.h"
#endif
