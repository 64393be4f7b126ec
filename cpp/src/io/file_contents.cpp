// File contents held mapped (POSIX) or copied (Windows); see file_contents.hpp for why.
#include "tensoracle/io/file_contents.hpp"

#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/file_bytes.hpp"

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

} // namespace

Holding FileContents::system_holding() noexcept {
    return platform::mappings_block_replacement ? Holding::copied : Holding::mapped;
}

FileContents::FileContents(int fd, std::filesystem::path const& path)
    : FileContents(fd, path, system_holding()) {}

FileContents::FileContents(int fd, std::filesystem::path const& path, Holding holding)
    : holding_(holding), mapping_(map_if(holding, fd, path)) {
    if (holding != Holding::copied) {
        return;
    }
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
    // A file that shrank since it was measured holds fewer bytes: the caller's checks see them.
    copy_size_ = read_from_start(fd, {copy_.get(), size}, path);
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
