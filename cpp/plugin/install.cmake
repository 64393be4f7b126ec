# tensoracle_install_plugin_sdk(<destination>): installs the cubin plugin SDK as one folder,
# <destination>/{cmake,include/tensoracle,src}: the plugin header and source, the CMake helpers,
# and the cubin runtime's headers and sources that tensoracle_add_cubin_plugin compiles into each
# plugin. Used for the Python wheel (tensoracle/cpp) and the CMake package.
# Cached so that the function also works when called from a parent project's directory.
set(_tensoracle_plugin_dir "${CMAKE_CURRENT_LIST_DIR}" CACHE INTERNAL "")
get_filename_component(_tensoracle_core "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_tensoracle_core_dir "${_tensoracle_core}" CACHE INTERNAL "")

function(tensoracle_install_plugin_sdk destination)
    set(core "${_tensoracle_core_dir}")
    install(FILES
        "${_tensoracle_plugin_dir}/cmake/TensoracleCubinPlugin.cmake"
        "${_tensoracle_plugin_dir}/cmake/TensoracleCuda.cmake"
        DESTINATION "${destination}/cmake")
    install(FILES
        "${_tensoracle_plugin_dir}/include/tensoracle/cubin_plugin.hpp"
        "${core}/include/tensoracle/cubin_runtime.hpp"
        "${core}/include/tensoracle/cubin_bundle.hpp"
        "${core}/include/tensoracle/cuda_driver.hpp"
        "${core}/include/tensoracle/errors.hpp"
        "${core}/include/tensoracle/hash.hpp"
        DESTINATION "${destination}/include/tensoracle")
    install(FILES
        "${_tensoracle_plugin_dir}/src/cubin_plugin.cpp"
        "${core}/src/cubin_runtime.cpp"
        "${core}/src/cuda_driver.cpp"
        "${core}/src/hash.cpp"
        "${core}/src/errors.cpp"
        DESTINATION "${destination}/src")
endfunction()
