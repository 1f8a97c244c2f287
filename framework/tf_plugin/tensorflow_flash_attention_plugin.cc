// TensorFlow graph entry for the package's operators (GE parser plugin, built by cmake/npu.cmake
// into libcust_tf_parsers.so, installed to vendors/<vendor>/framework/tensorflow).
//
// A TensorFlow graph that names these op types (as the tf_adapter's npu ops do) maps one to one
// onto our OpTypes; attributes carry the same snake_case names as the OpDefs, so the automatic
// by-name mapping applies. TensorFlow has no optional inputs: a graph must pass every input the
// TF op declares (see docs/framework.md).
#include "register/register.h"

namespace domi {

#define FA_TF_OP(OP_TYPE)                                                                                              \
    REGISTER_CUSTOM_OP(OP_TYPE)                                                                                        \
        .FrameworkType(TENSORFLOW)                                                                                     \
        .OriginOpType(OP_TYPE)                                                                                         \
        .ParseParamsByOperatorFn(AutoMappingByOpFn)                                                                    \
        .ImplyType(ImplyType::TVM)

FA_TF_OP("PromptFlashAttention");
FA_TF_OP("IncreFlashAttention");
FA_TF_OP("FlashAttentionScore");
FA_TF_OP("FlashAttentionScoreGrad");
FA_TF_OP("SparseFlashAttentionGrad");

}  // namespace domi
