// The whole contents of a file as read, held in a way that leaves the file free to be replaced or
// removed by anyone while they are in use.
//
// On POSIX a read-only mapping does that: renaming a new file over the name, or removing it,
// leaves the mapped pages of the old file in place. On Windows a mapped view keeps the file from
// being replaced or removed until it is unmapped, so the contents are copied into memory there,
// and the file is closed by its owner once they are read: another process using an engine read
// from the cache never blocks a rebuild that replaces it.
#pragma once

#include "tensoracle/io/mapped_file.hpp"

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

namespace tensoracle {

enum class Holding {
    mapped, // a read-only mapping (zero-copy)
    copied, // a copy in memory, read front to back
};

class FileContents {
public:
    // How this system holds contents: mapped on POSIX, copied on Windows.
    static Holding system_holding() noexcept;

    // The whole regular file open as `fd` (owned by the caller, which may close it after);
    // `path` only names the file in errors. Throws FileError naming the path. An empty file
    // gives an empty span.
    FileContents(int fd, std::filesystem::path const& path);
    FileContents(int fd, std::filesystem::path const& path, Holding holding);

    std::span<std::byte const> bytes() const noexcept;
    Holding holding() const noexcept { return holding_; }

    // A read-once-in-order hint for a mapping (MappedFile::advise_sequential); a copy was read in
    // order already, and this does nothing.
    void advise_sequential() const noexcept;

private:
    Holding holding_;
    MappedFile mapping_;
    // Left uninitialized for the read to fill (a std::vector would write zeros over it first).
    std::unique_ptr<std::byte[]> copy_; // NOLINT(modernize-avoid-c-arrays)
    std::size_t copy_size_ = 0;
};

} // namespace tensoracle
