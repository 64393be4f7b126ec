// Shared helpers for raising the core's errors.
#include "tensoracle/errors.hpp"

#include "io/platform.hpp"

#include <string>

namespace tensoracle {

void throw_file_error(std::string_view what, std::filesystem::path const& path, int error_number) {
    std::string message{what};
    message += " '";
    message += path.string();
    message += "': ";
    message += platform::error_text(error_number);
    throw FileError(message, path, error_number);
}

} // namespace tensoracle
