// A read-only memory map of a whole file, unmapped by the destructor.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace tensoracle {

class MappedFile {
public:
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

private:
    void* address_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace tensoracle
