// Opening files of the cache directory without following links (see cache_file.hpp).
#include "tensoracle/cache/cache_file.hpp"

#include "io/platform.hpp"

namespace tensoracle {

int open_cache_file(std::filesystem::path const& path, int flags, unsigned mode) noexcept {
    return platform::open_file(path, flags, mode, platform::Follow::no_links);
}

std::string link_refusal(std::filesystem::path const& path) {
    return "'" + path.string() +
           "' is a symbolic link; tensoracle does not follow links inside its cache directory "
           "(remove the link)";
}

std::string not_regular_refusal(std::filesystem::path const& path, bool directory) {
    return "'" + path.string() +
           (directory ? "' is a directory, not a saved engine file"
                      : "' is not a regular file (a FIFO, socket or device), not a saved engine "
                        "file") +
           " (remove it)";
}

} // namespace tensoracle
