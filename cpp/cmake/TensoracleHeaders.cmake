# The public headers of tensoracle, relative to include/: its API, and all that include/ holds (the
# core's internal headers are in src/<part>/). The packages install these lists, not what a walk
# of the includes finds (tensoracle_install_package, TensoracleInstall.cmake); the
# cmake_package_headers test compiles each installed header alone and checks that it includes no
# third-party header.
#
# TENSORACLE_DEPLOY_HEADERS: tensoracle::deploy (docs/deploy.md), C++17, in both packages: the
# deploy library, errors.hpp, cuda/gpu_properties.hpp (describe()) and compare/compare.hpp
# (comparing an engine's outputs with expected ones, as examples/cpp_inference does).
# deploy/tensorrt.hpp is the TensorRT adapter, header-only, with one header per concept in
# deploy/tensorrt/: they include TensorRT's NvInferRuntime.h, the one third-party header a public
# header may include, which the application provides.
set(TENSORACLE_DEPLOY_HEADERS
    tensoracle/errors.hpp
    tensoracle/compare/array_view.hpp
    tensoracle/compare/compare.hpp
    tensoracle/cuda/gpu_properties.hpp
    tensoracle/deploy/data_type.hpp
    tensoracle/deploy/deployed_engine.hpp
    tensoracle/deploy/execution_contract.hpp
    tensoracle/deploy/host_platform.hpp
    tensoracle/deploy/manifest.hpp
    tensoracle/deploy/manifest_merge.hpp
    tensoracle/deploy/manifest_pull.hpp
    tensoracle/deploy/memory_kind.hpp
    tensoracle/deploy/plan_reader.hpp
    tensoracle/deploy/plugin_library.hpp
    tensoracle/deploy/selection.hpp
    tensoracle/deploy/signed_manifest.hpp
    tensoracle/deploy/tensorrt.hpp
    tensoracle/deploy/tensorrt/deserialize.hpp
    tensoracle/deploy/tensorrt/engine.hpp
    tensoracle/deploy/tensorrt/execution.hpp
    tensoracle/deploy/tensorrt/io.hpp
    tensoracle/deploy/tensorrt/logger.hpp
    tensoracle/deploy/tensorrt/names.hpp
    tensoracle/deploy/tensorrt/plan_stream.hpp
    tensoracle/deploy/tensorrt/plugins.hpp
    tensoracle/deploy/tensorrt/runtime.hpp
    tensoracle/deploy/tensorrt/shapes.hpp
    tensoracle/deploy/tensorrt/version.hpp
    tensoracle/deploy/trust_policy.hpp)
# TENSORACLE_CORE_HEADERS: what tensoracle::core adds, C++20, in the CMake package only: the
# cubin runtime (docs/cubin-plugins.md) and the CUDA driver calls it is expressed in.
# cubin/cubin_runtime.hpp forwards to cubin/runtime.hpp for existing code
# (docs/compatibility.md).
set(TENSORACLE_CORE_HEADERS
    tensoracle/cubin/bundle.hpp
    tensoracle/cubin/bundle_manifest.hpp
    tensoracle/cubin/cubin_runtime.hpp
    tensoracle/cubin/runtime.hpp
    tensoracle/cuda/driver.hpp)

# include/ holds these and nothing else: a header added there must be listed (or belongs in src/).
file(GLOB_RECURSE _tensoracle_present RELATIVE "${CMAKE_CURRENT_LIST_DIR}/../include"
    CONFIGURE_DEPENDS "${CMAKE_CURRENT_LIST_DIR}/../include/*")
set(_tensoracle_listed ${TENSORACLE_DEPLOY_HEADERS} ${TENSORACLE_CORE_HEADERS})
foreach(header IN LISTS _tensoracle_present)
    if(NOT header IN_LIST _tensoracle_listed)
        message(FATAL_ERROR "include/${header} is in no list of cmake/TensoracleHeaders.cmake: "
            "add it there if it is public API, else move it to src/<part>/")
    endif()
endforeach()
foreach(header IN LISTS _tensoracle_listed)
    if(NOT header IN_LIST _tensoracle_present)
        message(FATAL_ERROR "cmake/TensoracleHeaders.cmake lists ${header}, which is not in "
            "include/")
    endif()
endforeach()
# Kept as global properties, so that tensoracle_install_package also finds them when called from a
# parent project's directory (python/CMakeLists.txt).
set_property(GLOBAL PROPERTY _tensoracle_deploy_headers ${TENSORACLE_DEPLOY_HEADERS})
set_property(GLOBAL PROPERTY _tensoracle_core_headers ${TENSORACLE_CORE_HEADERS})
