// Advisory whole-file locks (flock(2); LockFileEx on Windows); the OS drops them when the holder
// dies.
#include "io/file_lock.hpp"

#include "cache/file.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <cerrno>
#include <fcntl.h>
#include <utility>

namespace tensoracle {
namespace {

// Whether creating a missing lock file failed for want of permission or of space: a read-only
// cache (EROFS, EACCES, EPERM), or a full one (ENOSPC: no blocks or, more often, no inodes left;
// EDQUOT: the user's quota). Nothing can be saved there either, and a reader needs no lock.
bool cannot_create(int error) noexcept {
    if (error == EROFS || error == EACCES || error == EPERM || error == ENOSPC) {
        return true;
    }
#ifdef EDQUOT
    return error == EDQUOT;
#else
    return false;
#endif
}

// Read-only is enough for flock and lets readers lock in a cache they cannot write to. Returns -1
// for a shared lock whose file is missing and cannot be created (cannot_create): nobody can build
// or save there through this directory, and a reader of a complete entry needs no lock, since
// every save replaces an entry by one rename.
int open_lock_file(std::filesystem::path const& lock_path, LockMode mode) {
    int const fd = open_cache_file(lock_path, O_RDONLY | O_CREAT);
    if (fd >= 0) {
        return fd;
    }
    int const error = errno;
    if (error == ELOOP) {
        throw FileError("cannot use lock file " + link_refusal(lock_path), lock_path);
    }
    if (mode == LockMode::shared && cannot_create(error)) {
        return -1;
    }
    throw_file_error("cannot open lock file", lock_path, error);
}

} // namespace

FileLock FileLock::acquire(std::filesystem::path const& lock_path, LockMode mode) {
    int const fd = open_lock_file(lock_path, mode);
    if (fd < 0) {
        return {fd, lock_path, mode};
    }
    if (platform::lock_file(fd, mode == LockMode::exclusive, true) != 0) {
        int const error = errno;
        (void)platform::close_file(fd);
        throw_file_error("cannot lock", lock_path, error);
    }
    return {fd, lock_path, mode};
}

std::optional<FileLock> FileLock::try_acquire(std::filesystem::path const& lock_path,
                                              LockMode mode) {
    int const fd = open_lock_file(lock_path, mode);
    if (fd < 0) {
        return FileLock(fd, lock_path, mode);
    }
    if (platform::lock_file(fd, mode == LockMode::exclusive, false) != 0) {
        int const error = errno;
        (void)platform::close_file(fd);
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
    // Closing the only descriptor of the open file description drops the lock; it is released
    // first, since Windows drops the locks of a closed handle only eventually.
    if (fd_ >= 0) {
        (void)platform::unlock_file(fd_);
        (void)platform::close_file(std::exchange(fd_, -1));
    }
}

} // namespace tensoracle
