# Script for the cmake_package_consumer test: install, configure the consumer (where no
# nlohmann_json can be found), build, run.
file(REMOVE_RECURSE "${WORK_DIR}")
function(step)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
        message(FATAL_ERROR "step failed (${status}): ${ARGN}")
    endif()
endfunction()
step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
     # No header of the package includes nlohmann_json: the package asks for none.
     -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/consumer")
