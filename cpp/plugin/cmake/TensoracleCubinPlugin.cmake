# tensoracle_add_cubin_plugin(TARGET <name> TENSORRT_ROOT <dir> BUNDLE_ROOT <dir>
#                             SOURCES <file>...): a shared library holding the plugin sources, the
# bundle's generated bundle.cpp, tensoracle's common plugin code (cubin_plugin.cpp) and the cubin
# runtime it launches kernels with.
#
# TENSORRT_ROOT is a TensorRT SDK folder (include/NvInferRuntime.h, ...). Only its headers are
# used: the library links no TensorRT library, so it loads into the full, lean and dispatch
# runtimes alike. The CUDA headers come from CUDAToolkit_ROOT (see TensoracleCuda.cmake); the
# driver itself (libcuda.so.1) is loaded when the first kernel launches, so the library also
# loads, and its creators register, on machines without a GPU driver. Only getCreators and
# setLoggerFinder are exported.
include_guard(GLOBAL)
include("${CMAKE_CURRENT_LIST_DIR}/TensoracleCuda.cmake")

# This file lives in <root>/cmake. Installed (Python wheel, CMake package) the root holds
# include/ and src/ with everything; in the source repository the plugin folder holds only the
# plugin part and the runtime comes from the core next to it.
get_filename_component(_tensoracle_sdk_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(EXISTS "${_tensoracle_sdk_root}/src/cubin_runtime.cpp")
    set(_tensoracle_sdk_includes "${_tensoracle_sdk_root}/include")
    set(_tensoracle_runtime_src "${_tensoracle_sdk_root}/src")
else()
    get_filename_component(_tensoracle_core "${_tensoracle_sdk_root}/.." ABSOLUTE)
    set(_tensoracle_sdk_includes "${_tensoracle_sdk_root}/include" "${_tensoracle_core}/include")
    set(_tensoracle_runtime_src "${_tensoracle_core}/src")
endif()
set(_tensoracle_sdk_sources
    "${_tensoracle_sdk_root}/src/cubin_plugin.cpp"
    "${_tensoracle_runtime_src}/cubin_runtime.cpp"
    "${_tensoracle_runtime_src}/cuda_driver.cpp"
    "${_tensoracle_runtime_src}/hash.cpp"
    "${_tensoracle_runtime_src}/errors.cpp")

# Sets `out` to TENSORRT_ROOT's include directory, or fails naming the variable and the path.
function(_tensoracle_tensorrt_include_dir out root)
    if("${root}" STREQUAL "")
        message(FATAL_ERROR
            "tensoracle: TENSORRT_ROOT is empty. Set it to a TensorRT SDK folder, the one that "
            "holds include/NvInferRuntime.h.")
    endif()
    foreach(header IN ITEMS NvInferRuntime.h NvInferPluginBase.h NvInferVersion.h)
        if(NOT EXISTS "${root}/include/${header}")
            message(FATAL_ERROR
                "tensoracle: TENSORRT_ROOT='${root}' is not a TensorRT SDK folder: "
                "'${root}/include/${header}' does not exist. Set TENSORRT_ROOT to the folder "
                "that holds include/NvInferRuntime.h.")
        endif()
    endforeach()
    set(${out} "${root}/include" PARENT_SCOPE)
endfunction()

function(tensoracle_add_cubin_plugin)
    cmake_parse_arguments(PARSE_ARGV 0 arg "" "TARGET;TENSORRT_ROOT;BUNDLE_ROOT" "SOURCES")
    if(arg_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR
            "tensoracle_add_cubin_plugin: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
    endif()
    foreach(keyword IN ITEMS TARGET SOURCES)
        if(NOT arg_${keyword})
            message(FATAL_ERROR "tensoracle_add_cubin_plugin: ${keyword} is required")
        endif()
    endforeach()
    _tensoracle_tensorrt_include_dir(tensorrt_include "${arg_TENSORRT_ROOT}")
    if("${arg_BUNDLE_ROOT}" STREQUAL "")
        message(FATAL_ERROR
            "tensoracle: BUNDLE_ROOT is empty. Set it (TENSORACLE_BUNDLE_ROOT in the example) "
            "to the bundle directory written by tensoracle.producer.compile_bundle.")
    endif()
    foreach(file IN ITEMS bundle.cpp bundle.json)
        if(NOT EXISTS "${arg_BUNDLE_ROOT}/${file}")
            message(FATAL_ERROR
                "tensoracle: BUNDLE_ROOT='${arg_BUNDLE_ROOT}' is not a cubin bundle: "
                "'${arg_BUNDLE_ROOT}/${file}' does not exist. Set BUNDLE_ROOT to the directory "
                "written by tensoracle.producer.compile_bundle.")
        endif()
    endforeach()
    _tensoracle_cuda_include_dir(cuda_include)
    find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)

    add_library(${arg_TARGET} SHARED ${arg_SOURCES} ${_tensoracle_sdk_sources}
        "${arg_BUNDLE_ROOT}/bundle.cpp")
    target_include_directories(${arg_TARGET} PRIVATE ${_tensoracle_sdk_includes})
    target_include_directories(${arg_TARGET} SYSTEM PRIVATE "${tensorrt_include}"
        "${cuda_include}")
    target_compile_features(${arg_TARGET} PRIVATE cxx_std_20)
    set_target_properties(${arg_TARGET} PROPERTIES
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON
        POSITION_INDEPENDENT_CODE ON)
    target_link_libraries(${arg_TARGET} PRIVATE OpenSSL::Crypto ${CMAKE_DL_LIBS})
    if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
        # Every symbol must resolve now: a TensorRT symbol would tie the plugin to one runtime.
        target_link_options(${arg_TARGET} PRIVATE "LINKER:--no-undefined")
    endif()
endfunction()
