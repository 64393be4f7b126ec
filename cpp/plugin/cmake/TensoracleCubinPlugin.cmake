# tensoracle_add_cubin_plugin(TARGET <name> TENSORRT_ROOT <dir> BUNDLE_ROOT <dir>
#                             SOURCES <file>...)
#
# Adds the shared library <name>: the plugin's SOURCES, the SDK (src/cubin_plugin.cpp next to this
# cmake/ folder) and the bundle's generated <BUNDLE_ROOT>/bundle.cpp, compiled as C++17 with
# hidden visibility (the plugin exports getCreators, setLoggerFinder and the bundle's symbols
# itself). TENSORRT_ROOT needs include/NvInfer.h and a TensorRT library in lib/ or lib64/
# (nvinfer, or only nvinfer_lean / nvinfer_dispatch; nvinfer_11 on Windows); the CUDA headers and
# driver come from tensoracle_find_cuda (TensoracleCuda.cmake). On Linux the TensorRT library is
# linked --as-needed: a plugin that calls no TensorRT function does not depend on it and loads
# into the full, lean and dispatch runtimes alike.
cmake_minimum_required(VERSION 3.20)
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/TensoracleCuda.cmake")

get_filename_component(_tensoracle_sdk_dir "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set_property(GLOBAL PROPERTY _tensoracle_sdk_dir "${_tensoracle_sdk_dir}")
unset(_tensoracle_sdk_dir)

function(tensoracle_add_cubin_plugin)
    cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;TENSORRT_ROOT;BUNDLE_ROOT" "SOURCES")
    if(NOT arg_TARGET OR NOT arg_TENSORRT_ROOT OR NOT arg_BUNDLE_ROOT OR NOT arg_SOURCES)
        message(FATAL_ERROR
            "tensoracle_add_cubin_plugin: TARGET, TENSORRT_ROOT, BUNDLE_ROOT and SOURCES are "
            "required (TARGET <name> TENSORRT_ROOT <dir> BUNDLE_ROOT <dir> SOURCES <file>...)")
    endif()
    get_property(sdk GLOBAL PROPERTY _tensoracle_sdk_dir)

    tensoracle_find_cuda(OUT_INCLUDE_DIR cuda_include OUT_DRIVER_LIBRARY cuda_driver)
    set(_tensoracle_cuda_root "${_tensoracle_cuda_root}" PARENT_SCOPE)

    find_path(TENSORACLE_NVINFER_INCLUDE NvInfer.h
        PATHS "${arg_TENSORRT_ROOT}/include" NO_DEFAULT_PATH REQUIRED)
    set(names nvinfer nvinfer_lean nvinfer_dispatch)
    if(WIN32)
        list(PREPEND names nvinfer_11)
    endif()
    find_library(TENSORACLE_NVINFER_LIBRARY NAMES ${names}
        PATHS "${arg_TENSORRT_ROOT}/lib" "${arg_TENSORRT_ROOT}/lib64" NO_DEFAULT_PATH REQUIRED)

    add_library(${arg_TARGET} SHARED ${arg_SOURCES} "${sdk}/src/cubin_plugin.cpp"
        "${arg_BUNDLE_ROOT}/bundle.cpp")
    target_compile_features(${arg_TARGET} PRIVATE cxx_std_17)
    # Also name the standard when the compiler's default already satisfies it (GCC), so that the
    # compile database tells clang-based tools (clang-tidy) to parse C++17 too.
    get_target_property(standard ${arg_TARGET} CXX_STANDARD)
    if(NOT standard)
        set_target_properties(${arg_TARGET} PROPERTIES CXX_STANDARD 17)
    endif()
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        target_compile_options(${arg_TARGET} PRIVATE -Wno-deprecated-declarations)
    endif()
    target_include_directories(${arg_TARGET} PRIVATE "${sdk}/include"
        "${TENSORACLE_NVINFER_INCLUDE}")
    if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
        # Link options come before the libraries on the link line, so this covers TensorRT.
        target_link_options(${arg_TARGET} PRIVATE "LINKER:--as-needed")
    endif()
    target_link_libraries(${arg_TARGET} PRIVATE "${TENSORACLE_NVINFER_LIBRARY}"
        tensoracle_cuda_driver)
    set_target_properties(${arg_TARGET} PROPERTIES
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN YES)
endfunction()
