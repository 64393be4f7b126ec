// A read-only memory map of a whole file, unmapped by the destructor.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace tensoracle {

class MappedFile {
public:
    // Nothing mapped: an empty span.
    MappedFile() noexcept = default;
    // Throws FileError naming the path. An empty file maps to an empty span.
    explicit MappedFile(std::filesystem::path const& path);
    // Maps the whole file open as `fd` (which stays owned by the caller and may be closed after);
    // `path` only names the file in errors.
    MappedFile(int fd, std::filesystem::path const& path);
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(MappedFile const&) = delete;
    MappedFile& operator=(MappedFile const&) = delete;
    ~MappedFile();

    std::span<std::byte const> bytes() const noexcept;

    // Tells the kernel that the mapping is about to be read once, front to back (MADV_SEQUENTIAL):
    // more read-ahead, and pages are not marked recently used when unmapped, which makes munmap
    // of a large mapping cheaper. A hint only; errors are ignored. Pages are still faulted on
    // first touch: prefaulting (MAP_POPULATE, MADV_POPULATE_READ) was measured slower for a
    // warm 1 GiB plan, since fault-around already maps 16 pages per fault.
    void advise_sequential() const noexcept;

private:
    void* address_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace tensoracle
