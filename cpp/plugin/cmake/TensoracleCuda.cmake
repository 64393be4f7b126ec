# tensoracle_find_cuda(OUT_INCLUDE_DIR <var> OUT_DRIVER_LIBRARY <var>)
#
# Locates cuda.h and the CUDA driver's link library, sets the two named variables in the caller's
# scope (plus _tensoracle_cuda_root, the CUDA root that was chosen) and defines the IMPORTED
# target tensoracle_cuda_driver, which carries both (link it PRIVATE).
#
# CUDA roots, in order: CUDAToolkit_ROOT (CMake variable, else environment), which is then the
# only root; otherwise CMAKE_CUDA_COMPILER_TOOLKIT_ROOT, the toolkits of CMAKE_CUDA_COMPILER, of
# $CUDACXX and of the nvcc on PATH, $CUDA_PATH, /usr/local/cuda and /usr/local/cuda-* (newest
# first; on Windows the "NVIDIA GPU Computing Toolkit/CUDA/v*" folders). The PyPI layout
# site-packages/nvidia/cu13 (nvidia-cuda-nvcc + nvidia-cuda-runtime) is a valid root.
#
# The driver library on Linux is the installed driver's libcuda.so when there is one, else a
# toolkit stub (lib64/stubs, lib/stubs, targets/x86_64-linux/lib/stubs). With neither (a machine
# without a driver, headers from PyPI), a link-time stub libcuda.so (soname libcuda.so.1) is
# compiled from cuda_driver_stub.cpp into <build>/tensoracle-cuda-stub: the library links, and at
# run time loads the real driver. Windows uses <root>/lib/x64/cuda.lib.
cmake_minimum_required(VERSION 3.20)
include_guard(GLOBAL)

# Kept as a global property (not a cache entry) so the functions find the stub source from any
# directory they are called in.
set_property(GLOBAL PROPERTY _tensoracle_cuda_helper_dir "${CMAKE_CURRENT_LIST_DIR}")

function(_tensoracle_cuda_roots out)
    if(DEFINED CUDAToolkit_ROOT AND NOT "${CUDAToolkit_ROOT}" STREQUAL "")
        file(TO_CMAKE_PATH "${CUDAToolkit_ROOT}" given)
        set(${out} "${given}" PARENT_SCOPE)
        return()
    endif()
    if(NOT "$ENV{CUDAToolkit_ROOT}" STREQUAL "")
        file(TO_CMAKE_PATH "$ENV{CUDAToolkit_ROOT}" given)
        set(${out} "${given}" PARENT_SCOPE)
        return()
    endif()
    set(roots "")
    if(CMAKE_CUDA_COMPILER_TOOLKIT_ROOT)
        list(APPEND roots "${CMAKE_CUDA_COMPILER_TOOLKIT_ROOT}")
    endif()
    foreach(compiler IN ITEMS "${CMAKE_CUDA_COMPILER}" "$ENV{CUDACXX}")
        if(NOT "${compiler}" STREQUAL "" AND EXISTS "${compiler}")
            file(TO_CMAKE_PATH "${compiler}" compiler)
            get_filename_component(bin "${compiler}" DIRECTORY)
            get_filename_component(root "${bin}" DIRECTORY)
            list(APPEND roots "${root}")
        endif()
    endforeach()
    if(WIN32)
        set(nvcc_name nvcc.exe)
    else()
        set(nvcc_name nvcc)
    endif()
    file(TO_CMAKE_PATH "$ENV{PATH}" search_path)
    foreach(directory IN LISTS search_path)
        if(NOT "${directory}" STREQUAL "" AND EXISTS "${directory}/${nvcc_name}"
                AND NOT IS_DIRECTORY "${directory}/${nvcc_name}")
            get_filename_component(real "${directory}/${nvcc_name}" REALPATH)
            get_filename_component(bin "${real}" DIRECTORY)
            get_filename_component(root "${bin}" DIRECTORY)
            list(APPEND roots "${root}")
            break()
        endif()
    endforeach()
    if(NOT "$ENV{CUDA_PATH}" STREQUAL "")
        file(TO_CMAKE_PATH "$ENV{CUDA_PATH}" cuda_path)
        list(APPEND roots "${cuda_path}")
    endif()
    if(WIN32)
        file(GLOB versions LIST_DIRECTORIES true
            "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v*")
    else()
        list(APPEND roots /usr/local/cuda)
        file(GLOB versions LIST_DIRECTORIES true /usr/local/cuda-*)
    endif()
    if(versions)
        list(SORT versions COMPARE NATURAL ORDER DESCENDING)
        list(APPEND roots ${versions})
    endif()
    list(REMOVE_DUPLICATES roots)
    set(${out} "${roots}" PARENT_SCOPE)
endfunction()

# Sets `out_dir` to the first directory holding cuda.h over `roots`, and `out_root` to its root.
function(_tensoracle_cuda_header out_dir out_root roots)
    set(searched "")
    foreach(root IN LISTS roots)
        foreach(directory IN ITEMS "${root}/include" "${root}/targets/x86_64-linux/include")
            list(APPEND searched "${directory}")
            if(EXISTS "${directory}/cuda.h")
                set(${out_dir} "${directory}" PARENT_SCOPE)
                set(${out_root} "${root}" PARENT_SCOPE)
                return()
            endif()
        endforeach()
    endforeach()
    list(JOIN searched "\n  " listing)
    message(FATAL_ERROR
        "tensoracle: the CUDA driver API header cuda.h was not found in any of these "
        "directories:\n  ${listing}\n"
        "Install the PyPI wheels nvidia-cuda-nvcc and nvidia-cuda-runtime 13.2 (or a CUDA "
        "toolkit) and set CUDAToolkit_ROOT (a CMake or environment variable) to their "
        "site-packages/nvidia/cu13 folder (or the toolkit's folder).")
endfunction()

# Compiles the link-time stub libcuda.so into <build>/tensoracle-cuda-stub (when missing or
# older than its source) and sets `out` to its path.
function(_tensoracle_cuda_stub out include_dir searched)
    get_property(helper_dir GLOBAL PROPERTY _tensoracle_cuda_helper_dir)
    set(source "${helper_dir}/cuda_driver_stub.cpp")
    set(directory "${CMAKE_BINARY_DIR}/tensoracle-cuda-stub")
    # Only the link name: a libcuda.so.1 here would be found at run time through the build RPATH.
    set(library "${directory}/libcuda.so")
    if(NOT CMAKE_CXX_COMPILER)
        message(FATAL_ERROR
            "tensoracle: no CUDA driver link library was found in:\n  ${searched}\n"
            "and no C++ compiler is enabled to build a link-time stub (enable the CXX language "
            "first), or install the NVIDIA driver.")
    endif()
    if(NOT EXISTS "${library}" OR "${source}" IS_NEWER_THAN "${library}")
        file(MAKE_DIRECTORY "${directory}")
        execute_process(
            COMMAND "${CMAKE_CXX_COMPILER}" -shared -fPIC -O2 "-I${include_dir}"
                "-Wl,-soname,libcuda.so.1" -o "${library}.tmp" "${source}"
            RESULT_VARIABLE status
            OUTPUT_VARIABLE output
            ERROR_VARIABLE output)
        if(NOT status EQUAL 0)
            message(FATAL_ERROR
                "tensoracle: no CUDA driver link library was found in:\n  ${searched}\n"
                "and building the link-time stub ${library} with ${CMAKE_CXX_COMPILER} failed "
                "(${status}):\n${output}")
        endif()
        file(RENAME "${library}.tmp" "${library}")
    endif()
    message(STATUS
        "tensoracle: no CUDA driver link library found; made a link-time stub ${library} "
        "(soname libcuda.so.1). The real NVIDIA driver is needed at run time.")
    set(${out} "${library}" PARENT_SCOPE)
endfunction()

# Sets `out` to the driver link library for `root`.
function(_tensoracle_cuda_driver out root include_dir)
    if(WIN32)
        set(library "${root}/lib/x64/cuda.lib")
        if(NOT EXISTS "${library}")
            message(FATAL_ERROR
                "tensoracle: the CUDA driver link library was not found: ${library}\n"
                "Install the PyPI wheel nvidia-cuda-runtime 13.2 (it holds lib/x64/cuda.lib) or "
                "a CUDA toolkit and set CUDAToolkit_ROOT to its folder.")
        endif()
        set(${out} "${library}" PARENT_SCOPE)
        return()
    endif()
    set(hints /usr/lib/wsl/lib "${root}/lib64" "${root}/lib" "${root}/targets/x86_64-linux/lib")
    # A private result: removed from the cache again so that every configure searches afresh.
    unset(_tensoracle_cuda_library CACHE)
    unset(_tensoracle_cuda_library)
    find_library(_tensoracle_cuda_library NAMES cuda HINTS ${hints})
    set(library "${_tensoracle_cuda_library}")
    unset(_tensoracle_cuda_library CACHE)
    if(NOT library)
        set(stubs "${root}/lib64/stubs" "${root}/lib/stubs"
            "${root}/targets/x86_64-linux/lib/stubs")
        find_library(_tensoracle_cuda_library NAMES cuda PATHS ${stubs} NO_DEFAULT_PATH)
        set(library "${_tensoracle_cuda_library}")
        unset(_tensoracle_cuda_library CACHE)
    endif()
    if(NOT library)
        list(JOIN hints "\n  " first)
        list(JOIN stubs "\n  " second)
        _tensoracle_cuda_stub(library "${include_dir}"
            "${first}\n  (and the system library directories)\n  ${second}")
    endif()
    set(${out} "${library}" PARENT_SCOPE)
endfunction()

function(tensoracle_find_cuda)
    cmake_parse_arguments(PARSE_ARGV 0 arg "" "OUT_INCLUDE_DIR;OUT_DRIVER_LIBRARY" "")
    if(arg_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "tensoracle_find_cuda: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT arg_OUT_INCLUDE_DIR OR NOT arg_OUT_DRIVER_LIBRARY)
        message(FATAL_ERROR
            "tensoracle_find_cuda: OUT_INCLUDE_DIR <variable> and OUT_DRIVER_LIBRARY <variable> "
            "are both required")
    endif()
    _tensoracle_cuda_roots(roots)
    _tensoracle_cuda_header(include_dir root "${roots}")
    _tensoracle_cuda_driver(driver "${root}" "${include_dir}")
    message(STATUS "tensoracle: CUDA headers: ${include_dir}")
    message(STATUS "tensoracle: CUDA driver library: ${driver}")
    if(NOT TARGET tensoracle_cuda_driver)
        add_library(tensoracle_cuda_driver UNKNOWN IMPORTED GLOBAL)
    endif()
    set_target_properties(tensoracle_cuda_driver PROPERTIES
        IMPORTED_LOCATION "${driver}"
        INTERFACE_INCLUDE_DIRECTORIES "${include_dir}")
    set(${arg_OUT_INCLUDE_DIR} "${include_dir}" PARENT_SCOPE)
    set(${arg_OUT_DRIVER_LIBRARY} "${driver}" PARENT_SCOPE)
    set(_tensoracle_cuda_root "${root}" PARENT_SCOPE)
endfunction()
