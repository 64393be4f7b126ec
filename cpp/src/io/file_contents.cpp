// File contents held copied (by default) or mapped; see file_contents.hpp for why.
#include "io/file_contents.hpp"

#include "io/full_read.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

namespace tensoracle {
namespace {

MappedFile map_if(Holding holding, int fd, std::filesystem::path const& path) {
    if (holding == Holding::mapped) {
        return {fd, path};
    }
    return {};
}

// Fills `buffer` from the start of `fd` in pieces, handing each piece to `observe` once it is
// whole (or at the end of the file); returns how many bytes were read.
std::size_t read_in_pieces(int fd, std::span<std::byte> buffer, std::filesystem::path const& path,
                           PieceObserver const& observe) {
    std::size_t filled = 0;
    while (filled < buffer.size()) {
        std::size_t const piece_end = std::min(buffer.size(), filled + FileContents::kPieceBytes);
        std::size_t const piece_start = filled;
        filled +=
            read_full(fd, buffer.subspan(piece_start, piece_end - piece_start), piece_start, path);
        if (observe && filled > piece_start) {
            observe(std::span<std::byte const>(buffer.data() + piece_start, filled - piece_start));
        }
        if (filled < piece_end) {
            break;
        }
    }
    return filled;
}

} // namespace

FileContents::PrivateMemory::PrivateMemory(std::size_t size, std::filesystem::path const& path)
    : address_(platform::allocate_private_memory(size)), size_(size) {
    if (address_ == nullptr) {
        throw_file_error("cannot allocate " + std::to_string(size) + " bytes to read", path, errno);
    }
}

FileContents::PrivateMemory::PrivateMemory(PrivateMemory&& other) noexcept
    : address_(std::exchange(other.address_, nullptr)), size_(std::exchange(other.size_, 0)) {}

FileContents::PrivateMemory&
FileContents::PrivateMemory::operator=(PrivateMemory&& other) noexcept {
    if (this != &other) {
        if (address_ != nullptr) {
            platform::release_private_memory(address_, size_);
        }
        address_ = std::exchange(other.address_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

FileContents::PrivateMemory::~PrivateMemory() {
    if (address_ != nullptr) {
        platform::release_private_memory(address_, size_);
    }
}

FileContents::FileContents(int fd, std::filesystem::path const& path, Holding holding)
    : holding_(holding), mapping_(map_if(holding, fd, path)) {
    if (holding == Holding::copied) {
        copy_in(fd, path, {}, std::nullopt);
    }
}

FileContents::FileContents(int fd, std::filesystem::path const& path, PieceObserver const& observe,
                           std::optional<std::uint64_t> at_most)
    : holding_(Holding::copied) {
    copy_in(fd, path, observe, at_most);
}

void FileContents::copy_in(int fd, std::filesystem::path const& path, PieceObserver const& observe,
                           std::optional<std::uint64_t> at_most) {
    auto const status = platform::status(fd);
    if (!status) {
        throw_file_error("cannot stat", path, errno);
    }
    if (status->kind != platform::FileKind::regular) {
        throw FileError("cannot read '" + path.string() + "': not a regular file", path);
    }
    std::uint64_t const measured = status->size;
    // One byte past the bound is enough to tell a file that grew.
    auto const size =
        static_cast<std::size_t>(at_most && measured > *at_most ? *at_most + 1 : measured);
    if (size == 0) {
        return;
    }
    platform::advise_sequential_reads(fd);
    copy_ = PrivateMemory(size, path);
    try {
        copy_size_ = read_in_pieces(fd, {copy_.data(), size}, path, observe);
    } catch (...) {
        if (observe) {
            observe({}); // abandoned: the pieces are released next
        }
        throw;
    }
    if (observe) {
        observe({}); // complete
    }
}

std::span<std::byte const> FileContents::bytes() const noexcept {
    if (holding_ == Holding::copied) {
        // A moved-from object keeps copy_size_ and no memory.
        return {copy_.data(), copy_.data() != nullptr ? copy_size_ : 0};
    }
    return mapping_.bytes();
}

void FileContents::advise_sequential() const noexcept {
    mapping_.advise_sequential();
}

} // namespace tensoracle
