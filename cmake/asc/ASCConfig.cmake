# find_package(ASC): the Ascend C language of the CPU prefix (build/cpu/install/lib/cmake/ASC).
# Puts this directory on CMAKE_MODULE_PATH, where project(... LANGUAGES ASC) and enable_language(ASC)
# find the language files next to this one; the compiler is the prefix's bin/asc_cc (clang-based,
# one pass per core kind, see that script). Sourcing the prefix's set_env.sh makes this package
# findable (CMAKE_PREFIX_PATH) and sets ASCEND_HOME_PATH, as CANN's set_env.sh does.
get_filename_component(ASC_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
list(FIND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}" _asc_module_index)
if(_asc_module_index EQUAL -1)
    list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}")
endif()
set(ASC_COMPILER "${ASC_PREFIX}/bin/asc_cc")
set(ASC_INCLUDE_DIRS "${ASC_PREFIX}/include")
set(ASC_FOUND TRUE)
