// The primitives of encrypted engine files through libsodium, where OpenSSL is not available (the
// Windows build): the same bytes as openssl/primitives.cpp. AES-256-GCM is Windows CNG's
// (windows/aes_gcm.cpp): libsodium's needs AVX besides AES-NI. HKDF-SHA256 is RFC 5869's two
// steps over libsodium's HMAC-SHA256. Keys are read from the PEM files OpenSSL writes: base64, then
// the fixed DER of an RFC 8410 X25519 key.
#include "encryption/primitives.hpp"

#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <mutex>
#include <sodium.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensoracle::encryption {
namespace {

void start_sodium() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (sodium_init() < 0) {
            throw std::runtime_error("libsodium could not initialise");
        }
    });
}

unsigned char* raw(std::byte* bytes) noexcept {
    return reinterpret_cast<unsigned char*>(bytes);
}
unsigned char const* raw(std::byte const* bytes) noexcept {
    return reinterpret_cast<unsigned char const*>(bytes);
}

// The DER of RFC 8410 X25519 keys as OpenSSL writes them, up to the 32 key bytes.
constexpr std::array<unsigned char, 16> kPrivatePrefix = {
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20};
constexpr std::array<unsigned char, 12> kPublicPrefix = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
                                                         0x2b, 0x65, 0x6e, 0x03, 0x21, 0x00};

} // namespace

Key::~Key() {
    sodium_memzero(bytes_.data(), bytes_.size());
}

bool operator==(Key const& a, Key const& b) noexcept {
    return sodium_memcmp(a.bytes_.data(), b.bytes_.data(), kKeyBytes) == 0;
}

void wipe(std::span<std::byte> bytes) noexcept {
    sodium_memzero(bytes.data(), bytes.size());
}

void random_bytes(std::span<std::byte> into) {
    start_sodium();
    randombytes_buf(into.data(), into.size());
}

Key x25519_public_of(Key const& secret) {
    start_sodium();
    Key out;
    crypto_scalarmult_base(raw(out.bytes().data()), raw(secret.bytes().data()));
    return out;
}

Key x25519_shared(Key const& secret, Key const& peer) {
    start_sodium();
    Key shared;
    if (crypto_scalarmult(raw(shared.bytes().data()), raw(secret.bytes().data()),
                          raw(peer.bytes().data())) != 0) {
        throw InvalidArgument("the X25519 public key is not usable (a point of small order)");
    }
    return shared;
}

Key hkdf_sha256(std::span<std::byte const> secret, std::span<std::byte const> salt,
                std::string_view info) {
    start_sodium();
    // Extract: PRK = HMAC(salt, secret). Expand, one block: OKM = HMAC(PRK, info || 0x01).
    std::array<unsigned char, crypto_auth_hmacsha256_BYTES> prk{};
    crypto_auth_hmacsha256_state state;
    crypto_auth_hmacsha256_init(&state, raw(salt.data()), salt.size());
    crypto_auth_hmacsha256_update(&state, raw(secret.data()), secret.size());
    crypto_auth_hmacsha256_final(&state, prk.data());
    unsigned char const counter = 1;
    Key out;
    crypto_auth_hmacsha256_init(&state, prk.data(), prk.size());
    crypto_auth_hmacsha256_update(&state, reinterpret_cast<unsigned char const*>(info.data()),
                                  info.size());
    crypto_auth_hmacsha256_update(&state, &counter, 1);
    crypto_auth_hmacsha256_final(&state, raw(out.bytes().data()));
    sodium_memzero(prk.data(), prk.size());
    sodium_memzero(&state, sizeof state);
    return out;
}

Key x25519_key_from_pem(std::string_view pem, std::string_view origin, bool private_key) {
    std::string const wanted = private_key
                                   ? "an X25519 private key (PEM \"PRIVATE KEY\", made with "
                                     "'openssl genpkey -algorithm x25519')"
                                   : "an X25519 public key (PEM \"PUBLIC KEY\", made with "
                                     "'openssl pkey -in KEY -pubout')";
    std::string const label = private_key ? "PRIVATE KEY" : "PUBLIC KEY";
    std::string const begin = "-----BEGIN " + label + "-----";
    std::string const end = "-----END " + label + "-----";
    auto const first = pem.find(begin);
    auto const last = first == std::string_view::npos ? first : pem.find(end, first);
    auto const refuse = [&] {
        throw InvalidArgument(std::string(origin) + " does not hold " + wanted);
    };
    if (first == std::string_view::npos || last == std::string_view::npos) {
        refuse();
    }
    std::string_view const text = pem.substr(first + begin.size(), last - first - begin.size());
    start_sodium();
    std::vector<unsigned char> der(text.size());
    std::size_t length = 0;
    if (sodium_base642bin(der.data(), der.size(), text.data(), text.size(), " \t\r\n", &length,
                          nullptr, sodium_base64_VARIANT_ORIGINAL) != 0) {
        refuse();
    }
    std::span<unsigned char const> const prefix =
        private_key ? std::span<unsigned char const>(kPrivatePrefix)
                    : std::span<unsigned char const>(kPublicPrefix);
    if (length != prefix.size() + kKeyBytes ||
        !std::equal(prefix.begin(), prefix.end(), der.begin())) {
        refuse();
    }
    Key out;
    std::copy_n(der.begin() + static_cast<std::ptrdiff_t>(prefix.size()), kKeyBytes,
                raw(out.bytes().data()));
    sodium_memzero(der.data(), der.size());
    return out;
}

std::string x25519_public_pem(Key const& key) {
    start_sodium();
    std::vector<unsigned char> der(kPublicPrefix.begin(), kPublicPrefix.end());
    der.insert(der.end(), raw(key.bytes().data()), raw(key.bytes().data()) + kKeyBytes);
    std::string text(sodium_base64_encoded_len(der.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
    sodium_bin2base64(text.data(), text.size(), der.data(), der.size(),
                      sodium_base64_VARIANT_ORIGINAL);
    text.resize(text.size() - 1); // the terminating NUL
    return "-----BEGIN PUBLIC KEY-----\n" + text + "\n-----END PUBLIC KEY-----\n";
}

} // namespace tensoracle::encryption
