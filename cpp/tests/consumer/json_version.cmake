# Script of the cmake_package_json_version test: the CMake package's core headers include
# nlohmann/json.hpp, and its config requires the nlohmann_json version the core was compiled with
# (nlohmann_json's ABI namespace carries its version). A nlohmann_json package of another patch
# version (its config files, which are all find_dependency reads) must be refused at configure
# time, naming both versions.
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
    RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${status})")
endif()
file(READ "${WORK_DIR}/prefix/lib/cmake/tensoracle/tensoracleConfig.cmake" config)
if(NOT config MATCHES "compiled with nlohmann_json \"\n *\"([0-9]+)\\.([0-9]+)\\.([0-9]+) and")
    message(FATAL_ERROR "the config names no nlohmann_json version:\n${config}")
endif()
set(built_with "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${CMAKE_MATCH_3}")
math(EXPR patch "${CMAKE_MATCH_3} + 1")
set(other "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}.${patch}")
file(WRITE "${WORK_DIR}/json/nlohmann_jsonConfig.cmake"
    "add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)\n")
file(WRITE "${WORK_DIR}/json/nlohmann_jsonConfigVersion.cmake"
    "set(PACKAGE_VERSION \"${other}\")\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build"
    -G "${GENERATOR}" "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-Dnlohmann_json_DIR=${WORK_DIR}/json"
    RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX REPLACE "[ \t\n]+" " " message "${err}")
if(status EQUAL 0)
    message(FATAL_ERROR "nlohmann_json ${other} was accepted by a core compiled with ${built_with}")
endif()
foreach(expected IN ITEMS "tensoracle was compiled with nlohmann_json ${built_with}"
        "found ${other}")
    string(FIND "${message}" "${expected}" at)
    if(at EQUAL -1)
        message(FATAL_ERROR "the refusal does not say '${expected}':\n${err}")
    endif()
endforeach()
message(STATUS "refused, naming ${built_with} and ${other}")
