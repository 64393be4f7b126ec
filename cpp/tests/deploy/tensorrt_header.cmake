# The TensorRT adapter (include/tensoracle/deploy/tensorrt.hpp) is header-only: applications
# compile it against their own TensorRT, and tensoracle's build needs none. These tests compile
# tests/deploy/tensorrt_header_check.cpp, without running anything, against each TensorRT version
# found under TENSORACLE_TENSORRT_HEADERS (a folder of <version>/include/NvInferRuntime.h, as
# `make tensorrt-11-headers` fills build/tensorrt-headers), as C++17 and as C++20 with the
# project's warnings as errors, TensorRT's and CUDA's headers as system headers (TensorRT's raise
# deprecation warnings of their own). Without the folder, or without CUDA's cuda_runtime_api.h
# (which NvInferRuntimeBase.h includes), one test reports a skip and says why.
set(TENSORACLE_TENSORRT_HEADERS "" CACHE PATH
    "Folder of TensorRT headers, <version>/include/NvInferRuntime.h (build/tensorrt-headers)")

file(GLOB cuda_runtime_hints
    "${PROJECT_SOURCE_DIR}/../.venv/lib/*/site-packages/nvidia/cu13/include")
find_path(TENSORACLE_CUDA_RUNTIME_INCLUDE NAMES cuda_runtime_api.h
    HINTS ${cuda_runtime_hints} $ENV{CUDAToolkit_ROOT}/include $ENV{CUDA_HOME}/include
    PATHS /usr/local/cuda/include
    DOC "Folder of CUDA's cuda_runtime_api.h, for compiling against TensorRT's headers")

set(tensorrt_versions)
if(TENSORACLE_TENSORRT_HEADERS)
    file(GLOB tensorrt_headers "${TENSORACLE_TENSORRT_HEADERS}/*/include/NvInferRuntime.h")
    foreach(header IN LISTS tensorrt_headers)
        get_filename_component(include_dir ${header} DIRECTORY)
        get_filename_component(version_dir ${include_dir} DIRECTORY)
        get_filename_component(version ${version_dir} NAME)
        list(APPEND tensorrt_versions ${version})
    endforeach()
endif()

set(skip_reason)
if(NOT TENSORACLE_TENSORRT_HEADERS)
    set(skip_reason "TENSORACLE_TENSORRT_HEADERS is not set (a folder of <version>/include with "
        "TensorRT's headers, such as build/tensorrt-headers from make tensorrt-11-headers)")
elseif(NOT tensorrt_versions)
    set(skip_reason "no <version>/include/NvInferRuntime.h under TENSORACLE_TENSORRT_HEADERS "
        "(${TENSORACLE_TENSORRT_HEADERS})")
elseif(NOT TENSORACLE_CUDA_RUNTIME_INCLUDE)
    set(skip_reason "CUDA's cuda_runtime_api.h, which TensorRT's headers include, was not found: "
        "set TENSORACLE_CUDA_RUNTIME_INCLUDE")
elseif(MSVC)
    set(skip_reason "the check compiles with GCC or Clang options")
endif()

if(skip_reason)
    string(CONCAT skip_reason ${skip_reason})
    add_test(NAME tensorrt_header_check
        COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: tensorrt.hpp is not compiled: ${skip_reason}")
    set_tests_properties(tensorrt_header_check PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED:"
        LABELS deploy)
    return()
endif()

# nlohmann/json.hpp, which the deploy headers include, from wherever the build found it (not the
# compiler's own folders, such as /usr/include: -isystem there breaks libstdc++'s #include_next).
get_target_property(json_includes nlohmann_json::nlohmann_json INTERFACE_INCLUDE_DIRECTORIES)
set(json_flags)
foreach(dir IN LISTS json_includes)
    if(dir AND NOT dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        list(APPEND json_flags -isystem ${dir})
    endif()
endforeach()

foreach(version IN LISTS tensorrt_versions)
    foreach(standard IN ITEMS 17 20)
        set(name tensorrt_header_check_${version}_cxx${standard})
        add_test(NAME ${name}
            COMMAND ${CMAKE_CXX_COMPILER} -std=c++${standard} -fsyntax-only
                -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
                -Wnon-virtual-dtor -Wold-style-cast -Werror
                -I${PROJECT_SOURCE_DIR}/include ${json_flags}
                -isystem ${TENSORACLE_TENSORRT_HEADERS}/${version}/include
                -isystem ${TENSORACLE_CUDA_RUNTIME_INCLUDE}
                ${CMAKE_CURRENT_SOURCE_DIR}/deploy/tensorrt_header_check.cpp)
        set_tests_properties(${name} PROPERTIES LABELS deploy TIMEOUT 120)
    endforeach()
endforeach()

# tensorrt_runtime_test: the adapter's parts that need no TensorRT library, built against the
# newest version's headers (no TensorRT is linked): an entry of another backend never reaches
# deserializeCudaEngine (a recording IRuntime whose every call fails the test), the backend
# version check, shapes to Dims and back.
list(GET tensorrt_versions -1 newest_tensorrt)
add_executable(tensorrt_runtime_test ${CMAKE_CURRENT_SOURCE_DIR}/deploy/tensorrt_runtime_check.cpp)
target_include_directories(tensorrt_runtime_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_include_directories(tensorrt_runtime_test SYSTEM PRIVATE
    ${TENSORACLE_TENSORRT_HEADERS}/${newest_tensorrt}/include ${TENSORACLE_CUDA_RUNTIME_INCLUDE})
target_link_libraries(tensorrt_runtime_test PRIVATE tensoracle_deploy tensoracle_core
    tensoracle_test_main GTest::gtest Threads::Threads)
tensoracle_warnings(tensorrt_runtime_test)
add_test(NAME tensorrt_runtime_test COMMAND tensorrt_runtime_test)
set_tests_properties(tensorrt_runtime_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
    LABELS deploy)
