// CANN's register/tilingdata_base.h. This project's tiling data are plain structs shared by host
// and kernel (op_kernel/<op>/<op>_tiling_data.h), so the BEGIN_TILING_DATA_DEF family is not
// provided on the CPU target; including the header pulls in what tiling code needs alongside.
#ifndef EMU_REGISTER_TILINGDATA_BASE_H_
#define EMU_REGISTER_TILINGDATA_BASE_H_
#include "exe_graph/runtime/tiling_context.h"
#include "register/op_impl_registry.h"
#endif
