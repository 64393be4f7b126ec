# tensoracle_install_package(LIBDIR <dir> INCLUDEDIR <dir> CONFIGDIR <dir> SDKDIR <dir>
#                            [DEPLOY_HEADERS_ONLY]):
# installs the static libraries tensoracle::core and tensoracle::deploy into LIBDIR, the public
# headers into INCLUDEDIR, the cubin plugin SDK (plugin/install.cmake) into SDKDIR, and the
# find_package(tensoracle) files (tensoracleConfig.cmake from tensoracleConfig.cmake.in, its
# version file and the exported targets) into CONFIGDIR; every folder relative to the install
# prefix. INCLUDEDIR must be the folder the targets were given as TENSORACLE_INSTALL_INCLUDEDIR.
#
# The CMake package (cpp/CMakeLists.txt, TENSORACLE_INSTALL) installs every header. The Python
# wheel (python/CMakeLists.txt) installs under tensoracle/cpp, with DEPLOY_HEADERS_ONLY: the
# headers of tensoracle/deploy/ and of its TensorRT adapter (deploy/tensorrt/), errors.hpp,
# cuda/gpu_properties.hpp (for describe()), compare/compare.hpp (comparing an engine's outputs
# with expected ones), and every tensoracle header they include, followed to the end. Its
# tensoracle::core is only what tensoracle::deploy links.
#
# The folder of this file is kept as a global property so that the function also works when called
# from a parent project's directory (as tensoracle_install_plugin_sdk does).
set_property(GLOBAL PROPERTY _tensoracle_cpp_dir "${CMAKE_CURRENT_LIST_DIR}/..")
# The versions the config file records, kept the same way (included after find_package).
set_property(GLOBAL PROPERTY _tensoracle_version "${tensoracle_VERSION}")
set_property(GLOBAL PROPERTY _tensoracle_json_version "${nlohmann_json_VERSION}")

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
    get_property(TENSORACLE_JSON_VERSION GLOBAL PROPERTY _tensoracle_json_version)
    set(include "${cpp}/include")

    # The core's headers of the CMake package include nlohmann/json.hpp, so its tensoracle::core
    # names nlohmann_json, which its config requires in the version compiled with (its ABI
    # namespace, json_abi_v3_11_2, carries the version). The wheel's package ships no header
    # that includes it: its config asks for no nlohmann_json at all.
    if(arg_DEPLOY_HEADERS_ONLY)
        set(TENSORACLE_CONFIG_JSON "# No nlohmann_json: no header of this package includes it.")
    else()
        target_link_libraries(tensoracle_core INTERFACE
            $<INSTALL_INTERFACE:nlohmann_json::nlohmann_json>)
        string(CONCAT TENSORACLE_CONFIG_JSON
            "find_dependency(nlohmann_json 3.11)\n"
            "# The core was compiled with nlohmann_json ${TENSORACLE_JSON_VERSION}; its ABI "
            "namespace\n"
            "# (nlohmann::json_abi_v<MAJOR>_<MINOR>_<PATCH>) names the version, so functions "
            "taking a json\n"
            "# compiled with another one would not link.\n"
            "if(NOT nlohmann_json_VERSION VERSION_EQUAL \"${TENSORACLE_JSON_VERSION}\")\n"
            "    set(tensoracle_FOUND FALSE)\n"
            "    string(CONCAT tensoracle_NOT_FOUND_MESSAGE \"tensoracle was compiled with "
            "nlohmann_json \"\n"
            "        \"${TENSORACLE_JSON_VERSION} and needs that version; found "
            "\${nlohmann_json_VERSION} \"\n"
            "        \"(\${nlohmann_json_DIR}). Point nlohmann_json_DIR at a "
            "${TENSORACLE_JSON_VERSION} package.\")\n"
            "    return()\n"
            "endif()")
    endif()
    tensoracle_install_plugin_sdk(${arg_SDKDIR})
    install(TARGETS tensoracle_core tensoracle_deploy EXPORT tensoracleTargets
        ARCHIVE DESTINATION ${arg_LIBDIR})
    if(arg_DEPLOY_HEADERS_ONLY)
        file(GLOB pending RELATIVE "${include}" CONFIGURE_DEPENDS
            "${include}/tensoracle/deploy/*.hpp" "${include}/tensoracle/deploy/tensorrt/*.hpp")
        list(APPEND pending tensoracle/errors.hpp tensoracle/cuda/gpu_properties.hpp
            tensoracle/compare/compare.hpp)
        set(headers)
        while(pending)
            list(POP_FRONT pending header)
            if(header IN_LIST headers)
                continue()
            endif()
            if(NOT EXISTS "${include}/${header}")
                message(FATAL_ERROR "tensoracle_install_package: '${header}' is included by a "
                    "deploy header but is not in ${include}")
            endif()
            list(APPEND headers ${header})
            file(STRINGS "${include}/${header}" lines
                REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]tensoracle/")
            foreach(line IN LISTS lines)
                string(REGEX REPLACE "^[^\"<]*[\"<](tensoracle/[^\">]+)[\">].*$" "\\1" included
                    "${line}")
                list(APPEND pending ${included})
            endforeach()
        endwhile()
        foreach(header IN LISTS headers)
            get_filename_component(folder "${header}" DIRECTORY)
            install(FILES "${include}/${header}" DESTINATION "${arg_INCLUDEDIR}/${folder}")
        endforeach()
    else()
        install(DIRECTORY "${include}/tensoracle" DESTINATION ${arg_INCLUDEDIR})
    endif()

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
