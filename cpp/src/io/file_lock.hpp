// Cross-process advisory locks on a lock file (flock; LockFileEx over the whole file on Windows);
// released by the destructor and by the OS when the holding process dies.
#pragma once

#include <filesystem>
#include <optional>

namespace tensoracle {

enum class LockMode { shared, exclusive };

class FileLock {
public:
    // Blocks until the lock is granted. Creates the lock file (mode 0600) if missing, never
    // through a symbolic link (FileError names a link found there). A SHARED lock whose file is
    // missing and cannot be created (a read-only cache: EROFS, EACCES, EPERM; a full one: ENOSPC,
    // EDQUOT) is returned unheld (held() is false): reading complete entries needs no lock there,
    // and nothing can be saved.
    static FileLock acquire(std::filesystem::path const& lock_path, LockMode mode);
    // Returns nullopt at once when another holder conflicts.
    static std::optional<FileLock> try_acquire(std::filesystem::path const& lock_path,
                                               LockMode mode);

    FileLock(FileLock&& other) noexcept;
    FileLock& operator=(FileLock&& other) noexcept;
    FileLock(FileLock const&) = delete;
    FileLock& operator=(FileLock const&) = delete;
    ~FileLock();

    std::filesystem::path const& path() const noexcept { return path_; }
    LockMode mode() const noexcept { return mode_; }
    // False once released (or moved from).
    bool held() const noexcept { return fd_ >= 0; }
    void release() noexcept;

private:
    FileLock(int fd, std::filesystem::path path, LockMode mode) noexcept;
    int fd_ = -1;
    std::filesystem::path path_;
    LockMode mode_ = LockMode::shared;
};

} // namespace tensoracle
