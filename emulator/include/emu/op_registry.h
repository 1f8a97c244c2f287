// The registry of operator prototypes (OP_ADD) and their tiling / infershape functions on the
// CPU target, and its JSON export for tools (msopgen JSON generation, fakit). Not a CANN header.
#pragma once
#include <string>
#include <vector>

#include "register/op_def.h"

namespace emu {

const ops::OpDef *FindOpDef(const std::string &opType);
std::vector<const ops::OpDef *> AllOpDefs();  // sorted by op type
// IMPL_OP_OPTILING(...).Tiling(fn) if registered, else OpDef AICore().SetTiling(fn), else nullptr.
gert::OpImplRegisterV2::TilingKernelFunc FindTilingFunc(const std::string &opType);
gert::OpImplRegisterV2::InferShapeKernelFunc FindInferShapeFunc(const std::string &opType);
gert::OpImplRegisterV2::InferDataTypeKernelFunc FindInferDataTypeFunc(const std::string &opType);
// {"ops":[{"op_type":..., "inputs":[{"name", "param_type", "dtypes", "formats"}], "outputs":[...],
//  "attrs":[{"name", "type", "required", "default"}]}]}
// ownObjectOnly: only the OpDefs registered from the binary that holds the emulator runtime
// (the product library libfa_ops_cpu.so), not those of libraries loaded on top of it (the
// test-only proof operators).
std::string OpDefsJson(bool ownObjectOnly);

}  // namespace emu

// OpDefsJson(true) and OpDefsJson(false).
extern "C" const char *ascendc_emu_opdefs_json(void);
extern "C" const char *ascendc_emu_opdefs_json_all(void);
