// Private to the core: the keys an encrypted engine is made for and opened with. A recipient's
// public key (RecipientKey) is what `--encrypt-to` names; its private key (DecryptKey) is what an
// open is given. Both are X25519 keys in the PEM files OpenSSL writes:
//   openssl genpkey -algorithm x25519 -out node.key      (PKCS #8 "PRIVATE KEY")
//   openssl pkey -in node.key -pubout -out node.pub      ("PUBLIC KEY")
// Key files are read as verify keys are (remote/key_file.hpp): no symbolic link followed, no FIFO
// opened in a way that blocks, at most 64 KiB.
#pragma once

#include "encryption/primitives.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace tensoracle::encryption {

// A recipient's X25519 public key.
class RecipientKey {
public:
    static RecipientKey from_pem(std::string_view pem, std::string_view origin);
    // Throws FileError when the file cannot be read, InvalidArgument (naming the file) when it
    // holds no X25519 public key.
    static RecipientKey from_pem_file(std::filesystem::path const& path);
    static RecipientKey from_raw(Key const& raw) { return RecipientKey(raw); }

    Key const& raw() const noexcept { return raw_; }
    // The key's name in an engine header: the SHA-256 of its 32 raw bytes, 64 lowercase hex
    // digits (`openssl pkey -pubin -in node.pub -outform DER | tail -c 32 | sha256sum`).
    std::string id() const;

private:
    explicit RecipientKey(Key raw) : raw_(std::move(raw)) {}
    Key raw_;
};

// A recipient's X25519 private key (zeroed when it ends).
class DecryptKey {
public:
    static DecryptKey from_pem(std::string_view pem, std::string_view origin);
    static DecryptKey from_pem_file(std::filesystem::path const& path);
    // A fresh key pair's private key (for tests and tools).
    static DecryptKey generate();

    Key const& secret() const noexcept { return secret_; }
    RecipientKey const& recipient() const noexcept { return recipient_; }
    // Where the key came from, for messages: "key file '<path>'" or what the caller named it.
    std::string const& origin() const noexcept { return origin_; }

private:
    DecryptKey(Key const& secret, std::string origin);
    Key secret_;
    RecipientKey recipient_;
    std::string origin_;
};

} // namespace tensoracle::encryption
