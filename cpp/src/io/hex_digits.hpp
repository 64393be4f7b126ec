// Private to the core: bytes as lowercase hexadecimal digits (digests in messages and names).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace tensoracle::detail {

inline std::string lower_hex(std::span<unsigned char const> bytes) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string hex;
    hex.reserve(bytes.size() * 2);
    for (unsigned char const b : bytes) {
        hex.push_back(kDigits[b >> 4U]);
        hex.push_back(kDigits[b & 0x0FU]);
    }
    return hex;
}

} // namespace tensoracle::detail
