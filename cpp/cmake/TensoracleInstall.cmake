# tensoracle_install_package(LIBDIR <dir> INCLUDEDIR <dir> CONFIGDIR <dir> SDKDIR <dir>
#                            [DEPLOY_HEADERS_ONLY]):
# installs the static libraries tensoracle::core and tensoracle::deploy into LIBDIR, the public
# headers into INCLUDEDIR, the cubin plugin SDK (plugin/install.cmake) into SDKDIR, and the
# find_package(tensoracle) files (tensoracleConfig.cmake from tensoracleConfig.cmake.in, its
# version file and the exported targets) into CONFIGDIR; every folder relative to the install
# prefix. INCLUDEDIR must be the folder the targets were given as TENSORACLE_INSTALL_INCLUDEDIR.
#
# The headers are the lists of cmake/TensoracleHeaders.cmake: the CMake package
# (cpp/CMakeLists.txt, TENSORACLE_INSTALL) installs both, TENSORACLE_DEPLOY_HEADERS and
# TENSORACLE_CORE_HEADERS; the Python wheel (python/CMakeLists.txt) installs under tensoracle/cpp,
# with DEPLOY_HEADERS_ONLY, the first alone. Its tensoracle::core is only what tensoracle::deploy
# links. No installed header includes a third-party header (but TensorRT's, in the TensorRT
# adapter), so neither package asks for nlohmann_json.
#
# The folder of this file is kept as a global property so that the function also works when called
# from a parent project's directory (as tensoracle_install_plugin_sdk does).
set_property(GLOBAL PROPERTY _tensoracle_cpp_dir "${CMAKE_CURRENT_LIST_DIR}/..")
# The version the config file records, kept the same way (included after find_package).
set_property(GLOBAL PROPERTY _tensoracle_version "${tensoracle_VERSION}")

function(tensoracle_install_package)
    cmake_parse_arguments(PARSE_ARGV 0 arg "DEPLOY_HEADERS_ONLY"
        "LIBDIR;INCLUDEDIR;CONFIGDIR;SDKDIR" "")
    if(arg_UNPARSED_ARGUMENTS OR NOT arg_LIBDIR OR NOT arg_INCLUDEDIR OR NOT arg_CONFIGDIR
            OR NOT arg_SDKDIR)
        message(FATAL_ERROR "tensoracle_install_package: LIBDIR, INCLUDEDIR, CONFIGDIR and "
            "SDKDIR are required (unknown arguments: '${arg_UNPARSED_ARGUMENTS}')")
    endif()
    if(NOT arg_INCLUDEDIR STREQUAL TENSORACLE_INSTALL_INCLUDEDIR)
        message(FATAL_ERROR "tensoracle_install_package: INCLUDEDIR '${arg_INCLUDEDIR}' is not "
            "the targets' TENSORACLE_INSTALL_INCLUDEDIR '${TENSORACLE_INSTALL_INCLUDEDIR}'")
    endif()
    get_property(cpp GLOBAL PROPERTY _tensoracle_cpp_dir)
    get_filename_component(cpp "${cpp}" ABSOLUTE)
    get_property(version GLOBAL PROPERTY _tensoracle_version)
    set(include "${cpp}/include")

    tensoracle_install_plugin_sdk(${arg_SDKDIR})
    install(TARGETS tensoracle_core tensoracle_deploy EXPORT tensoracleTargets
        ARCHIVE DESTINATION ${arg_LIBDIR})
    get_property(headers GLOBAL PROPERTY _tensoracle_deploy_headers)
    if(NOT arg_DEPLOY_HEADERS_ONLY)
        get_property(core_headers GLOBAL PROPERTY _tensoracle_core_headers)
        list(APPEND headers ${core_headers})
    endif()
    foreach(header IN LISTS headers)
        get_filename_component(folder "${header}" DIRECTORY)
        install(FILES "${include}/${header}" DESTINATION "${arg_INCLUDEDIR}/${folder}")
    endforeach()

    install(EXPORT tensoracleTargets NAMESPACE tensoracle:: DESTINATION ${arg_CONFIGDIR})
    include(CMakePackageConfigHelpers)
    # The SDK folder as the config file finds it, relative to the prefix (PATH_VARS below).
    set(TENSORACLE_CONFIG_SDK_DIR ${arg_SDKDIR})
    set(config_dir "${CMAKE_CURRENT_BINARY_DIR}/tensoracle-package")
    configure_package_config_file("${cpp}/cmake/tensoracleConfig.cmake.in"
        "${config_dir}/tensoracleConfig.cmake"
        INSTALL_DESTINATION ${arg_CONFIGDIR}
        PATH_VARS TENSORACLE_CONFIG_SDK_DIR)
    write_basic_package_version_file("${config_dir}/tensoracleConfigVersion.cmake"
        VERSION ${version} COMPATIBILITY SameMajorVersion)
    install(FILES "${config_dir}/tensoracleConfig.cmake"
        "${config_dir}/tensoracleConfigVersion.cmake" DESTINATION ${arg_CONFIGDIR})
endfunction()
