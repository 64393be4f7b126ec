// Private to the core: the cryptographic primitives that encrypted engine files (format 3,
// engine_encryption.hpp) are made of, each from a well-kept library: OpenSSL's EVP interface in
// the Linux build (openssl/primitives.cpp), libsodium in the Windows build
// (sodium/primitives.cpp). Both make and read the same bytes.
//   - X25519 (RFC 7748): key agreement with a recipient's public key;
//   - HKDF-SHA256 (RFC 5869): the key that wraps a data key, from the agreed secret;
//   - AES-256-GCM (NIST SP 800-38D): sealing plan chunks and wrapped keys, 16-byte tags;
//   - the operating system's random numbers, through the library's generator.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle::encryption {

inline constexpr std::size_t kKeyBytes = 32;
inline constexpr std::size_t kNonceBytes = 12;
inline constexpr std::size_t kTagBytes = 16;

// A 32-byte key: an X25519 private or public key, an AES-256 key. Zeroed when it ends.
class Key {
public:
    Key() = default;
    Key(Key const&) = default;
    Key& operator=(Key const&) = default;
    Key(Key&&) = default;
    Key& operator=(Key&&) = default;
    ~Key();

    std::span<std::byte, kKeyBytes> bytes() noexcept { return bytes_; }
    std::span<std::byte const, kKeyBytes> bytes() const noexcept { return bytes_; }
    friend bool operator==(Key const& a, Key const& b) noexcept;

private:
    std::array<std::byte, kKeyBytes> bytes_{};
};

using Nonce = std::array<std::byte, kNonceBytes>;

// Zeroes `bytes` in a way the compiler does not remove.
void wipe(std::span<std::byte> bytes) noexcept;

// Fills `into` with random bytes from the operating system's generator.
void random_bytes(std::span<std::byte> into);

// The X25519 public key of the private key `secret`.
Key x25519_public_of(Key const& secret);
// The X25519 shared secret of `secret` and the peer's public key `peer`. Throws InvalidArgument
// when `peer` is a key of small order (the secret would be all zeros).
Key x25519_shared(Key const& secret, Key const& peer);

// HKDF-SHA256 (extract then expand) of `secret` with `salt` and `info`: 32 bytes.
Key hkdf_sha256(std::span<std::byte const> secret, std::span<std::byte const> salt,
                std::string_view info);

// AES-256-GCM: `plain` sealed into `sealed` (plain.size() + kTagBytes bytes: the ciphertext, then
// the tag). `plain` and the ciphertext part of `sealed` may be the same bytes.
void seal(Key const& key, Nonce const& nonce, std::string_view aad,
          std::span<std::byte const> plain, std::span<std::byte> sealed);
// The reverse: `sealed` (ciphertext then tag) opened into `plain` (sealed.size() - kTagBytes
// bytes), true when the tag is the one of these bytes under this key, nonce and aad. When it is
// not, `plain` is zeroed and false returned: no byte of a forged message is left behind.
[[nodiscard]] bool open(Key const& key, Nonce const& nonce, std::string_view aad,
                        std::span<std::byte const> sealed, std::span<std::byte> plain);

// The raw 32-byte X25519 key a PEM text holds: a "PRIVATE KEY" (PKCS #8, as
// `openssl genpkey -algorithm x25519` writes it) when `private_key`, else a "PUBLIC KEY"
// (`openssl pkey -in KEY -pubout`). Throws InvalidArgument naming `origin` when the text holds
// no such key, or a key of another algorithm (named).
Key x25519_key_from_pem(std::string_view pem, std::string_view origin, bool private_key);
// The PEM "PUBLIC KEY" text of the raw X25519 public key `key`.
std::string x25519_public_pem(Key const& key);

} // namespace tensoracle::encryption
