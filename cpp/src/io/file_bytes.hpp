// Whole-file reads with a size limit, for files whose writer we do not control (bundle
// manifests, cubins, plugin libraries): the size is checked before anything is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace tensoracle {

// Fills `buffer` from the start of the open file `fd` (pread, offset 0), stopping early at the
// end of the file; returns how many bytes were read. Throws FileError naming `path`.
std::size_t read_from_start(int fd, std::span<std::byte> buffer, std::filesystem::path const& path);

// Reads the first `size` bytes of the open file `fd` (the size the caller measured: a file that
// grows meanwhile is read no further), or fewer where it ends sooner (it shrank meanwhile), one
// piece of buffer.size() bytes after the other (the last may be shorter), each read into `buffer`
// over the one before: the memory a read of any size takes is the buffer's (the system is told
// the file is read once in order, so that it reads ahead). `take` is called with each piece once
// it is read whole, or at the end of the file; the piece is valid until it returns. Returns how
// many bytes were read. Throws InvalidArgument for an empty buffer and a size above 0, FileError
// naming `path` for a failed read, and what `take` throws.
std::uint64_t read_piece_by_piece(int fd, std::uint64_t size, std::span<std::byte> buffer,
                                  std::filesystem::path const& path,
                                  std::function<void(std::span<std::byte const>)> const& take);

enum class Links { follow, refuse };

// The bytes of the regular file at `path`, or std::nullopt when it holds more than `max_bytes`.
// With Links::refuse a symbolic link at `path` is not followed (a file of the cache directory,
// see cache/file.hpp). Throws FileError naming the path when it cannot be opened or read.
std::optional<std::vector<char>> read_file_bytes(std::filesystem::path const& path,
                                                 std::uint64_t max_bytes,
                                                 Links links = Links::follow);

// Whether `path`, with every symbolic link resolved, lies inside `directory` (also resolved).
bool resolves_inside(std::filesystem::path const& path, std::filesystem::path const& directory);

} // namespace tensoracle
