# Script of the cmake_package_headers test: the CMake package installs exactly the headers listed
# in cmake/TensoracleHeaders.cmake (DEPLOY_HEADERS and CORE_HEADERS, '|'-separated), each of them
# compiles alone against the installed include folder (what a tensoracle::deploy application
# includes as C++17, the rest as C++20, warnings as errors), and none includes a third-party header: only standard C++ headers
# and installed tensoracle headers, besides TensorRT's NvInferRuntime.h in the TensorRT adapter
# (deploy/tensorrt.hpp and deploy/tensorrt/), which its own tests compile against TensorRT's
# headers (tensorrt_header_check).
file(REMOVE_RECURSE "${WORK_DIR}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix"
    RESULT_VARIABLE status OUTPUT_QUIET)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "cmake --install failed (${status})")
endif()
set(include "${WORK_DIR}/prefix/include")
string(REPLACE "|" ";" deploy_headers "${DEPLOY_HEADERS}")
string(REPLACE "|" ";" core_headers "${CORE_HEADERS}")
set(listed ${deploy_headers} ${core_headers})

file(GLOB_RECURSE installed RELATIVE "${include}" "${include}/*")
list(SORT installed)
list(SORT listed)
if(NOT installed STREQUAL listed)
    message(FATAL_ERROR "the package installs\n  ${installed}\nbut the lists name\n  ${listed}")
endif()

set(standard algorithm any array atomic bit bitset cassert cctype cerrno cfloat charconv chrono
    cinttypes climits cmath compare concepts condition_variable cstddef cstdint cstdio cstdlib
    cstring ctime deque exception filesystem functional initializer_list iomanip ios iosfwd
    iostream istream iterator limits list locale map memory mutex new numeric optional ostream
    queue random ranges ratio set shared_mutex source_location span sstream stdexcept stop_token
    streambuf string string_view system_error thread tuple type_traits typeinfo unordered_map
    unordered_set utility variant vector version)
set(failures)
foreach(header IN LISTS listed)
    set(adapter FALSE)
    if(header MATCHES "^tensoracle/deploy/tensorrt(\\.hpp|/)")
        set(adapter TRUE)
    endif()
    file(STRINGS "${include}/${header}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
        if(line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
            set(name "${CMAKE_MATCH_1}")
        else()
            list(APPEND failures "${header}: an include it cannot name: ${line}")
            continue()
        endif()
        if(name MATCHES "^tensoracle/")
            if(NOT name IN_LIST listed)
                list(APPEND failures "${header} includes ${name}, which is not installed")
            endif()
        elseif(NOT name IN_LIST standard AND NOT (adapter AND name STREQUAL "NvInferRuntime.h"))
            list(APPEND failures "${header} includes ${name}, not a standard C++ header")
        endif()
    endforeach()
    if(adapter)
        continue() # compiled against TensorRT's headers by tensorrt_header_check
    endif()
    # What a C++17 application of tensoracle::deploy includes (docs/deploy.md): the deploy library,
    # its errors and describe()'s GPU properties. The comparison and the core are C++20.
    if(header MATCHES "^tensoracle/deploy/" OR header MATCHES
            "^tensoracle/(errors|cuda/gpu_properties)\\.hpp$")
        set(standard_flag -std=c++17)
    else()
        set(standard_flag -std=c++20)
    endif()
    string(MAKE_C_IDENTIFIER "${header}" stem)
    set(source "${WORK_DIR}/alone/${stem}.cpp")
    file(WRITE "${source}" "#include <${header}>\n")
    execute_process(COMMAND "${CXX_COMPILER}" ${standard_flag} -fsyntax-only -Wall -Wextra
            -Wpedantic -Werror "-I${include}" "${source}"
        RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT status EQUAL 0)
        list(APPEND failures "${header} does not compile alone (${standard_flag}):\n${out}${err}")
    endif()
endforeach()
if(failures)
    string(REPLACE ";" "\n" failures "${failures}")
    message(FATAL_ERROR "${failures}")
endif()
list(LENGTH listed count)
message(STATUS "${count} installed headers: each compiles alone and includes no third-party header")
