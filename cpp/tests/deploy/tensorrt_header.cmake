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

# TensorRT's library, for the tests below that reach the adapter's defaults (createInferRuntime,
# getInferLibVersion): the 11.4 lean runtime of the tensorrt-lean-cu13-libs wheel, which
# python/requirements-test.txt installs into .venv. The tests link it so that those functions
# resolve; they stand in for TensorRT's objects and never call it.
file(GLOB tensorrt_library_hints
    "${PROJECT_SOURCE_DIR}/../.venv/lib/*/site-packages/tensorrt_lean_libs")
find_library(TENSORACLE_TENSORRT_LIBRARY NAMES nvinfer_lean libnvinfer_lean.so.11
    HINTS ${tensorrt_library_hints}
    DOC "A TensorRT 11 library (libnvinfer or the lean runtime) for the adapter's tests to link")

# CUDA's runtime library, which the adapter calls to copy a streamed plan into device memory
# (VerifiedPlanStream): libcudart of the nvidia-cuda-runtime wheel in .venv. Without a CUDA
# driver its calls fail, and the adapter then treats every destination as host memory.
file(GLOB cuda_library_hints
    "${PROJECT_SOURCE_DIR}/../.venv/lib/*/site-packages/nvidia/cu13/lib")
find_library(TENSORACLE_CUDA_RUNTIME_LIBRARY NAMES cudart libcudart.so.13
    HINTS ${cuda_library_hints} $ENV{CUDAToolkit_ROOT}/lib64 $ENV{CUDA_HOME}/lib64
    PATHS /usr/local/cuda/lib64
    DOC "CUDA's runtime library (libcudart), for the adapter's tests to link")

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

# Without the headers folder the adapter's tests are skipped, saying why (a build of the core
# alone needs no TensorRT). With it, a missing part is a broken set-up and fails the configure:
# `make test` passes the folder, and its tests must run.
set(skip_reason)
if(NOT TENSORACLE_TENSORRT_HEADERS)
    set(skip_reason "TENSORACLE_TENSORRT_HEADERS is not set (a folder of <version>/include with "
        "TensorRT's headers, such as build/tensorrt-headers from make tensorrt-11-headers)")
elseif(MSVC)
    set(skip_reason "the check compiles with GCC or Clang options")
elseif(NOT tensorrt_versions)
    message(FATAL_ERROR "TENSORACLE_TENSORRT_HEADERS is ${TENSORACLE_TENSORRT_HEADERS}, but no "
        "<version>/include/NvInferRuntime.h is under it: give the folder that make "
        "tensorrt-11-headers fills (build/tensorrt-headers), or leave the variable unset to skip "
        "the TensorRT adapter's tests")
elseif(NOT TENSORACLE_CUDA_RUNTIME_INCLUDE)
    message(FATAL_ERROR "CUDA's cuda_runtime_api.h, which TensorRT's headers include, was not "
        "found (looked in the nvidia/cu13 wheel of .venv, $CUDAToolkit_ROOT, $CUDA_HOME and "
        "/usr/local/cuda): set TENSORACLE_CUDA_RUNTIME_INCLUDE to its folder, or leave "
        "TENSORACLE_TENSORRT_HEADERS unset to skip the TensorRT adapter's tests")
elseif(NOT TENSORACLE_CUDA_RUNTIME_LIBRARY)
    message(FATAL_ERROR "CUDA's runtime library (libcudart), which the TensorRT adapter calls, "
        "was not found (looked in the nvidia/cu13 wheel of .venv, $CUDAToolkit_ROOT, $CUDA_HOME "
        "and /usr/local/cuda): set TENSORACLE_CUDA_RUNTIME_LIBRARY to it, or leave "
        "TENSORACLE_TENSORRT_HEADERS unset to skip the TensorRT adapter's tests")
elseif(NOT TENSORACLE_TENSORRT_LIBRARY)
    message(FATAL_ERROR "no TensorRT 11 library was found for the TensorRT adapter's tests "
        "(looked for the lean runtime of the tensorrt-lean-cu13-libs wheel in .venv): set "
        "TENSORACLE_TENSORRT_LIBRARY to libnvinfer.so or libnvinfer_lean.so.11, or leave "
        "TENSORACLE_TENSORRT_HEADERS unset to skip those tests")
endif()

if(skip_reason)
    string(CONCAT skip_reason ${skip_reason})
    add_test(NAME tensorrt_header_check
        COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: tensorrt.hpp is not compiled: ${skip_reason}")
    set_tests_properties(tensorrt_header_check PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED:"
        LABELS deploy)
    return()
endif()

foreach(version IN LISTS tensorrt_versions)
    foreach(standard IN ITEMS 17 20)
        set(name tensorrt_header_check_${version}_cxx${standard})
        add_test(NAME ${name}
            COMMAND ${CMAKE_CXX_COMPILER} -std=c++${standard} -fsyntax-only
                -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
                -Wnon-virtual-dtor -Wold-style-cast -Werror
                -I${PROJECT_SOURCE_DIR}/include
                -isystem ${TENSORACLE_TENSORRT_HEADERS}/${version}/include
                -isystem ${TENSORACLE_CUDA_RUNTIME_INCLUDE}
                ${CMAKE_CURRENT_SOURCE_DIR}/deploy/tensorrt_header_check.cpp)
        set_tests_properties(${name} PROPERTIES LABELS deploy TIMEOUT 120)
    endforeach()
endforeach()

# tensorrt.hpp is an umbrella over one header per concept (include/tensoracle/deploy/tensorrt/):
# tensorrt_pieces_check_* compile each of them alone, with the same options, so that each
# includes what it uses. One source per piece is written at configure time.
file(GLOB tensorrt_pieces CONFIGURE_DEPENDS
    "${PROJECT_SOURCE_DIR}/include/tensoracle/deploy/tensorrt/*.hpp")
set(piece_sources)
foreach(piece IN LISTS tensorrt_pieces)
    get_filename_component(piece_name ${piece} NAME_WE)
    set(piece_source "${CMAKE_CURRENT_BINARY_DIR}/tensorrt_pieces/${piece_name}.cpp")
    file(CONFIGURE OUTPUT ${piece_source}
        CONTENT "#include \"tensoracle/deploy/tensorrt/${piece_name}.hpp\"\n")
    list(APPEND piece_sources ${piece_source})
endforeach()
foreach(version IN LISTS tensorrt_versions)
    foreach(standard IN ITEMS 17 20)
        set(name tensorrt_pieces_check_${version}_cxx${standard})
        add_test(NAME ${name}
            COMMAND ${CMAKE_CXX_COMPILER} -std=c++${standard} -fsyntax-only
                -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
                -Wnon-virtual-dtor -Wold-style-cast -Werror
                -I${PROJECT_SOURCE_DIR}/include
                -isystem ${TENSORACLE_TENSORRT_HEADERS}/${version}/include
                -isystem ${TENSORACLE_CUDA_RUNTIME_INCLUDE}
                ${piece_sources})
        set_tests_properties(${name} PROPERTIES LABELS deploy TIMEOUT 300)
    endforeach()
endforeach()

# tensorrt_runtime_test: the adapter's parts that need no TensorRT library, built against the
# newest version's headers (no TensorRT is linked): an entry of another backend never reaches
# deserializeCudaEngine (a recording IRuntime whose every call fails the test), the backend
# version check, shapes to Dims and back. tensorrt_execution_test: the calls an execution unit
# makes, through recording stand-ins of TensorRT's interfaces (deploy/tensorrt_stand_ins.hpp).
# tensorrt_lifetime_test: what the adapter returns keeps alive what it depends on, every order of
# letting go checked under AddressSanitizer and UndefinedBehaviorSanitizer; its one test of a
# failed runtime creation, which leaves that runtime to the process on purpose, runs without
# leak detection.
list(GET tensorrt_versions -1 newest_tensorrt)
add_executable(tensorrt_runtime_test ${CMAKE_CURRENT_SOURCE_DIR}/deploy/tensorrt_runtime_check.cpp)
target_include_directories(tensorrt_runtime_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
    ${PROJECT_SOURCE_DIR}/src)
target_include_directories(tensorrt_runtime_test SYSTEM PRIVATE
    ${TENSORACLE_TENSORRT_HEADERS}/${newest_tensorrt}/include ${TENSORACLE_CUDA_RUNTIME_INCLUDE})
target_link_libraries(tensorrt_runtime_test PRIVATE tensoracle_deploy tensoracle_core
    tensoracle_test_main GTest::gtest Threads::Threads ${TENSORACLE_CUDA_RUNTIME_LIBRARY})
tensoracle_warnings(tensorrt_runtime_test)
tensoracle_test_optimization(tensorrt_runtime_test)
add_test(NAME tensorrt_runtime_test COMMAND tensorrt_runtime_test)
set_tests_properties(tensorrt_runtime_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
    LABELS deploy)

function(tensoracle_tensorrt_test name source)
    add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/deploy/${source})
    target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
        ${PROJECT_SOURCE_DIR}/src)
    target_include_directories(${name} SYSTEM PRIVATE
        ${TENSORACLE_TENSORRT_HEADERS}/${newest_tensorrt}/include
        ${TENSORACLE_CUDA_RUNTIME_INCLUDE})
    target_link_libraries(${name} PRIVATE tensoracle_deploy tensoracle_core
        tensoracle_test_main GTest::gtest Threads::Threads ${TENSORACLE_TENSORRT_LIBRARY}
        ${TENSORACLE_CUDA_RUNTIME_LIBRARY})
    tensoracle_warnings(${name})
    tensoracle_test_optimization(${name})
endfunction()

tensoracle_tensorrt_test(tensorrt_execution_test tensorrt_execution_check.cpp)
add_test(NAME tensorrt_execution_test COMMAND tensorrt_execution_test)
set_tests_properties(tensorrt_execution_test PROPERTIES TIMEOUT 120 LABELS deploy)

# tensorrt_stream_gpu_test: on a GPU, what VerifiedPlanStream copies into device memory (label
# gpu; a skip, exit 77, without one). It calls no TensorRT.
tensoracle_tensorrt_test(tensorrt_stream_gpu_test tensorrt_stream_gpu_check.cpp)
add_test(NAME tensorrt_stream_gpu_test COMMAND tensorrt_stream_gpu_test)
set_tests_properties(tensorrt_stream_gpu_test PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120
    LABELS "deploy;gpu")

tensoracle_tensorrt_test(tensorrt_lifetime_test tensorrt_lifetime_check.cpp)
target_sources(tensorrt_lifetime_test PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/deploy/tensorrt_plugin_check.cpp)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang" AND NOT WIN32)
    set(sanitizers -fsanitize=address,undefined -fno-sanitize-recover=all
        -fno-omit-frame-pointer)
    target_compile_options(tensorrt_lifetime_test PRIVATE ${sanitizers})
    target_link_options(tensorrt_lifetime_test PRIVATE ${sanitizers})
endif()
set(failed_creation TensorRtLifetime.AFailedRuntimeCreationLeavesNothingDangling)
add_test(NAME tensorrt_lifetime_test
    COMMAND tensorrt_lifetime_test --gtest_filter=-${failed_creation})
add_test(NAME tensorrt_lifetime_failed_creation_test
    COMMAND tensorrt_lifetime_test --gtest_filter=${failed_creation})
set_tests_properties(tensorrt_lifetime_test tensorrt_lifetime_failed_creation_test PROPERTIES
    TIMEOUT 300 LABELS deploy)
set_tests_properties(tensorrt_lifetime_failed_creation_test PROPERTIES
    ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
