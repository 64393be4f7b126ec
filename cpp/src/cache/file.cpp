// Opening files of the cache directory without following links (see cache/file.hpp).
#include "cache/file.hpp"

#include "io/platform.hpp"

namespace tensoracle {

int open_cache_file(std::filesystem::path const& path, int flags, unsigned mode) noexcept {
    return platform::open_file(path, flags, mode, platform::Follow::no_links);
}

// Appended to a string that starts with the quote, not prepended ("'" + path.string() + ...):
// GCC 12 at -O3 reports a false -Wrestrict overlap in the prepending operator+ (GCC bug 105329).
std::string link_refusal(std::filesystem::path const& path) {
    std::string text = "'";
    text += path.string();
    text += "' is a symbolic link; tensoracle does not follow links inside its cache directory "
            "(remove the link)";
    return text;
}

std::string not_regular_refusal(std::filesystem::path const& path, bool directory) {
    std::string text = "'";
    text += path.string();
    text += directory ? "' is a directory, not a saved engine file"
                      : "' is not a regular file (a FIFO, socket or device), not a saved engine "
                        "file";
    text += " (remove it)";
    return text;
}

} // namespace tensoracle
