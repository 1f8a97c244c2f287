# Lays out the CANN-shaped prefix of the CPU target (run with cmake -P by cmake/cpu.cmake):
#   include/                   the emulator's headers (acl/acl.h, aclnn/..., kernel_operator.h, ...)
#   include/aclnnop/           every op_host/<op>/op_api/aclnn_*.h (the public aclnn APIs)
#   lib64/libascendcl.so, libnnopbase.so, libopapi.so, libopapi_transformer.so, libruntime.so, ...
#                              symlinks to libfa_ops_cpu.so: the names CANN's and CATLASS's examples link
#   <arch>-linux/devlib/libascend_hal.so   the same
#   lib/cmake/ASC/, bin/asc_cc  find_package(ASC) and the ASC language (cmake/asc)
#   opp/vendors/fa_emu_proof/op_api/{include,lib/libcust_opapi.so}
#                              the proof operators as a custom-op vendor (when built)
#   set_env.sh, bin/setenv.bash  put lib64 and the vendor lib on LD_LIBRARY_PATH, the prefix on
#                              CMAKE_PREFIX_PATH
#   lib/cmake/AscendFaCpu/   CMake package config: find_package(AscendFaCpu) gives imported
#                              targets AscendFaCpu::ascendcl, ::nnopbase, ::opapi,
#                              ::opapi_transformer and ::aclnn (all four, with the include dirs)
#   fa_emulator_prefix.txt     marks the prefix as the emulator's (fakit's sim/npu detection
#                              tells it from a CANN toolkit by this file)
# The libraries are symlinks to the build outputs, never copies written in place: processes that
# have them loaded keep running while the tree is rebuilt (the linker replaces its output file).
# Unchanged headers are not rewritten.
# Inputs: FA_ROOT, PREFIX, EMU_GENERATED_INCLUDE (the emulator's generated headers: emu/abi_stamp.h),
# OPS_LIB, PROOF_LIB (may be empty), FA_OPS (comma list), FA_SOC, ARCH (x86_64, aarch64).
cmake_minimum_required(VERSION 3.16)

function(link_to target linkname)
    get_filename_component(_dir "${linkname}" DIRECTORY)
    file(MAKE_DIRECTORY "${_dir}")
    file(RELATIVE_PATH _rel "${_dir}" "${target}")
    file(CREATE_LINK "${_rel}" "${linkname}" SYMBOLIC)
endfunction()

# Public headers: the emulator's, then the operators' aclnn APIs (stale ones removed).
file(COPY "${FA_ROOT}/emulator/include/" DESTINATION "${PREFIX}/include")
file(COPY "${EMU_GENERATED_INCLUDE}/" DESTINATION "${PREFIX}/include")  # emu/abi_stamp.h
file(MAKE_DIRECTORY "${PREFIX}/include/aclnnop")
file(GLOB _api_headers "${FA_ROOT}/op_host/*/op_api/aclnn_*.h")
string(REPLACE "," ";" _ops "${FA_OPS}")
set(_wanted "")
foreach(_h IN LISTS _api_headers)
    get_filename_component(_op_dir "${_h}" DIRECTORY)
    get_filename_component(_op_dir "${_op_dir}" DIRECTORY)
    get_filename_component(_op "${_op_dir}" NAME)
    if(_ops AND NOT _op IN_LIST _ops)
        continue()
    endif()
    file(COPY "${_h}" DESTINATION "${PREFIX}/include/aclnnop")
    get_filename_component(_name "${_h}" NAME)
    list(APPEND _wanted "${_name}")
endforeach()
file(GLOB _present RELATIVE "${PREFIX}/include/aclnnop" "${PREFIX}/include/aclnnop/*")
foreach(_name IN LISTS _present)
    if(NOT _name IN_LIST _wanted)
        file(REMOVE "${PREFIX}/include/aclnnop/${_name}")
    endif()
endforeach()

get_filename_component(_ops_name "${OPS_LIB}" NAME)
link_to("${OPS_LIB}" "${PREFIX}/lib64/${_ops_name}")
# Every library an Ascend C project links (CATLASS's examples link all of these) is the emulator.
foreach(_name ascendcl nnopbase opapi opapi_transformer ascendc_runtime runtime profapi mmpa ascend_dump c_sec
              error_manager tiling_api platform register)
    file(CREATE_LINK "${_ops_name}" "${PREFIX}/lib64/lib${_name}.so" SYMBOLIC)
endforeach()
set(_devlib "${PREFIX}/${ARCH}-linux/devlib")
file(MAKE_DIRECTORY "${_devlib}")
file(RELATIVE_PATH _rel "${_devlib}" "${PREFIX}/lib64/${_ops_name}")
file(CREATE_LINK "${_rel}" "${_devlib}/libascend_hal.so" SYMBOLIC)

# The ASC language: find_package(ASC) and the compiler driver (cmake/asc).
file(GLOB _asc_cmake "${FA_ROOT}/cmake/asc/*.cmake" "${FA_ROOT}/cmake/asc/*.cmake.in")
file(COPY ${_asc_cmake} DESTINATION "${PREFIX}/lib/cmake/ASC")
link_to("${FA_ROOT}/cmake/asc/asc_cc" "${PREFIX}/bin/asc_cc")  # finds the prefix from its own path

set(_ld "${PREFIX}/lib64")
set(_vendor "${PREFIX}/opp/vendors/fa_emu_proof/op_api")
if(PROOF_LIB)
    file(GLOB _proof_headers "${FA_ROOT}/tests/emulator/kernels/*/aclnn_*.h")
    file(COPY ${_proof_headers} DESTINATION "${_vendor}/include")
    get_filename_component(_proof_name "${PROOF_LIB}" NAME)
    link_to("${PROOF_LIB}" "${_vendor}/lib/${_proof_name}")
    file(CREATE_LINK "${_proof_name}" "${_vendor}/lib/libcust_opapi.so" SYMBOLIC)
    set(_ld "${_ld}:${_vendor}/lib")
else()
    file(REMOVE_RECURSE "${PREFIX}/opp")
endif()

# The package config (a static, relocatable file: paths are relative to its own directory).
file(COPY "${FA_ROOT}/cmake/AscendFaCpuConfig.cmake" DESTINATION "${PREFIX}/lib/cmake/AscendFaCpu")
file(WRITE "${PREFIX}/fa_emulator_prefix.txt"
     "This is the CPU emulator's CANN-shaped prefix (build/cpu/install of the FlashAttention project), not a CANN toolkit.\n")

set(_env "# CPU-target CANN prefix: makes the libraries findable at run time.\n")
string(APPEND _env "export ASCEND_HOME_PATH=\"${PREFIX}\"\n")
string(APPEND _env "export CMAKE_PREFIX_PATH=\"${PREFIX}\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}\"\n")
string(APPEND _env "export LD_LIBRARY_PATH=\"${_ld}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\"\n")
if(FA_SOC)
    string(APPEND _env "export ASCEND_EMU_SOC=\"${FA_SOC}\"\n")
endif()
foreach(_file "${PREFIX}/set_env.sh" "${PREFIX}/bin/setenv.bash")
    file(WRITE "${_file}.tmp" "${_env}")
    file(RENAME "${_file}.tmp" "${_file}")
endforeach()
