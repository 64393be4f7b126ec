// Private to the core: bytes as lowercase hexadecimal digits (digests in messages and names).
#pragma once

#include <cstddef>
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

// The bytes whose lower_hex is `hex`, into `into`: `hex` holds 2 * into.size() lowercase digits
// (a manifest's signature, its form checked when the manifest was read).
inline void from_lower_hex(std::string_view hex, std::span<std::byte> into) {
    auto digit = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (std::size_t i = 0; i < into.size(); ++i) {
        into[i] = static_cast<std::byte>((digit(hex[2 * i]) << 4U) | digit(hex[2 * i + 1]));
    }
}

} // namespace tensoracle::detail
