# Script of the deploy_package_consumer tests: install the build into a scratch prefix (unless
# PREFIX names an installed package already), configure the consumer with CXX_COMPILER, build it
# and run it.
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=... -DMAKE_PROGRAM=... -DCXX_COMPILER=...
#         (-DBUILD_DIR=<tensoracle build> | -DPREFIX=<CMAKE_PREFIX_PATH>) -P run.cmake
if(NOT CXX_COMPILER)
    message(FATAL_ERROR "the consumer's C++ compiler was not found (${COMPILER_NAME}): install it")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
function(step)
    execute_process(COMMAND ${ARGN} RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
        message(FATAL_ERROR "step failed (${status}): ${ARGN}")
    endif()
endfunction()
if(NOT PREFIX)
    set(PREFIX "${WORK_DIR}/prefix")
    step(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}")
endif()
step(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
     "-DCMAKE_PREFIX_PATH=${PREFIX}")
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build" --verbose)
file(MAKE_DIRECTORY "${WORK_DIR}/cache")
step("${WORK_DIR}/build/deploy_consumer" "${WORK_DIR}/cache")
