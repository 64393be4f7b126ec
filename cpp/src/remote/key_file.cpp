// Bounded reads of key files (see key_file.hpp).
#include "remote/key_file.hpp"

#include "io/file_bytes.hpp"
#include "tensoracle/errors.hpp"

#include <cerrno>
#include <optional>
#include <vector>

namespace tensoracle::detail {

std::string read_key_file(std::filesystem::path const& path) {
    std::optional<std::vector<char>> bytes;
    try {
        bytes = read_file_bytes(path, kMaxKeyFileBytes, Links::refuse);
    } catch (FileError const& error) {
        if (error.error_number() == ELOOP) {
            throw FileError("key file '" + path.string() +
                                "' is a symbolic link; name the key file itself",
                            path, ELOOP);
        }
        throw FileError(std::string("key file: ") + error.what(), path, error.error_number());
    }
    if (!bytes) {
        throw InvalidArgument("key file '" + path.string() + "' holds more than " +
                              std::to_string(kMaxKeyFileBytes) + " bytes: it is not a PEM key");
    }
    return {bytes->begin(), bytes->end()};
}

} // namespace tensoracle::detail
