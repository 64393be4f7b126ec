// Advisory whole-file locks with flock(2); the kernel drops them when the holder dies.
#include "tensoracle/file_lock.hpp"

#include "tensoracle/errors.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <utility>

namespace tensoracle {
namespace {

// Read-only is enough for flock and lets readers lock in a cache they cannot write to.
int open_lock_file(std::filesystem::path const& lock_path) {
    int const fd = ::open(lock_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        throw_file_error("cannot open lock file", lock_path, errno);
    }
    return fd;
}

int flock_operation(LockMode mode) {
    return mode == LockMode::exclusive ? LOCK_EX : LOCK_SH;
}

} // namespace

FileLock FileLock::acquire(std::filesystem::path const& lock_path, LockMode mode) {
    int const fd = open_lock_file(lock_path);
    while (::flock(fd, flock_operation(mode)) != 0) {
        if (errno != EINTR) {
            int const error = errno;
            ::close(fd);
            throw_file_error("cannot lock", lock_path, error);
        }
    }
    return {fd, lock_path, mode};
}

std::optional<FileLock> FileLock::try_acquire(std::filesystem::path const& lock_path,
                                              LockMode mode) {
    int const fd = open_lock_file(lock_path);
    while (::flock(fd, flock_operation(mode) | LOCK_NB) != 0) {
        int const error = errno;
        if (error == EINTR) {
            continue;
        }
        ::close(fd);
        if (error == EWOULDBLOCK) {
            return std::nullopt;
        }
        throw_file_error("cannot lock", lock_path, error);
    }
    return FileLock(fd, lock_path, mode);
}

FileLock::FileLock(int fd, std::filesystem::path path, LockMode mode) noexcept
    : fd_(fd), path_(std::move(path)), mode_(mode) {}

FileLock::FileLock(FileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), mode_(other.mode_) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
    if (this != &other) {
        release();
        fd_ = std::exchange(other.fd_, -1);
        path_ = std::move(other.path_);
        mode_ = other.mode_;
    }
    return *this;
}

FileLock::~FileLock() {
    release();
}

void FileLock::release() noexcept {
    // Closing the only descriptor of the open file description drops the flock.
    if (fd_ >= 0) {
        ::close(std::exchange(fd_, -1));
    }
}

} // namespace tensoracle
