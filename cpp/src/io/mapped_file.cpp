// Read-only whole-file memory maps (POSIX mmap).
#include "tensoracle/io/mapped_file.hpp"

#include "tensoracle/errors.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace tensoracle {

MappedFile::MappedFile(std::filesystem::path const& path) {
    int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw_file_error("cannot open", path, errno);
    }
    try {
        *this = MappedFile(fd, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd); // the mapping keeps the file's pages reachable on its own
}

MappedFile::MappedFile(int fd, std::filesystem::path const& path) {
    struct stat status {};
    if (::fstat(fd, &status) != 0) {
        throw_file_error("cannot stat", path, errno);
    }
    if (!S_ISREG(status.st_mode)) {
        throw FileError("cannot map '" + path.string() + "': not a regular file", path);
    }
    size_ = static_cast<std::size_t>(status.st_size);
    if (size_ == 0) {
        return; // mmap refuses empty ranges; an empty span describes the file exactly
    }
    void* const address = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (address == MAP_FAILED) {
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
            ::munmap(address_, size_);
        }
        address_ = std::exchange(other.address_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

MappedFile::~MappedFile() {
    if (address_ != nullptr) {
        ::munmap(address_, size_);
    }
}

void MappedFile::advise_sequential() const noexcept {
    if (address_ != nullptr) {
        (void)::madvise(address_, size_, MADV_SEQUENTIAL);
    }
}

std::span<std::byte const> MappedFile::bytes() const noexcept {
    if (address_ == nullptr) {
        return {};
    }
    return {static_cast<std::byte const*>(address_), size_};
}

} // namespace tensoracle
