// Ed25519 keys, signatures and their verification (OpenSSL), for engines shared through a
// remote cache: a node signs what it publishes with its signing key, and a node holding the
// matching verify key refuses anything not signed by it.
//
// Key files are PEM as OpenSSL writes them:
//   openssl genpkey -algorithm ed25519 -out signing-key.pem        (PKCS#8 "PRIVATE KEY")
//   openssl pkey -in signing-key.pem -pubout -out verify-key.pem   ("PUBLIC KEY")
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle {

inline constexpr std::size_t kSignatureBytes = 64;
using Signature = std::array<std::byte, kSignatureBytes>;

namespace detail {
struct KeyDeleter {
    void operator()(void* key) const noexcept;
};
using KeyPointer = std::unique_ptr<void, KeyDeleter>; // an EVP_PKEY
} // namespace detail

// An Ed25519 private key.
class SigningKey {
public:
    // Reads a PEM private key. Throws FileError when the file cannot be read and InvalidArgument
    // (naming the file) when it holds no private key or one of another algorithm.
    static SigningKey from_pem_file(std::filesystem::path const& path);
    static SigningKey from_pem(std::string_view pem, std::string_view origin);

    Signature sign(std::span<std::byte const> message) const;
    // The matching public key as a PEM "PUBLIC KEY" block.
    std::string public_key_pem() const;

private:
    explicit SigningKey(detail::KeyPointer key) : key_(std::move(key)) {}
    detail::KeyPointer key_;
};

// An Ed25519 public key.
class VerifyKey {
public:
    // Reads a PEM public key ("PUBLIC KEY"); errors as SigningKey::from_pem_file.
    static VerifyKey from_pem_file(std::filesystem::path const& path);
    static VerifyKey from_pem(std::string_view pem, std::string_view origin);

    // True when `signature` is this key's signature of `message`.
    bool verify(std::span<std::byte const> message, Signature const& signature) const;
    // The first 16 hex digits of the SHA-256 of the raw 32-byte key, to tell keys apart.
    std::string fingerprint() const;

private:
    explicit VerifyKey(detail::KeyPointer key) : key_(std::move(key)) {}
    detail::KeyPointer key_;
};

} // namespace tensoracle
