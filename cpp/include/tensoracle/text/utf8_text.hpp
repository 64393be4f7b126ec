// Text that crosses into messages (and so into Python's str) from bytes we do not control.
#pragma once

#include <string>
#include <string_view>

namespace tensoracle {

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

// `text` with every byte that is not part of a well-formed UTF-8 sequence written as \xNN, so
// that the result is valid UTF-8 and shows what the bytes were.
std::string escape_invalid_utf8(std::string_view text);

} // namespace tensoracle
