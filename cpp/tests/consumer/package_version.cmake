# Script of the cmake_package_version test: the CMake package of version 1.N is found by an
# application that asks for any 1.x up to it (find_package(tensoracle 1.0) included: a later 1.x
# keeps the 1.x interface), and refused for a later version than its own and for another major.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
    RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${status})")
endif()
string(REPLACE "." ";" parts "${VERSION}")
list(GET parts 0 major)
list(GET parts 1 minor)
math(EXPR next_minor "${minor} + 1")
math(EXPR next_major "${major} + 1")
function(probe requested expected)
    set(source "${WORK_DIR}/probe-${requested}")
    file(WRITE "${source}/CMakeLists.txt"
        "cmake_minimum_required(VERSION 3.20)\n"
        "project(probe LANGUAGES CXX)\n"
        "find_package(tensoracle ${requested} CONFIG REQUIRED)\n")
    execute_process(COMMAND ${CMAKE_COMMAND} -S "${source}" -B "${source}/build"
        -G "${GENERATOR}" "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}"
        "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
        RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(expected STREQUAL "found" AND NOT status EQUAL 0)
        message(FATAL_ERROR "find_package(tensoracle ${requested}) failed with the package "
            "${VERSION}:\n${err}")
    endif()
    if(expected STREQUAL "refused")
        if(status EQUAL 0)
            message(FATAL_ERROR "find_package(tensoracle ${requested}) accepted the package "
                "${VERSION}")
        endif()
        string(FIND "${err}" "${VERSION}" at)
        if(at EQUAL -1)
            message(FATAL_ERROR "the refusal of ${requested} does not name ${VERSION}:\n${err}")
        endif()
    endif()
    message(STATUS "find_package(tensoracle ${requested}): ${expected}")
endfunction()
probe("${major}.0" found)
probe("${major}.${minor}" found)
probe("${major}.${next_minor}" refused)
probe("${next_major}.0" refused)
