# Lays out the CANN-shaped prefix of the CPU target (run with cmake -P by cmake/cpu.cmake):
#   include/                   the emulator's headers (acl/acl.h, aclnn/..., kernel_operator.h, ...)
#   include/aclnnop/           every op_host/<op>/op_api/aclnn_*.h (the public aclnn APIs)
#   lib64/libascendcl.so, libnnopbase.so, libopapi.so, libopapi_transformer.so
#                              symlinks to libfa_ops_cpu.so: the names CANN's examples link
#   opp/vendors/fa_emu_proof/op_api/{include,lib/libcust_opapi.so}
#                              the proof operators as a custom-op vendor (when built)
#   set_env.sh, bin/setenv.bash  put lib64 and the vendor lib on LD_LIBRARY_PATH
# Inputs: FA_ROOT, PREFIX, OPS_LIB, PROOF_LIB (may be empty), FA_OPS, FA_SOC (may be empty).
cmake_minimum_required(VERSION 3.16)
file(REMOVE_RECURSE "${PREFIX}/include" "${PREFIX}/lib64" "${PREFIX}/opp")
file(COPY "${FA_ROOT}/emulator/include/" DESTINATION "${PREFIX}/include")

file(GLOB _api_headers "${FA_ROOT}/op_host/*/op_api/aclnn_*.h")
string(REPLACE "," ";" _ops "${FA_OPS}")
foreach(_h IN LISTS _api_headers)
    get_filename_component(_op_dir "${_h}" DIRECTORY)
    get_filename_component(_op_dir "${_op_dir}" DIRECTORY)
    get_filename_component(_op "${_op_dir}" NAME)
    if(_ops AND NOT _op IN_LIST _ops)
        continue()
    endif()
    file(COPY "${_h}" DESTINATION "${PREFIX}/include/aclnnop")
endforeach()
file(MAKE_DIRECTORY "${PREFIX}/include/aclnnop")

file(MAKE_DIRECTORY "${PREFIX}/lib64")
get_filename_component(_ops_name "${OPS_LIB}" NAME)
file(COPY "${OPS_LIB}" DESTINATION "${PREFIX}/lib64")
foreach(_name libascendcl.so libnnopbase.so libopapi.so libopapi_transformer.so)
    file(CREATE_LINK "${_ops_name}" "${PREFIX}/lib64/${_name}" SYMBOLIC)
endforeach()

set(_ld "${PREFIX}/lib64")
if(PROOF_LIB)
    set(_vendor "${PREFIX}/opp/vendors/fa_emu_proof/op_api")
    file(GLOB _proof_headers "${FA_ROOT}/tests/emulator/kernels/*/aclnn_*.h")
    file(COPY ${_proof_headers} DESTINATION "${_vendor}/include")
    file(MAKE_DIRECTORY "${_vendor}/lib")
    get_filename_component(_proof_name "${PROOF_LIB}" NAME)
    file(COPY "${PROOF_LIB}" DESTINATION "${_vendor}/lib")
    file(CREATE_LINK "${_proof_name}" "${_vendor}/lib/libcust_opapi.so" SYMBOLIC)
    set(_ld "${_ld}:${_vendor}/lib")
endif()

set(_env "# CPU-target CANN prefix: makes the libraries findable at run time.\n")
string(APPEND _env "export ASCEND_HOME_PATH=\"${PREFIX}\"\n")
string(APPEND _env "export LD_LIBRARY_PATH=\"${_ld}\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\"\n")
if(FA_SOC)
    string(APPEND _env "export ASCEND_EMU_SOC=\"${FA_SOC}\"\n")
endif()
file(WRITE "${PREFIX}/set_env.sh" "${_env}")
file(WRITE "${PREFIX}/bin/setenv.bash" "${_env}")
