# tensoracle_install_plugin_sdk(<destination>): installs the cubin plugin SDK as one folder,
# <destination>/{cmake,include/tensoracle,src}: the CMake helpers with the CUDA driver stub source
# they may compile, the SDK header and its one source. The SDK is self-contained (nothing from the
# core is needed). Used for the Python wheel (tensoracle/cpp) and the CMake package.
# The folder is kept as a global property so that the function also works when called from a
# parent project's directory.
set_property(GLOBAL PROPERTY _tensoracle_plugin_dir "${CMAKE_CURRENT_LIST_DIR}")

function(tensoracle_install_plugin_sdk destination)
    get_property(plugin GLOBAL PROPERTY _tensoracle_plugin_dir)
    install(FILES
        "${plugin}/cmake/TensoracleCubinPlugin.cmake"
        "${plugin}/cmake/TensoracleCuda.cmake"
        "${plugin}/cmake/cuda_driver_stub.cpp"
        DESTINATION "${destination}/cmake")
    install(FILES "${plugin}/include/tensoracle/cubin_plugin.hpp"
        DESTINATION "${destination}/include/tensoracle")
    install(FILES "${plugin}/src/cubin_plugin.cpp" DESTINATION "${destination}/src")
endfunction()
