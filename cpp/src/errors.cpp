// Shared helpers for raising the core's errors.
#include "tensoracle/errors.hpp"

#include "io/platform.hpp"

#include <string>

namespace tensoracle {

std::string refusal_text(std::string_view where, std::string_view found, std::string_view expected,
                         std::string_view remedy) {
    std::string message{where};
    if (!found.empty()) {
        message += ' ';
        message += found;
    }
    if (!expected.empty()) {
        message += found.empty() ? ": expected " : ", expected ";
        message += expected;
    }
    if (!remedy.empty()) {
        message += ". ";
        message += remedy;
    }
    return message;
}

std::string render(Refusal const& refusal) {
    std::string where = refusal.subject;
    if (!refusal.field.empty()) {
        where += where.empty() ? "" : ": ";
        where += refusal.field;
    }
    return refusal_text(where, refusal.observed.empty() ? "" : "is " + refusal.observed,
                        refusal.expected, refusal.remedy);
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
