// The primitives of encrypted engine files through OpenSSL 3's EVP interface (primitives.hpp).
#include "encryption/primitives.hpp"

#include "tensoracle/errors.hpp"

#include <cstring>
#include <limits>
#include <memory>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdexcept>
#include <string>

namespace tensoracle::encryption {
namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* key) const noexcept { EVP_PKEY_free(key); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
struct PkeyContextFree {
    void operator()(EVP_PKEY_CTX* context) const noexcept { EVP_PKEY_CTX_free(context); }
};
using PkeyContext = std::unique_ptr<EVP_PKEY_CTX, PkeyContextFree>;
struct CipherContextFree {
    void operator()(EVP_CIPHER_CTX* context) const noexcept { EVP_CIPHER_CTX_free(context); }
};
using CipherContext = std::unique_ptr<EVP_CIPHER_CTX, CipherContextFree>;
struct BioFree {
    void operator()(BIO* bio) const noexcept { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
struct KdfFree {
    void operator()(EVP_KDF* kdf) const noexcept { EVP_KDF_free(kdf); }
};
struct KdfContextFree {
    void operator()(EVP_KDF_CTX* context) const noexcept { EVP_KDF_CTX_free(context); }
};

[[noreturn]] void failed(char const* what) {
    throw std::runtime_error(std::string("OpenSSL could not ") + what);
}

template <std::size_t Extent>
unsigned char* raw(std::span<std::byte, Extent> bytes) noexcept {
    return reinterpret_cast<unsigned char*>(bytes.data());
}
template <std::size_t Extent>
unsigned char const* raw(std::span<std::byte const, Extent> bytes) noexcept {
    return reinterpret_cast<unsigned char const*>(bytes.data());
}

Pkey x25519_private(Key const& secret) {
    Pkey key(
        EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, nullptr, raw(secret.bytes()), kKeyBytes));
    if (!key) {
        failed("make an X25519 private key");
    }
    return key;
}

Key raw_public_of(EVP_PKEY* key) {
    Key out;
    std::size_t length = kKeyBytes;
    if (EVP_PKEY_get_raw_public_key(key, raw(out.bytes()), &length) != 1 || length != kKeyBytes) {
        failed("read an X25519 public key");
    }
    return out;
}

// A cipher context set up for AES-256-GCM with `key`, `nonce` and `aad`.
CipherContext gcm(Key const& key, Nonce const& nonce, std::string_view aad, bool encrypt) {
    CipherContext context(EVP_CIPHER_CTX_new());
    auto const init = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex;
    auto const update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate;
    int length = 0;
    if (!context ||
        init(context.get(), EVP_aes_256_gcm(), nullptr, raw(key.bytes()),
             reinterpret_cast<unsigned char const*>(nonce.data())) != 1 ||
        (!aad.empty() &&
         update(context.get(), nullptr, &length, reinterpret_cast<unsigned char const*>(aad.data()),
                static_cast<int>(aad.size())) != 1)) {
        failed("start AES-256-GCM");
    }
    return context;
}

// The bytes of `from` put through `context` into `into` (the same length), in pieces an int
// can count.
template <typename Update>
bool update_all(EVP_CIPHER_CTX* context, Update update, std::span<std::byte const> from,
                std::span<std::byte> into) {
    constexpr std::size_t kPiece = std::size_t{1} << 30U;
    for (std::size_t done = 0; done < from.size();) {
        std::size_t const piece = std::min(kPiece, from.size() - done);
        int written = 0;
        if (update(context, raw(into.subspan(done)), &written, raw(from.subspan(done)),
                   static_cast<int>(piece)) != 1 ||
            static_cast<std::size_t>(written) != piece) {
            return false;
        }
        done += piece;
    }
    return true;
}

char const* algorithm_of(EVP_PKEY* key) {
    char const* name = EVP_PKEY_get0_type_name(key);
    return name == nullptr ? "unknown" : name;
}

} // namespace

Key::~Key() {
    OPENSSL_cleanse(bytes_.data(), bytes_.size());
}

bool operator==(Key const& a, Key const& b) noexcept {
    return CRYPTO_memcmp(a.bytes_.data(), b.bytes_.data(), kKeyBytes) == 0;
}

void wipe(std::span<std::byte> bytes) noexcept {
    OPENSSL_cleanse(bytes.data(), bytes.size());
}

void random_bytes(std::span<std::byte> into) {
    if (RAND_bytes(raw(into), static_cast<int>(into.size())) != 1) {
        failed("draw random bytes");
    }
}

Key x25519_public_of(Key const& secret) {
    return raw_public_of(x25519_private(secret).get());
}

Key x25519_shared(Key const& secret, Key const& peer) {
    Pkey const mine = x25519_private(secret);
    Pkey const theirs(
        EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, raw(peer.bytes()), kKeyBytes));
    if (!theirs) {
        failed("make an X25519 public key");
    }
    PkeyContext const context(EVP_PKEY_CTX_new(mine.get(), nullptr));
    if (!context || EVP_PKEY_derive_init(context.get()) != 1 ||
        EVP_PKEY_derive_set_peer(context.get(), theirs.get()) != 1) {
        failed("start an X25519 key agreement");
    }
    Key shared;
    std::size_t length = kKeyBytes;
    // OpenSSL refuses an all-zero result (a public key of small order), as RFC 7748 allows.
    if (EVP_PKEY_derive(context.get(), raw(shared.bytes()), &length) != 1 || length != kKeyBytes) {
        throw InvalidArgument("the X25519 public key is not usable (a point of small order)");
    }
    return shared;
}

Key hkdf_sha256(std::span<std::byte const> secret, std::span<std::byte const> salt,
                std::string_view info) {
    std::unique_ptr<EVP_KDF, KdfFree> const kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
    std::unique_ptr<EVP_KDF_CTX, KdfContextFree> const context(kdf ? EVP_KDF_CTX_new(kdf.get())
                                                                   : nullptr);
    if (!context) {
        failed("start HKDF");
    }
    std::string digest = "SHA256";
    std::array<OSSL_PARAM, 5> const parameters = {
        OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, digest.data(), 0),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, const_cast<std::byte*>(secret.data()),
                                          secret.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, const_cast<std::byte*>(salt.data()),
                                          salt.size()),
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(info.data()),
                                          info.size()),
        OSSL_PARAM_construct_end(),
    };
    Key out;
    if (EVP_KDF_derive(context.get(), raw(out.bytes()), kKeyBytes, parameters.data()) != 1) {
        failed("derive a key with HKDF-SHA256");
    }
    return out;
}

void seal(Key const& key, Nonce const& nonce, std::string_view aad,
          std::span<std::byte const> plain, std::span<std::byte> sealed) {
    if (sealed.size() != plain.size() + kTagBytes) {
        throw std::logic_error("seal: the output must be the input and a tag");
    }
    CipherContext const context = gcm(key, nonce, aad, true);
    int length = 0;
    if (!update_all(context.get(), EVP_EncryptUpdate, plain, sealed.first(plain.size())) ||
        EVP_EncryptFinal_ex(context.get(), nullptr, &length) != 1 ||
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                            raw(sealed.last(kTagBytes))) != 1) {
        failed("seal with AES-256-GCM");
    }
}

bool open(Key const& key, Nonce const& nonce, std::string_view aad,
          std::span<std::byte const> sealed, std::span<std::byte> plain) {
    if (sealed.size() < kTagBytes || plain.size() != sealed.size() - kTagBytes) {
        throw std::logic_error("open: the output must be the input less its tag");
    }
    CipherContext const context = gcm(key, nonce, aad, false);
    std::array<std::byte, kTagBytes> tag{};
    std::memcpy(tag.data(), sealed.last(kTagBytes).data(), kTagBytes);
    int length = 0;
    bool const authentic =
        update_all(context.get(), EVP_DecryptUpdate, sealed.first(plain.size()), plain) &&
        EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes),
                            tag.data()) == 1 &&
        EVP_DecryptFinal_ex(context.get(), nullptr, &length) == 1;
    if (!authentic) {
        OPENSSL_cleanse(plain.data(), plain.size());
    }
    return authentic;
}

Key x25519_key_from_pem(std::string_view pem, std::string_view origin, bool private_key) {
    std::string const wanted = private_key
                                   ? "an X25519 private key (PEM \"PRIVATE KEY\", made with "
                                     "'openssl genpkey -algorithm x25519')"
                                   : "an X25519 public key (PEM \"PUBLIC KEY\", made with "
                                     "'openssl pkey -in KEY -pubout')";
    if (pem.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
        throw InvalidArgument(std::string(origin) + " does not hold " + wanted);
    }
    Bio const bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio) {
        failed("read a key");
    }
    Pkey const key(private_key ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)
                               : PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    if (!key) {
        throw InvalidArgument(std::string(origin) + " does not hold " + wanted);
    }
    if (EVP_PKEY_get_id(key.get()) != EVP_PKEY_X25519) {
        throw InvalidArgument(std::string(origin) + " holds a " + algorithm_of(key.get()) +
                              " key, not " + wanted);
    }
    Key out;
    std::size_t length = kKeyBytes;
    int const got = private_key ? EVP_PKEY_get_raw_private_key(key.get(), raw(out.bytes()), &length)
                                : EVP_PKEY_get_raw_public_key(key.get(), raw(out.bytes()), &length);
    if (got != 1 || length != kKeyBytes) {
        throw InvalidArgument(std::string(origin) + " does not hold " + wanted);
    }
    return out;
}

std::string x25519_public_pem(Key const& key) {
    Pkey const pkey(
        EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nullptr, raw(key.bytes()), kKeyBytes));
    Bio const bio(BIO_new(BIO_s_mem()));
    if (!pkey || !bio || PEM_write_bio_PUBKEY(bio.get(), pkey.get()) != 1) {
        failed("write an X25519 public key");
    }
    char* text = nullptr;
    long const length = BIO_get_mem_data(bio.get(), &text);
    return {text, static_cast<std::size_t>(length)};
}

} // namespace tensoracle::encryption
