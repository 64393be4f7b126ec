// Modification times of test files on Windows (see cache_test_support.hpp): FILETIME counts
// 100 ns steps since 1601-01-01.
#include "support/cache_test_support.hpp"

#include <windows.h>

namespace tensoracle::testing {
namespace {

constexpr std::int64_t kEpochDifference = 116'444'736'000'000'000;

HANDLE open_attributes(std::filesystem::path const& path, DWORD access) {
    HANDLE handle = ::CreateFileW(
        path.c_str(), access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
        OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
    if (handle == INVALID_HANDLE_VALUE) {
        throw std::runtime_error("cannot open " + path.string() + " for its times");
    }
    return handle;
}

} // namespace

void set_mtime(std::filesystem::path const& path, std::int64_t nanoseconds) {
    auto const ticks = static_cast<std::uint64_t>(nanoseconds / 100 + kEpochDifference);
    FILETIME time{};
    time.dwLowDateTime = static_cast<DWORD>(ticks & 0xffffffffU);
    time.dwHighDateTime = static_cast<DWORD>(ticks >> 32U);
    HANDLE handle = open_attributes(path, FILE_WRITE_ATTRIBUTES);
    BOOL const done = ::SetFileTime(handle, nullptr, nullptr, &time);
    ::CloseHandle(handle);
    if (done == 0) {
        throw std::runtime_error("SetFileTime failed for " + path.string());
    }
}

std::int64_t mtime_ns(std::filesystem::path const& path) {
    HANDLE handle = open_attributes(path, FILE_READ_ATTRIBUTES);
    FILETIME time{};
    BOOL const done = ::GetFileTime(handle, nullptr, nullptr, &time);
    ::CloseHandle(handle);
    if (done == 0) {
        throw std::runtime_error("GetFileTime failed for " + path.string());
    }
    auto const ticks =
        static_cast<std::int64_t>((std::uint64_t{time.dwHighDateTime} << 32U) | time.dwLowDateTime);
    return (ticks - kEpochDifference) * 100;
}

} // namespace tensoracle::testing
