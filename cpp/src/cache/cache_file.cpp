// Opening files of the cache directory without following links (see cache_file.hpp).
#include "tensoracle/cache/cache_file.hpp"

#include <cerrno>
#include <fcntl.h>

namespace tensoracle {

int open_cache_file(std::filesystem::path const& path, int flags, unsigned mode) noexcept {
    int fd = -1;
    do {
        fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                    static_cast<mode_t>(mode));
    } while (fd < 0 && errno == EINTR);
    return fd;
}

std::string link_refusal(std::filesystem::path const& path) {
    return "'" + path.string() +
           "' is a symbolic link; tensoracle does not follow links inside its cache directory "
           "(remove the link)";
}

} // namespace tensoracle
