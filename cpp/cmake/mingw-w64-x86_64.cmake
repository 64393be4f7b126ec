# Cross-compiles the core, its tests and the command for Windows x86_64 with Debian's mingw-w64
# (GCC's posix thread model, for std::thread and std::mutex), and runs what it builds under Wine
# (CTest's emulator). TENSORACLE_WINDOWS_PREFIX is the folder that tools/windows_prefix.sh fills
# with the Windows builds of the dependencies (GoogleTest, libsodium) and links to the header-only
# ones (nlohmann-json, CLI11, xxHash); nothing is searched for in the build machine's own folders.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(TENSORACLE_MINGW x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${TENSORACLE_MINGW}-gcc-posix)
set(CMAKE_CXX_COMPILER ${TENSORACLE_MINGW}-g++-posix)
set(CMAKE_RC_COMPILER ${TENSORACLE_MINGW}-windres)

if(NOT TENSORACLE_WINDOWS_PREFIX AND DEFINED ENV{TENSORACLE_WINDOWS_PREFIX})
    set(TENSORACLE_WINDOWS_PREFIX $ENV{TENSORACLE_WINDOWS_PREFIX})
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES TENSORACLE_WINDOWS_PREFIX)
set(CMAKE_FIND_ROOT_PATH /usr/${TENSORACLE_MINGW} ${TENSORACLE_WINDOWS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Executables carry libstdc++, libgcc and winpthread inside them, so they start without a DLL
# search path (under Wine as on Windows).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
# Windows 8 and later: the CNG, LoadLibraryExW and file-information calls the core uses.
add_compile_definitions(_WIN32_WINNT=0x0602 WINVER=0x0602 NOMINMAX WIN32_LEAN_AND_MEAN UNICODE
    _UNICODE)

find_program(TENSORACLE_WINE NAMES wine wine64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${TENSORACLE_WINE})
