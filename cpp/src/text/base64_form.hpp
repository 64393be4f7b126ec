// The form a base64 text must have before either codec decodes it (base64.hpp): what both
// implementations share, so that they accept exactly the same texts.
#pragma once

#include <cstddef>
#include <string_view>

namespace tensoracle::detail {

// How many '=' end `text` (0, 1 or 2), or -1 when `text` is not canonical base64 by its form:
// its length a multiple of 4, the standard alphabet, padding only at its end.
inline int base64_padding(std::string_view text) noexcept {
    if (text.size() % 4 != 0) {
        return -1;
    }
    std::size_t const padding = text.ends_with("==") ? 2 : (text.ends_with('=') ? 1 : 0);
    for (std::size_t i = 0; i + padding < text.size(); ++i) {
        char const c = text[i];
        bool const letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '+' || c == '/';
        if (!letter) {
            return -1;
        }
    }
    return static_cast<int>(padding);
}

} // namespace tensoracle::detail
