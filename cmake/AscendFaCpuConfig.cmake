# AscendFaCpu: the CPU emulator's CANN-shaped prefix (build/cpu/install) as a CMake package.
# cmake/cpu_install_prefix.cmake copies this file to <prefix>/lib/cmake/AscendFaCpu/.
#
#   find_package(AscendFaCpu REQUIRED)                 # the prefix's set_env.sh puts it on CMAKE_PREFIX_PATH
#   target_link_libraries(app PRIVATE AscendFaCpu::aclnn)
#
# Imported targets: AscendFaCpu::ascendcl, ::nnopbase, ::opapi, ::opapi_transformer (the library
# names CANN's examples link; here all four are the emulator build) and AscendFaCpu::aclnn, which
# carries all four and the include directories include/, include/aclnn/, include/aclnnop/.
# Everything is found relative to this file, so the prefix can be moved.
get_filename_component(_fa_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(AscendFaCpu_PREFIX "${_fa_prefix}")
set(AscendFaCpu_INCLUDE_DIRS "${_fa_prefix}/include" "${_fa_prefix}/include/aclnn" "${_fa_prefix}/include/aclnnop")

foreach(_fa_lib IN ITEMS ascendcl nnopbase opapi opapi_transformer)
    if(NOT TARGET AscendFaCpu::${_fa_lib})
        if(NOT EXISTS "${_fa_prefix}/lib64/lib${_fa_lib}.so")
            set(AscendFaCpu_FOUND FALSE)
            set(AscendFaCpu_NOT_FOUND_MESSAGE "${_fa_prefix}/lib64/lib${_fa_lib}.so is missing: run ./build.sh")
            return()
        endif()
        add_library(AscendFaCpu::${_fa_lib} SHARED IMPORTED)
        set_target_properties(AscendFaCpu::${_fa_lib} PROPERTIES
            IMPORTED_LOCATION "${_fa_prefix}/lib64/lib${_fa_lib}.so"
            INTERFACE_INCLUDE_DIRECTORIES "${AscendFaCpu_INCLUDE_DIRS}")
    endif()
endforeach()

if(NOT TARGET AscendFaCpu::aclnn)
    add_library(AscendFaCpu::aclnn INTERFACE IMPORTED)
    set_target_properties(AscendFaCpu::aclnn PROPERTIES INTERFACE_LINK_LIBRARIES
        "AscendFaCpu::ascendcl;AscendFaCpu::nnopbase;AscendFaCpu::opapi;AscendFaCpu::opapi_transformer")
endif()
set(AscendFaCpu_FOUND TRUE)
