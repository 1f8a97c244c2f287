# The ASC language, step 4: the driver answers when it finds its clang++.
execute_process(COMMAND "${CMAKE_ASC_COMPILER}" --version RESULT_VARIABLE _asc_rc OUTPUT_VARIABLE _asc_out
                ERROR_VARIABLE _asc_err)
if(NOT _asc_rc EQUAL 0)
    message(FATAL_ERROR "The ASC compiler ${CMAKE_ASC_COMPILER} does not work:\n${_asc_err}")
endif()
string(STRIP "${_asc_out}" _asc_out)
message(STATUS "Check for working ASC compiler: ${_asc_out}")
set(CMAKE_ASC_COMPILER_WORKS TRUE CACHE INTERNAL "")
