// Ed25519 through OpenSSL's EVP interface (one-shot EVP_DigestSign/Verify, as Ed25519 requires).
#include "remote/signature.hpp"

#include "io/hash.hpp"
#include "remote/key_file.hpp"
#include "tensoracle/errors.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdexcept>
#include <vector>

namespace tensoracle {
namespace detail {
void KeyDeleter::operator()(void* key) const noexcept {
    EVP_PKEY_free(static_cast<EVP_PKEY*>(key));
}
} // namespace detail

namespace {

EVP_PKEY* raw(detail::KeyPointer const& key) {
    return static_cast<EVP_PKEY*>(key.get());
}

struct MessageDigestContext {
    EVP_MD_CTX* context = EVP_MD_CTX_new();
    MessageDigestContext() {
        if (context == nullptr) {
            throw std::runtime_error("OpenSSL could not allocate a signature context");
        }
    }
    MessageDigestContext(MessageDigestContext const&) = delete;
    MessageDigestContext& operator=(MessageDigestContext const&) = delete;
    ~MessageDigestContext() { EVP_MD_CTX_free(context); }
};

detail::KeyPointer read_pem(std::string_view pem, std::string_view origin, bool private_key) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    if (bio == nullptr) {
        throw std::runtime_error("OpenSSL could not allocate a memory buffer");
    }
    EVP_PKEY* key = private_key ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr)
                                : PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    ERR_clear_error();
    char const* wanted = private_key ? "an Ed25519 private key (PEM \"PRIVATE KEY\", made with "
                                       "'openssl genpkey -algorithm ed25519')"
                                     : "an Ed25519 public key (PEM \"PUBLIC KEY\", made with "
                                       "'openssl pkey -in SIGNING-KEY -pubout')";
    if (key == nullptr) {
        throw InvalidArgument(std::string(origin) + " does not hold " + wanted);
    }
    detail::KeyPointer owned(key);
    if (EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
        throw InvalidArgument(std::string(origin) + " holds a " + EVP_PKEY_get0_type_name(key) +
                              " key, not " + wanted);
    }
    return owned;
}

} // namespace

SigningKey SigningKey::from_pem_file(std::filesystem::path const& path) {
    return from_pem(detail::read_key_file(path), "key file '" + path.string() + "'");
}

SigningKey SigningKey::from_pem(std::string_view pem, std::string_view origin) {
    return SigningKey(read_pem(pem, origin, true));
}

Signature SigningKey::sign(std::span<std::byte const> message) const {
    MessageDigestContext md;
    Signature signature{};
    std::size_t length = signature.size();
    if (EVP_DigestSignInit(md.context, nullptr, nullptr, nullptr, raw(key_)) != 1 ||
        EVP_DigestSign(md.context, reinterpret_cast<unsigned char*>(signature.data()), &length,
                       reinterpret_cast<unsigned char const*>(message.data()),
                       message.size()) != 1 ||
        length != signature.size()) {
        ERR_clear_error();
        throw std::runtime_error("OpenSSL could not make an Ed25519 signature");
    }
    return signature;
}

std::string SigningKey::public_key_pem() const {
    BIO* bio = BIO_new(BIO_s_mem());
    if (bio == nullptr || PEM_write_bio_PUBKEY(bio, raw(key_)) != 1) {
        BIO_free(bio);
        throw std::runtime_error("OpenSSL could not write the public key");
    }
    char* data = nullptr;
    long const size = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<std::size_t>(size));
    BIO_free(bio);
    return text;
}

VerifyKey VerifyKey::from_pem_file(std::filesystem::path const& path) {
    return from_pem(detail::read_key_file(path), "key file '" + path.string() + "'");
}

VerifyKey VerifyKey::from_pem(std::string_view pem, std::string_view origin) {
    return VerifyKey(read_pem(pem, origin, false));
}

bool VerifyKey::verify(std::span<std::byte const> message, Signature const& signature) const {
    MessageDigestContext md;
    if (EVP_DigestVerifyInit(md.context, nullptr, nullptr, nullptr, raw(key_)) != 1) {
        ERR_clear_error();
        throw std::runtime_error("OpenSSL could not start an Ed25519 verification");
    }
    int const result = EVP_DigestVerify(
        md.context, reinterpret_cast<unsigned char const*>(signature.data()), signature.size(),
        reinterpret_cast<unsigned char const*>(message.data()), message.size());
    ERR_clear_error();
    return result == 1;
}

std::string VerifyKey::fingerprint() const {
    std::array<unsigned char, 32> key{};
    std::size_t length = key.size();
    if (EVP_PKEY_get_raw_public_key(raw(key_), key.data(), &length) != 1 || length != key.size()) {
        ERR_clear_error();
        throw std::runtime_error("OpenSSL could not export the raw public key");
    }
    return sha256_hex(std::as_bytes(std::span(key))).substr(0, 16);
}

} // namespace tensoracle
