// Read-only whole-file memory maps (mmap; CreateFileMappingW and MapViewOfFile on Windows).
#include "io/mapped_file.hpp"

#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <cerrno>
#include <fcntl.h>
#include <utility>

namespace tensoracle {

MappedFile::MappedFile(std::filesystem::path const& path) {
    platform::Descriptor const file{
        platform::open_file(path, O_RDONLY, 0, platform::Follow::links)};
    if (!file.valid()) {
        throw_file_error("cannot open", path, errno);
    }
    *this = MappedFile(file.get(), path); // the mapping keeps the file's pages reachable on its own
}

MappedFile::MappedFile(int fd, std::filesystem::path const& path) {
    auto const status = platform::status(fd);
    if (!status) {
        throw_file_error("cannot stat", path, errno);
    }
    if (status->kind != platform::FileKind::regular) {
        throw FileError("cannot map '" + path.string() + "': not a regular file", path);
    }
    size_ = static_cast<std::size_t>(status->size);
    if (size_ == 0) {
        return; // mmap refuses empty ranges; an empty span describes the file exactly
    }
    void* const address = platform::map_file(fd, size_);
    if (address == nullptr) {
        int const error = errno;
        size_ = 0;
        throw_file_error("cannot map", path, error);
    }
    address_ = address;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        if (address_ != nullptr) {
            platform::unmap_file(address_, size_);
        }
        address_ = std::exchange(other.address_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

MappedFile::~MappedFile() {
    if (address_ != nullptr) {
        platform::unmap_file(address_, size_);
    }
}

void MappedFile::advise_sequential() const noexcept {
    if (address_ != nullptr) {
        platform::advise_sequential(address_, size_);
    }
}

std::span<std::byte const> MappedFile::bytes() const noexcept {
    if (address_ == nullptr) {
        return {};
    }
    return {static_cast<std::byte const*>(address_), size_};
}

} // namespace tensoracle
