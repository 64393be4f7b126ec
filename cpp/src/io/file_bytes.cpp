// Size-checked whole-file reads through one descriptor (the size and the bytes are the same
// file's even when the path is replaced meanwhile).
#include "io/file_bytes.hpp"

#include "cache/file.hpp"
#include "io/full_read.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <string>

namespace tensoracle {

std::size_t read_from_start(int fd, std::span<std::byte> buffer,
                            std::filesystem::path const& path) {
    return read_full(fd, buffer, 0, path);
}

std::uint64_t read_piece_by_piece(int fd, std::uint64_t size, std::span<std::byte> buffer,
                                  std::filesystem::path const& path,
                                  std::function<void(std::span<std::byte const>)> const& take) {
    if (buffer.empty() && size > 0) {
        throw InvalidArgument("read_piece_by_piece: an empty buffer for " + std::to_string(size) +
                              " bytes of '" + path.string() + "'");
    }
    platform::advise_sequential_reads(fd); // read once, in order: read ahead
    std::uint64_t done = 0;
    while (done < size) {
        auto const wanted =
            static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - done));
        std::size_t const filled = read_full(fd, buffer.first(wanted), done, path);
        if (filled > 0) {
            take(buffer.first(filled));
        }
        done += filled;
        if (filled < wanted) {
            break;
        }
    }
    return done;
}

std::optional<std::vector<char>> read_file_bytes(std::filesystem::path const& path,
                                                 std::uint64_t max_bytes, Links links) {
    platform::Descriptor const file{
        links == Links::refuse ? open_cache_file(path, O_RDONLY)
                               : platform::open_file(path, O_RDONLY, 0, platform::Follow::links)};
    int const fd = file.get();
    if (fd < 0) {
        throw_file_error("cannot open", path, errno);
    }
    auto const status = platform::status(fd);
    if (!status) {
        throw_file_error("cannot stat", path, errno);
    }
    if (status->kind != platform::FileKind::regular) {
        throw FileError("'" + path.string() + "' is not a regular file", path);
    }
    auto const size = status->size;
    if (size > max_bytes) {
        return std::nullopt;
    }
    // One byte more than the size, to see a file that grew after fstat.
    std::vector<char> bytes(static_cast<std::size_t>(size) + 1);
    std::size_t const filled = read_from_start(fd, std::as_writable_bytes(std::span(bytes)), path);
    if (filled > max_bytes) {
        return std::nullopt;
    }
    bytes.resize(filled);
    return bytes;
}

bool resolves_inside(std::filesystem::path const& path, std::filesystem::path const& directory) {
    std::error_code error;
    auto const target = std::filesystem::weakly_canonical(path, error);
    if (error) {
        return false;
    }
    auto const root = std::filesystem::weakly_canonical(directory, error);
    if (error) {
        return false;
    }
    auto const [root_end, target_at] =
        std::mismatch(root.begin(), root.end(), target.begin(), target.end());
    return root_end == root.end() && target_at != target.end();
}

} // namespace tensoracle
