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
# Which code goes where (docs/npu.md): op_host/common/**.cpp and op_host/<op>/** outside op_api/
# form the OpDef / infershape / tiling libraries (opbuild's input, op_proto, op_tiling), which
# link no libnnopbase; op_host/<op>/op_api/*.cpp form the public API library cust_opapi, which
# does. Code both sides share is header-only (op_host/common/attention_layout.h); the aclnn
# tensor checks (op_host/common/op_api/attention_checks.h) are op_api-only.
file(GLOB_RECURSE _common_srcs "${_src}/op_host/common/*.cpp")
set(_host_srcs ${_common_srcs})
set(_api_srcs "")
set(_api_headers "")
set(_host_includes "${_src}" "${_src}/op_host" "${_src}/op_kernel" "${CMAKE_BINARY_DIR}/include")
foreach(_op IN LISTS _ops)
    file(GLOB_RECURSE _srcs "${_src}/op_host/${_op}/*.cpp")
    list(FILTER _srcs EXCLUDE REGEX "/op_api/")
    file(GLOB _asrcs "${_src}/op_host/${_op}/op_api/*.cpp")
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

# opbuild: the two-stage launcher of every OpType, op_proto.{h,cc} and fallback_*.cpp from the
# OpDefs. opbuild names the launchers after the environment variable OPS_PROJECT_NAME, read when
# it runs: with aclnnInner (as CANN's own operator repositories build) they are
# aclnnInner<OpType> in aclnnInner_<op_type>.{h,cpp}, the launch seam the project's public APIs
# call after their checks, and never collide with a public API of the same name
# (aclnnPromptFlashAttention, aclnnSparseFlashAttentionGrad). cmake/npu_build.sh exports it; it
# is also set here for configure-time generation and on every custom command.
set(FA_OPBUILD_OPTIONS OPS_PROJECT_NAME aclnnInner)
list(GET FA_OPBUILD_OPTIONS 1 _fa_launcher_prefix)
set(ENV{OPS_PROJECT_NAME} "${_fa_launcher_prefix}")
set_property(GLOBAL PROPERTY RULE_LAUNCH_CUSTOM "${CMAKE_COMMAND} -E env OPS_PROJECT_NAME=${_fa_launcher_prefix}")
npu_op_code_gen(
    SRC ${_host_srcs}
    PACKAGE ${package_name}
    OUT_DIR "${ASCEND_AUTOGEN_PATH}"
    COMPILE_OPTIONS ${_include_flags} -DFA_NPU_BUILD -std=c++17
)

# op_api: every op_host/<op>/op_api/*.cpp except the CPU target's launch seam (the only sources
# that include "emu/..."), plus opbuild's generated launchers. A public header is shipped only
# when a project op_api source defines every API it declares (the checks run on the device too).
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
# Public APIs = what an aclnn_*.cpp defines ("aclnnStatus aclnnXxxGetWorkspaceSize(" at the start
# of a line, after extern "C"); the launch-seam headers only declare aclnnInner launchers.
set(_provided_apis "")
foreach(_a IN LISTS _npu_api_srcs)
    file(STRINGS "${_a}" _defs REGEX "^extern \"C\" aclnnStatus aclnn[A-Za-z0-9]+GetWorkspaceSize\\(")
    foreach(_d IN LISTS _defs)
        string(REGEX REPLACE ".*aclnnStatus (aclnn[A-Za-z0-9]+GetWorkspaceSize).*" "\\1" _api "${_d}")
        list(APPEND _provided_apis "${_api}")
    endforeach()
endforeach()
foreach(_op IN LISTS _ops)
    if("${_fa_launcher_prefix}${_optype_of_${_op}}GetWorkspaceSize" IN_LIST _provided_apis)
        message(FATAL_ERROR "op_host/${_op}/op_api defines ${_fa_launcher_prefix}${_optype_of_${_op}}, "
                            "the name of opbuild's generated launcher for ${_optype_of_${_op}}")
    endif()
endforeach()
file(GLOB _generated_api "${ASCEND_AUTOGEN_PATH}/${_fa_launcher_prefix}_*.cpp")
set(_opapi_srcs ${_npu_api_srcs} ${_generated_api})
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
        message(WARNING "npu: ${_h} is not packaged: no op_api source of the NPU build defines ${_missing}")
    else()
        list(APPEND _shipped_headers "${_h}")
    endif()
endforeach()
string(REPLACE "GetWorkspaceSize" "" _provided_names "${_provided_apis}")
message(STATUS "npu: public aclnn APIs (project op_api, with their checks): ${_provided_names}")
if(_cpu_only_api_srcs)
    message(STATUS "npu: CPU-target launch seam left out (includes emu/...): ${_cpu_only_api_srcs}")
endif()
set_source_files_properties(${_generated_api} PROPERTIES GENERATED TRUE)
npu_op_library(cust_opapi ACLNN ${_opapi_srcs})
# <cann>/include/aclnn: op_api code includes "opdev/common_types.h" (aclIntArray access), as
# CANN's own op_api sources do; opbase installs it under include/aclnn/opdev/.
target_include_directories(cust_opapi PRIVATE ${_host_includes} "${ASCEND_AUTOGEN_PATH}"
                                              "${ASCEND_CANN_PACKAGE_PATH}/include/aclnn")
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
