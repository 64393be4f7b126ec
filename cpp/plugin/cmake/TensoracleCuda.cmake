# tensoracle_find_cuda(OUT_INCLUDE_DIR <var> OUT_DRIVER_LIBRARY <var>): finds the CUDA headers
# (cuda.h) and the CUDA driver's link library, and defines the IMPORTED target
# tensoracle_cuda_driver carrying both.
#
# Where it looks: the CMake variable CUDAToolkit_ROOT, then the environment variable
# CUDAToolkit_ROOT; /usr/local/cuda only when neither is set (a root that was given is never
# silently replaced by another). The root may be a CUDA toolkit or the PyPI layout
# site-packages/nvidia/cu13 of the nvidia-cuda-runtime and nvidia-cuda-nvcc wheels. The driver
# link library is the toolkit's stub (lib64/stubs, lib/stubs), Windows' lib/x64/cuda.lib, or the
# installed NVIDIA driver's libcuda.so (including WSL's /usr/lib/wsl/lib).
include_guard(GLOBAL)

function(_tensoracle_cuda_roots out)
    set(roots "")
    if(DEFINED CUDAToolkit_ROOT AND NOT "${CUDAToolkit_ROOT}" STREQUAL "")
        list(APPEND roots "${CUDAToolkit_ROOT}")
    endif()
    if(DEFINED ENV{CUDAToolkit_ROOT} AND NOT "$ENV{CUDAToolkit_ROOT}" STREQUAL "")
        file(TO_CMAKE_PATH "$ENV{CUDAToolkit_ROOT}" from_environment)
        list(APPEND roots "${from_environment}")
    endif()
    if(NOT roots)
        list(APPEND roots "/usr/local/cuda")
    endif()
    set(${out} "${roots}" PARENT_SCOPE)
endfunction()

# The first existing candidate, or a FATAL_ERROR naming what is missing, the variable to set and
# every path searched.
function(_tensoracle_first_existing out what)
    foreach(candidate IN LISTS ARGN)
        if(EXISTS "${candidate}")
            set(${out} "${candidate}" PARENT_SCOPE)
            return()
        endif()
    endforeach()
    list(JOIN ARGN "\n  " searched)
    message(FATAL_ERROR
        "tensoracle: ${what} not found. Set CUDAToolkit_ROOT (a CMake or environment variable) "
        "to a CUDA toolkit or to site-packages/nvidia/cu13 of the PyPI nvidia-cuda-runtime and "
        "nvidia-cuda-nvcc wheels. Searched:\n  ${searched}")
endfunction()

# Sets `out` to the directory holding cuda.h (and cuda_runtime_api.h, which TensorRT includes).
function(_tensoracle_cuda_include_dir out)
    _tensoracle_cuda_roots(roots)
    set(candidates "")
    foreach(root IN LISTS roots)
        list(APPEND candidates "${root}/include/cuda.h"
            "${root}/targets/x86_64-linux/include/cuda.h")
    endforeach()
    _tensoracle_first_existing(header "the CUDA header cuda.h" ${candidates})
    get_filename_component(directory "${header}" DIRECTORY)
    set(${out} "${directory}" PARENT_SCOPE)
endfunction()

function(_tensoracle_cuda_driver_library out)
    _tensoracle_cuda_roots(roots)
    set(candidates "")
    if(WIN32)
        foreach(root IN LISTS roots)
            list(APPEND candidates "${root}/lib/x64/cuda.lib")
        endforeach()
    else()
        foreach(root IN LISTS roots)
            list(APPEND candidates "${root}/lib64/stubs/libcuda.so" "${root}/lib/stubs/libcuda.so"
                "${root}/targets/x86_64-linux/lib/stubs/libcuda.so")
        endforeach()
        list(APPEND candidates /usr/lib/wsl/lib/libcuda.so /usr/lib/x86_64-linux-gnu/libcuda.so
            /usr/lib64/libcuda.so /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1)
    endif()
    _tensoracle_first_existing(library "the CUDA driver link library" ${candidates})
    set(${out} "${library}" PARENT_SCOPE)
endfunction()

function(tensoracle_find_cuda)
    cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUT_INCLUDE_DIR;OUT_DRIVER_LIBRARY" "")
    if(arg_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "tensoracle_find_cuda: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
    endif()
    foreach(keyword IN ITEMS OUT_INCLUDE_DIR OUT_DRIVER_LIBRARY)
        if(NOT arg_${keyword})
            message(FATAL_ERROR
                "tensoracle_find_cuda: ${keyword} <variable> is required (both OUT_INCLUDE_DIR "
                "and OUT_DRIVER_LIBRARY name variables to set)")
        endif()
    endforeach()
    _tensoracle_cuda_include_dir(include_dir)
    _tensoracle_cuda_driver_library(driver)
    if(NOT TARGET tensoracle_cuda_driver)
        add_library(tensoracle_cuda_driver UNKNOWN IMPORTED GLOBAL)
    endif()
    set_target_properties(tensoracle_cuda_driver PROPERTIES
        IMPORTED_LOCATION "${driver}"
        INTERFACE_INCLUDE_DIRECTORIES "${include_dir}")
    set(${arg_OUT_INCLUDE_DIR} "${include_dir}" PARENT_SCOPE)
    set(${arg_OUT_DRIVER_LIBRARY} "${driver}" PARENT_SCOPE)
endfunction()
