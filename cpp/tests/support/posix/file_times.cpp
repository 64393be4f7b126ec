// Modification times of test files on POSIX systems (see cache_test_support.hpp).
#include "support/cache_test_support.hpp"

#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>

namespace tensoracle::testing {

void set_mtime(std::filesystem::path const& path, std::int64_t nanoseconds) {
    timespec times[2];
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_OMIT;
    times[1].tv_sec = static_cast<time_t>(nanoseconds / 1'000'000'000);
    times[1].tv_nsec = static_cast<long>(nanoseconds % 1'000'000'000);
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
        throw std::runtime_error("utimensat failed for " + path.string());
    }
}

std::int64_t mtime_ns(std::filesystem::path const& path) {
    struct stat status {};
    if (::lstat(path.c_str(), &status) != 0) {
        throw std::runtime_error("lstat failed for " + path.string());
    }
    return static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 +
           static_cast<std::int64_t>(status.st_mtim.tv_nsec);
}

} // namespace tensoracle::testing
