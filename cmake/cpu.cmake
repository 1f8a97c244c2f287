# The CPU target: the emulator runtime plus every operator's host and kernel code in one shared
# library (libfa_ops_cpu.so) exporting the aclnn C API, the test-only proof operators in a second
# library that depends on it (libfa_proof_ops.so), and a CANN-shaped install prefix
# (<build>/install) that CANN's example CMakeLists.txt can build against.
#
# Options: FA_SANITIZE (ASan + UBSan), FA_OPS (";"- or ","-list of op directories; empty = all),
# FA_PROOF_OPS (build tests/emulator/kernels/*; default ON).
option(FA_SANITIZE "build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(FA_PROOF_OPS "build the emulator's proof operators (tests/emulator/kernels)" ON)
set(FA_OPS "" CACHE STRING "operators to build (op_host/op_kernel directory names); empty = all")
set(FA_SOC "" CACHE STRING "SoC the prefix's set_env.sh selects (ASCEND_EMU_SOC); empty = emulator default")

find_package(Threads REQUIRED)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE)
    set(CMAKE_BUILD_TYPE Release CACHE STRING "build type" FORCE)
endif()
set(CMAKE_CXX_FLAGS_RELEASE "-O2")
add_compile_options(-Wall -Wextra)
if(FA_SANITIZE)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    add_link_options(-fsanitize=address,undefined)
endif()

set(FA_ROOT "${CMAKE_CURRENT_LIST_DIR}/..")
get_filename_component(FA_ROOT "${FA_ROOT}" ABSOLUTE)
add_subdirectory("${FA_ROOT}/emulator" "${CMAKE_BINARY_DIR}/emulator")

# --- product operators: op_host/<op>/**.cpp, op_host/common/**.cpp, op_kernel/<op>/<op>.cpp ---
string(REPLACE "," ";" _fa_ops "${FA_OPS}")
file(GLOB _fa_op_dirs LIST_DIRECTORIES true RELATIVE "${FA_ROOT}/op_kernel" "${FA_ROOT}/op_kernel/*")
foreach(_op IN LISTS _fa_ops)
    if(NOT IS_DIRECTORY "${FA_ROOT}/op_kernel/${_op}" OR _op STREQUAL "attention_core")
        list(REMOVE_ITEM _fa_op_dirs attention_core)
        message(FATAL_ERROR "FA_OPS: unknown operator '${_op}'; known: ${_fa_op_dirs}")
    endif()
endforeach()
set(FA_OP_SOURCES "")
file(GLOB_RECURSE _fa_common CONFIGURE_DEPENDS "${FA_ROOT}/op_host/common/*.cpp")
list(APPEND FA_OP_SOURCES ${_fa_common})
foreach(_op IN LISTS _fa_op_dirs)
    if(NOT IS_DIRECTORY "${FA_ROOT}/op_kernel/${_op}" OR _op STREQUAL "attention_core")
        continue()
    endif()
    if(_fa_ops AND NOT _op IN_LIST _fa_ops)
        continue()
    endif()
    file(GLOB_RECURSE _host CONFIGURE_DEPENDS "${FA_ROOT}/op_host/${_op}/*.cpp")
    file(GLOB _kernel CONFIGURE_DEPENDS "${FA_ROOT}/op_kernel/${_op}/*.cpp")
    list(APPEND FA_OP_SOURCES ${_host} ${_kernel})
endforeach()

add_library(fa_ops_cpu SHARED ${FA_OP_SOURCES})
target_link_libraries(fa_ops_cpu PRIVATE ascendc_emu)
# emulator/include/aclnn mirrors <cann>/include/aclnn, which op_api code needs for
# "opdev/common_types.h" (cmake/npu.cmake adds the CANN one).
target_include_directories(fa_ops_cpu PRIVATE "${FA_ROOT}/op_host" "${FA_ROOT}/op_kernel" "${FA_ROOT}"
                                              "${FA_ROOT}/emulator/include/aclnn")
set_target_properties(fa_ops_cpu PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}")

# --- proof operators (test-only): every tests/emulator/kernels/<name>/*.cpp ---
if(FA_PROOF_OPS)
    file(GLOB_RECURSE FA_PROOF_SOURCES CONFIGURE_DEPENDS "${FA_ROOT}/tests/emulator/kernels/*.cpp")
    if(NOT FA_PROOF_SOURCES)
        message(STATUS "no proof operators found under tests/emulator/kernels; FA_PROOF_OPS off")
        set(FA_PROOF_OPS OFF)
    endif()
endif()
if(FA_PROOF_OPS)
    add_library(fa_proof_ops SHARED ${FA_PROOF_SOURCES})
    # The runtime comes from libfa_ops_cpu.so, so both libraries share one device and registry.
    target_link_libraries(fa_proof_ops PRIVATE fa_ops_cpu Threads::Threads)
    target_include_directories(fa_proof_ops PRIVATE "${FA_ROOT}/emulator/include" "${ASCENDC_EMU_GENERATED_INCLUDE}"
                                                    "${FA_ROOT}/tests/emulator/kernels")
    set_target_properties(fa_proof_ops PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}"
                                                   BUILD_RPATH "$ORIGIN")
endif()

# --- the CANN-shaped prefix: <build>/install (see cmake/cpu_install_prefix.cmake) ---
string(REPLACE ";" "," _fa_ops_csv "${FA_OPS}")  # one command-line argument
set(_fa_prefix_deps fa_ops_cpu)
set(_fa_proof_lib "")
if(FA_PROOF_OPS)
    list(APPEND _fa_prefix_deps fa_proof_ops)
    set(_fa_proof_lib "$<TARGET_FILE:fa_proof_ops>")
endif()
add_custom_target(cann_prefix ALL
    COMMAND "${CMAKE_COMMAND}" -DFA_ROOT=${FA_ROOT} -DPREFIX=${CMAKE_BINARY_DIR}/install
            -DEMU_GENERATED_INCLUDE=${ASCENDC_EMU_GENERATED_INCLUDE}
            -DOPS_LIB=$<TARGET_FILE:fa_ops_cpu>
            -DPROOF_LIB=${_fa_proof_lib}
            -DFA_OPS=${_fa_ops_csv} -DFA_SOC=${FA_SOC} -DARCH=${CMAKE_SYSTEM_PROCESSOR}
            -P "${FA_ROOT}/cmake/cpu_install_prefix.cmake"
    DEPENDS ${_fa_prefix_deps}
    COMMENT "Installing the CANN-shaped prefix ${CMAKE_BINARY_DIR}/install"
    VERBATIM)
