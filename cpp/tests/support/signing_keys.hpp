// Fresh keys for the signature tests, as `openssl genpkey` writes them (PKCS#8 PEM); made per OS
// in support/posix/signing_keys.cpp (OpenSSL) and support/windows/signing_keys.cpp (libsodium).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle::testing {

// A new Ed25519 private key.
std::string new_private_key_pem();
// An RSA private key (a key of another algorithm, which the signature code must refuse).
std::string new_rsa_private_key_pem();

// Bytes as lowercase hex digits: a signature as the deployment manifest records it.
inline std::string hex_digits(std::span<std::byte const> bytes) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string text;
    for (std::byte const value : bytes) {
        auto const bits = std::to_integer<unsigned>(value);
        text += kDigits[bits >> 4U];
        text += kDigits[bits & 15U];
    }
    return text;
}

} // namespace tensoracle::testing
