// Whole-file reads with a size limit, for files whose writer we do not control (bundle
// manifests, cubins, plugin libraries): the size is checked before anything is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace tensoracle {

enum class Links { follow, refuse };

// The bytes of the regular file at `path`, or std::nullopt when it holds more than `max_bytes`.
// With Links::refuse a symbolic link at `path` is not followed (a file of the cache directory,
// see cache_file.hpp). Throws FileError naming the path when it cannot be opened or read.
std::optional<std::vector<char>> read_file_bytes(std::filesystem::path const& path,
                                                 std::uint64_t max_bytes,
                                                 Links links = Links::follow);

// Whether `path`, with every symbolic link resolved, lies inside `directory` (also resolved).
bool resolves_inside(std::filesystem::path const& path, std::filesystem::path const& directory);

} // namespace tensoracle
