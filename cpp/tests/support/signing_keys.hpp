// Fresh keys for the signature tests, as `openssl genpkey` writes them (PKCS#8 PEM); made per OS
// in support/posix/signing_keys.cpp (OpenSSL) and support/windows/signing_keys.cpp (libsodium).
#pragma once

#include <string>

namespace tensoracle::testing {

// A new Ed25519 private key.
std::string new_private_key_pem();
// An RSA private key (a key of another algorithm, which the signature code must refuse).
std::string new_rsa_private_key_pem();

} // namespace tensoracle::testing
