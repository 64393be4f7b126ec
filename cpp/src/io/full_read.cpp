// The one read-until-full loop of the core (see full_read.hpp).
#include "io/full_read.hpp"

#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <cerrno>

namespace tensoracle {

std::size_t read_full(int fd, std::span<std::byte> into, std::uint64_t offset,
                      std::filesystem::path const& path, std::string_view failure) {
    std::size_t filled = 0;
    while (filled < into.size()) {
        long long const count =
            platform::read_at(fd, into.data() + filled, into.size() - filled, offset + filled);
        if (count < 0) {
            throw_file_error(failure, path, errno);
        }
        if (count == 0) {
            break; // the end of the file (it may have shrunk since it was measured)
        }
        filled += static_cast<std::size_t>(count);
    }
    return filled;
}

} // namespace tensoracle
