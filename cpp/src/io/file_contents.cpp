// File contents held copied (by default) or mapped; see file_contents.hpp for why.
#include "tensoracle/io/file_contents.hpp"

#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
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
        while (filled < piece_end) {
            long long const count =
                platform::read_at(fd, buffer.data() + filled, piece_end - filled, filled);
            if (count < 0) {
                throw_file_error("cannot read", path, errno);
            }
            if (count == 0) {
                break; // the end of the file (it may have shrunk since it was measured)
            }
            filled += static_cast<std::size_t>(count);
        }
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

FileContents::FileContents(int fd, std::filesystem::path const& path, Holding holding)
    : holding_(holding), mapping_(map_if(holding, fd, path)) {
    if (holding == Holding::copied) {
        copy_in(fd, path, {});
    }
}

FileContents::FileContents(int fd, std::filesystem::path const& path, PieceObserver const& observe)
    : holding_(Holding::copied) {
    copy_in(fd, path, observe);
}

void FileContents::copy_in(int fd, std::filesystem::path const& path,
                           PieceObserver const& observe) {
    auto const status = platform::status(fd);
    if (!status) {
        throw_file_error("cannot stat", path, errno);
    }
    if (status->kind != platform::FileKind::regular) {
        throw FileError("cannot read '" + path.string() + "': not a regular file", path);
    }
    auto const size = static_cast<std::size_t>(status->size);
    if (size == 0) {
        return;
    }
    platform::advise_sequential_reads(fd);
    copy_ = std::make_unique_for_overwrite<std::byte[]>(size); // NOLINT(modernize-avoid-c-arrays)
    copy_size_ = read_in_pieces(fd, {copy_.get(), size}, path, observe);
}

std::span<std::byte const> FileContents::bytes() const noexcept {
    if (holding_ == Holding::copied) {
        return {copy_.get(), copy_ ? copy_size_ : 0}; // a moved-from object keeps copy_size_
    }
    return mapping_.bytes();
}

void FileContents::advise_sequential() const noexcept {
    mapping_.advise_sequential();
}

} // namespace tensoracle
