// The platform this library was compiled for, spelled as identity conditions record it: "os" is
// "linux", "windows" or "darwin"; "arch" is what Python's platform.machine() says on that machine
// (x86_64, aarch64, ppc64le, riscv64, s390x), the spellings of the Python package's identity.
// An architecture not listed here is "unrecognized", which no entry records, so that such a host
// selects nothing rather than another architecture's engines. Includes nothing, so that it can be
// compiled for any target (python/tests/deploy/test_host_platform.py).
#pragma once

namespace tensoracle::deploy {

#if defined(_WIN32)
inline constexpr char const* kHostOs = "windows";
#elif defined(__APPLE__)
inline constexpr char const* kHostOs = "darwin";
#else
inline constexpr char const* kHostOs = "linux";
#endif

#if defined(__aarch64__) || defined(_M_ARM64)
inline constexpr char const* kHostArch = "aarch64";
#elif defined(__x86_64__) || defined(_M_X64)
inline constexpr char const* kHostArch = "x86_64";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
inline constexpr char const* kHostArch = "ppc64le";
#elif defined(__riscv) && defined(__riscv_xlen) && __riscv_xlen == 64
inline constexpr char const* kHostArch = "riscv64";
#elif defined(__s390x__)
inline constexpr char const* kHostArch = "s390x";
#else
inline constexpr char const* kHostArch = "unrecognized";
#endif

} // namespace tensoracle::deploy
