// Shared helpers for raising the core's errors.
#include "tensoracle/errors.hpp"

#include "io/platform.hpp"

#include <string>

namespace tensoracle {

std::string render(Refusal const& refusal) {
    std::string message = refusal.subject;
    auto const part = [&message](std::string_view separator, std::string_view text) {
        if (text.empty()) {
            return;
        }
        if (!message.empty()) {
            message += separator;
        }
        message += text;
    };
    part(": ", refusal.field);
    if (!refusal.observed.empty()) {
        part(": ", "observed " + refusal.observed);
    }
    if (!refusal.expected.empty()) {
        part(refusal.observed.empty() ? ": " : ", ", "expected " + refusal.expected);
    }
    part(". ", refusal.remedy);
    return message;
}

void throw_file_error(std::string_view what, std::filesystem::path const& path, int error_number) {
    std::string message{what};
    message += " '";
    message += path.string();
    message += "': ";
    message += platform::error_text(error_number);
    throw FileError(message, path, error_number);
}

} // namespace tensoracle
