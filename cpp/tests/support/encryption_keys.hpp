// X25519 key pairs for the encryption tests, as the PEM files OpenSSL writes (RFC 8410's DER of a
// private key: its fixed prefix and the 32 key bytes, in base64).
#pragma once

#include "encryption/recipient_key.hpp"
#include "text/base64.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tensoracle::testing {

inline std::string x25519_private_pem(encryption::Key const& secret) {
    constexpr std::array<unsigned char, 16> kPrefix = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30,
                                                       0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e,
                                                       0x04, 0x22, 0x04, 0x20};
    std::vector<std::byte> der;
    for (unsigned char const b : kPrefix) {
        der.push_back(static_cast<std::byte>(b));
    }
    der.insert(der.end(), secret.bytes().begin(), secret.bytes().end());
    return "-----BEGIN PRIVATE KEY-----\n" + base64_encode(der) + "\n-----END PRIVATE KEY-----\n";
}

// A fresh key pair, with its PEM files written into `folder` as <name>.key and <name>.pub.
struct KeyPair {
    encryption::DecryptKey key = encryption::DecryptKey::generate();
    std::filesystem::path private_file;
    std::filesystem::path public_file;

    KeyPair(std::filesystem::path const& folder, std::string const& name)
        : private_file(folder / (name + ".key")), public_file(folder / (name + ".pub")) {
        std::ofstream(private_file) << x25519_private_pem(key.secret());
        std::ofstream(public_file) << encryption::x25519_public_pem(key.recipient().raw());
    }
    std::string private_pem() const { return x25519_private_pem(key.secret()); }
};

} // namespace tensoracle::testing
