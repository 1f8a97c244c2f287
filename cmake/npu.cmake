# The CANN build (FA_TARGET=npu): Ascend C kernels, host libraries and the custom-op package,
# through the op-project CMake functions CANN ships as the "ASC" package (npu_op_code_gen,
# npu_op_library, npu_op_kernel_sources/_library, npu_op_package[_add]; CANN >= 8.5, see
# asc-devkit "Aclnn算子工程化开发 / 编译与部署 / 基本流程" and "附录 / cmake函数参考").
#
# Operators are discovered, not listed: every op_kernel/<op>/<op>.cpp with an op_host/<op>/
# directory whose *_def.cpp registers an OpType with OP_ADD(<OpType>). The package registers the
# official OpTypes (PromptFlashAttention, FlashAttentionScore, ...) as a vendor override, as
# ops-transformer's custom packages do: a custom vendor loads before the built-in CANN ops.
#
# Inputs (cmake/npu_build.sh sets them): ASCEND_CANN_PACKAGE_PATH, ASCEND_COMPUTE_UNIT,
# FA_SOC_VERSION, FA_NPU_OPS (";"-list, empty = all), vendor_name, FA_NPU_PACKAGE.
cmake_minimum_required(VERSION 3.19)

get_filename_component(_fa_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(FA_NPU_SOURCE_ROOT "${_fa_root}" CACHE PATH "tree holding op_host/, op_kernel/ and framework/")
set(ASCEND_CANN_PACKAGE_PATH "$ENV{ASCEND_HOME_PATH}" CACHE PATH "CANN toolkit install directory")
set(ASCEND_COMPUTE_UNIT "ascend910b" CACHE STRING "compute unit(s) of the kernels (OpDef AddConfig name)")
set(FA_SOC_VERSION "Ascend910B2" CACHE STRING "SoC version (simulator directory name)")
set(FA_NPU_OPS "" CACHE STRING "operators to build (directory names or OpTypes); empty = all")
set(vendor_name "fa" CACHE STRING "vendor directory of the custom-op package (vendors/<name>)")
option(FA_NPU_PACKAGE "produce the custom_opp_<os>_<arch>.run package" ON)
set(ASCEND_AUTOGEN_PATH "${CMAKE_BINARY_DIR}/autogen" CACHE PATH "opbuild output (aclnn_*.cpp, op_proto.cc)")

if(NOT ASCEND_CANN_PACKAGE_PATH OR NOT IS_DIRECTORY "${ASCEND_CANN_PACKAGE_PATH}")
    message(FATAL_ERROR
        "FA_TARGET=npu needs a CANN toolkit: set ASCEND_CANN_PACKAGE_PATH (or source "
        "<CANN>/set_env.sh, which sets ASCEND_HOME_PATH). Got '${ASCEND_CANN_PACKAGE_PATH}'. "
        "See docs/npu.md; ./build.sh --target cpu needs no CANN.")
endif()
find_package(ASC REQUIRED HINTS "${ASCEND_CANN_PACKAGE_PATH}/compiler/tikcpp/ascendc_kernel_cmake")

set(_src "${FA_NPU_SOURCE_ROOT}")
file(MAKE_DIRECTORY "${ASCEND_AUTOGEN_PATH}" "${CMAKE_BINARY_DIR}/include/aclnnop")

# ---- discover operators ---------------------------------------------------------------------
file(GLOB _kernel_dirs LIST_DIRECTORIES true RELATIVE "${_src}/op_kernel" "${_src}/op_kernel/*")
list(SORT _kernel_dirs)
set(_ops "")
set(_available "")
foreach(_op IN LISTS _kernel_dirs)
    if(_op STREQUAL "attention_core" OR NOT EXISTS "${_src}/op_kernel/${_op}/${_op}.cpp"
       OR NOT IS_DIRECTORY "${_src}/op_host/${_op}")
        continue()
    endif()
    file(GLOB _defs "${_src}/op_host/${_op}/*_def.cpp")
    set(_optype "")
    foreach(_def IN LISTS _defs)
        file(STRINGS "${_def}" _adds REGEX "OP_ADD\\([A-Za-z0-9_]+")
        foreach(_line IN LISTS _adds)
            string(REGEX REPLACE ".*OP_ADD\\(([A-Za-z0-9_]+).*" "\\1" _optype "${_line}")
        endforeach()
    endforeach()
    if(NOT _optype)
        message(FATAL_ERROR "op_host/${_op}/*_def.cpp has no OP_ADD(<OpType>): cannot package operator '${_op}'")
    endif()
    list(APPEND _available "${_op}(${_optype})")
    if(FA_NPU_OPS AND NOT _op IN_LIST FA_NPU_OPS AND NOT _optype IN_LIST FA_NPU_OPS)
        continue()
    endif()
    list(APPEND _ops "${_op}")
    set(_optype_of_${_op} "${_optype}")
endforeach()
foreach(_want IN LISTS FA_NPU_OPS)
    if(NOT "${_available}" MATCHES "(^|;)${_want}\\(|\\(${_want}\\)")
        message(FATAL_ERROR "--ops: unknown operator '${_want}'; available: ${_available}")
    endif()
endforeach()
if(NOT _ops)
    message(FATAL_ERROR "no operator to build under ${_src}/op_kernel (available: '${_available}')")
endif()

# ---- host sources: OpDef, infershape, tiling (op_impl + op_proto) and the public op_api --------
file(GLOB_RECURSE _common_srcs "${_src}/op_host/common/*.cpp")
set(_host_srcs ${_common_srcs})
set(_api_srcs "")
set(_api_headers "")
set(_host_includes "${_src}" "${_src}/op_host" "${_src}/op_kernel" "${CMAKE_BINARY_DIR}/include")
foreach(_op IN LISTS _ops)
    file(GLOB_RECURSE _srcs "${_src}/op_host/${_op}/*.cpp")
    list(FILTER _srcs EXCLUDE REGEX "/op_api/")
    file(GLOB _asrcs "${_src}/op_host/${_op}/op_api/aclnn_*.cpp")
    file(GLOB _ahdrs "${_src}/op_host/${_op}/op_api/aclnn_*.h")
    list(APPEND _host_srcs ${_srcs})
    list(APPEND _api_srcs ${_asrcs})
    list(APPEND _api_headers ${_ahdrs})
    list(APPEND _host_includes "${_src}/op_host/${_op}" "${_src}/op_host/${_op}/op_api")
endforeach()
# The spec's examples include "aclnnop/aclnn_<op>.h": give the build the same include layout.
foreach(_h IN LISTS _api_headers)
    get_filename_component(_name "${_h}" NAME)
    configure_file("${_h}" "${CMAKE_BINARY_DIR}/include/aclnnop/${_name}" COPYONLY)
endforeach()
list(TRANSFORM _host_includes PREPEND "-I" OUTPUT_VARIABLE _include_flags)
# Host code built here defines FA_NPU_BUILD: op_host/common/op_log.h then logs through CANN's
# toolchain/slog.h instead of the emulator's logger.

set(package_name "${vendor_name}")
npu_op_package(${package_name}
    TYPE RUN
    CONFIG
        ENABLE_SOURCE_PACKAGE True
        ENABLE_BINARY_PACKAGE True
        ENABLE_CPACK ${FA_NPU_PACKAGE}
        INSTALL_PATH "${CMAKE_BINARY_DIR}/"
)

# opbuild: aclnn<OpType> launchers, op_proto.{h,cc} and fallback_*.cpp from the OpDefs.
npu_op_code_gen(
    SRC ${_host_srcs}
    PACKAGE ${package_name}
    OUT_DIR "${ASCEND_AUTOGEN_PATH}"
    COMPILE_OPTIONS ${_include_flags} -DFA_NPU_BUILD -std=c++17
)

# op_api. opbuild generates aclnn<OpType> from each OpDef; where the OpDef mirrors the spec
# (PromptFlashAttention) that generated launcher *is* the spec's API. A hand-written op_api
# source joins the package unless it is built on the CPU target's launch seam (it includes
# "emu/..."), and then replaces a generated launcher of the same name. A public header is
# shipped only when the package provides every API it declares.
function(_fa_apis_in files out)
    set(_apis "")
    foreach(_f IN LISTS files)
        file(STRINGS "${_f}" _lines REGEX "aclnn[A-Za-z0-9]+GetWorkspaceSize")
        foreach(_l IN LISTS _lines)
            string(REGEX MATCHALL "aclnn[A-Za-z0-9]+GetWorkspaceSize" _found "${_l}")
            list(APPEND _apis ${_found})
        endforeach()
    endforeach()
    list(REMOVE_DUPLICATES _apis)
    set(${out} "${_apis}" PARENT_SCOPE)
endfunction()

set(_npu_api_srcs "")
set(_cpu_only_api_srcs "")
foreach(_a IN LISTS _api_srcs)
    file(STRINGS "${_a}" _emu REGEX "#include[ \t]*[\"<]emu/")
    if(_emu)
        list(APPEND _cpu_only_api_srcs "${_a}")
    else()
        list(APPEND _npu_api_srcs "${_a}")
    endif()
endforeach()
_fa_apis_in("${_npu_api_srcs}" _hand_written_apis)
file(GLOB _generated_api "${ASCEND_AUTOGEN_PATH}/aclnn_*.cpp")
set(_opapi_srcs ${_npu_api_srcs})
set(_provided_apis ${_hand_written_apis})
foreach(_g IN LISTS _generated_api)
    _fa_apis_in("${_g}" _gen_apis)
    set(_replaced FALSE)
    foreach(_api IN LISTS _gen_apis)
        if(_api IN_LIST _hand_written_apis)
            set(_replaced TRUE)
        endif()
    endforeach()
    if(NOT _replaced)
        list(APPEND _opapi_srcs "${_g}")
        list(APPEND _provided_apis ${_gen_apis})
    endif()
endforeach()
set(_shipped_headers "")
foreach(_h IN LISTS _api_headers)
    _fa_apis_in("${_h}" _declared)
    set(_missing "")
    foreach(_api IN LISTS _declared)
        if(NOT _api IN_LIST _provided_apis)
            list(APPEND _missing "${_api}")
        endif()
    endforeach()
    if(_missing)
        message(WARNING "npu: ${_h} is not packaged: nothing provides ${_missing} on the NPU "
                        "(its op_api source uses the CPU launch seam and no OpDef generates it)")
    else()
        list(APPEND _shipped_headers "${_h}")
    endif()
endforeach()
if(_cpu_only_api_srcs)
    message(STATUS "npu: CPU-target op_api sources left out (emulator launch seam): ${_cpu_only_api_srcs}")
endif()
set_source_files_properties(${_generated_api} PROPERTIES GENERATED TRUE)
npu_op_library(cust_opapi ACLNN ${_opapi_srcs})
target_include_directories(cust_opapi PRIVATE ${_host_includes} "${ASCEND_AUTOGEN_PATH}")
target_compile_options(cust_opapi PRIVATE -fvisibility=hidden)
target_compile_definitions(cust_opapi PRIVATE FA_NPU_BUILD)

file(GLOB _proto_src "${ASCEND_AUTOGEN_PATH}/op_proto.cc")
set_source_files_properties(${_proto_src} PROPERTIES GENERATED TRUE)
npu_op_library(cust_op_proto GRAPH ${_host_srcs} ${_proto_src})
target_include_directories(cust_op_proto PRIVATE ${_host_includes} "${ASCEND_AUTOGEN_PATH}")
target_compile_options(cust_op_proto PRIVATE -fvisibility=hidden)
target_compile_definitions(cust_op_proto PRIVATE FA_NPU_BUILD)

file(GLOB _fallback_src "${ASCEND_AUTOGEN_PATH}/fallback_*.cpp")
set_source_files_properties(${_fallback_src} PROPERTIES GENERATED TRUE)
npu_op_library(cust_optiling TILING ${_host_srcs} ${_fallback_src})
target_include_directories(cust_optiling PRIVATE ${_host_includes} "${ASCEND_AUTOGEN_PATH}")
target_compile_options(cust_optiling PRIVATE -fvisibility=hidden)
target_compile_definitions(cust_optiling PRIVATE FA_NPU_BUILD)

# ---- kernels ---------------------------------------------------------------------------------
npu_op_kernel_options(ascendc_kernels ALL OPTIONS
    "-I${_src}/op_kernel" "-I${_src}/op_kernel/attention_core" -Wno-deprecated-declarations)
foreach(_op IN LISTS _ops)
    npu_op_kernel_sources(ascendc_kernels
        OP_TYPE ${_optype_of_${_op}}
        KERNEL_DIR ${_op}
        COMPUTE_UNIT ${ASCEND_COMPUTE_UNIT}
        KERNEL_FILE ${_op}.cpp
    )
endforeach()
npu_op_kernel_library(ascendc_kernels
    SRC_BASE "${_src}/op_kernel/"
    TILING_LIBRARY cust_optiling
)

# ---- framework plugins (graph entry from TensorFlow / ONNX) -----------------------------------
set(_libs cust_optiling cust_opapi cust_op_proto ascendc_kernels)
file(GLOB _tf_srcs "${_src}/framework/tf_plugin/*.cc")
file(GLOB _onnx_srcs "${_src}/framework/onnx_plugin/*.cc")
if(_tf_srcs)
    npu_op_library(cust_tf_parsers TF_PLUGIN ${_tf_srcs})
    list(APPEND _libs cust_tf_parsers)
endif()
if(_onnx_srcs)
    npu_op_library(cust_onnx_parsers ONNX_PLUGIN ${_onnx_srcs})
    list(APPEND _libs cust_onnx_parsers)
endif()

npu_op_package_add(${package_name} LIBRARY ${_libs})
if(_shipped_headers)
    npu_op_package_add(${package_name} FILES ${_shipped_headers} PACKAGE_PATH op_api/include/aclnnop)
endif()

message(STATUS "npu: vendor '${vendor_name}', compute unit ${ASCEND_COMPUTE_UNIT} (${FA_SOC_VERSION}), operators:")
foreach(_op IN LISTS _ops)
    message(STATUS "npu:   ${_op} -> OpType ${_optype_of_${_op}}")
endforeach()
