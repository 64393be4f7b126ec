// Files inside the cache directory are tensoracle's alone: they are opened without following a
// symbolic link, so that a link planted in the cache can neither redirect a read, a modification
// time update or a lock file outside it, nor pass another file off as a saved engine.
#pragma once

#include <filesystem>
#include <string>

namespace tensoracle {

// open(2) of `path` with O_NOFOLLOW, O_NONBLOCK (a planted FIFO does not block) and O_CLOEXEC
// added to `flags` (on Windows: CreateFileW without following a symbolic link or junction, sharing
// read, write and delete access). Returns the descriptor, or -1 with errno set (ELOOP when `path`
// is a link).
int open_cache_file(std::filesystem::path const& path, int flags, unsigned mode = 0600) noexcept;

// "'<path>' is a symbolic link; tensoracle does not follow links inside its cache directory".
std::string link_refusal(std::filesystem::path const& path);

// "'<path>' is a directory, not a saved engine file" (`directory` true), else "'<path>' is not a
// regular file (a FIFO, socket or device), not a saved engine file": why something that is not a
// regular file at an entry's name is never read as one.
std::string not_regular_refusal(std::filesystem::path const& path, bool directory);

} // namespace tensoracle
