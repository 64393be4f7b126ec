// Ed25519 through libsodium (crypto_sign_*), where OpenSSL is not available (the Windows build).
// Keys are read from and written as the PEM files OpenSSL makes (PKCS#8 "PRIVATE KEY",
// SubjectPublicKeyInfo "PUBLIC KEY"), decoded here: base64, then the few DER structures of
// RFC 8410; keys of another algorithm are named by their algorithm's object identifier.
#include "remote/signature.hpp"

#include "io/hash.hpp"
#include "remote/key_file.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <sodium.h>
#include <stdexcept>
#include <vector>

namespace tensoracle {
namespace {

// A key pair as libsodium keeps it: the 64-byte secret key is the seed followed by the public key.
struct KeyPair {
    std::array<unsigned char, crypto_sign_PUBLICKEYBYTES> public_key{};
    std::array<unsigned char, crypto_sign_SECRETKEYBYTES> secret_key{};
    bool has_secret = false;
};

using Bytes = std::vector<unsigned char>;

constexpr std::array<unsigned char, 3> kEd25519Oid = {0x2b, 0x65, 0x70}; // 1.3.101.112

struct KnownAlgorithm {
    std::initializer_list<unsigned char> oid;
    char const* name;
};

// What OpenSSL would call the key, for the refusal of another algorithm's key.
char const* algorithm_name(Bytes const& oid) {
    static std::array<KnownAlgorithm, 6> const known{{
        {{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01}, "RSA"},
        {{0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a}, "RSA-PSS"},
        {{0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01}, "EC"},
        {{0x2b, 0x65, 0x6e}, "X25519"},
        {{0x2b, 0x65, 0x6f}, "X448"},
        {{0x2b, 0x65, 0x71}, "ED448"},
    }};
    for (auto const& algorithm : known) {
        if (std::equal(oid.begin(), oid.end(), algorithm.oid.begin(), algorithm.oid.end())) {
            return algorithm.name;
        }
    }
    return "another algorithm's";
}

void start_sodium() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (sodium_init() < 0) {
            throw std::runtime_error("libsodium could not initialise");
        }
    });
}

std::optional<Bytes> base64_decode(std::string_view text) {
    Bytes out;
    std::uint32_t buffer = 0;
    int bits = 0;
    bool padding = false;
    for (char const c : text) {
        int value = -1;
        if (c >= 'A' && c <= 'Z') {
            value = c - 'A';
        } else if (c >= 'a' && c <= 'z') {
            value = c - 'a' + 26;
        } else if (c >= '0' && c <= '9') {
            value = c - '0' + 52;
        } else if (c == '+') {
            value = 62;
        } else if (c == '/') {
            value = 63;
        } else if (c == '=') {
            padding = true;
            continue;
        } else if (c == '\n' || c == '\r' || c == ' ' || c == '\t') {
            continue;
        } else {
            return std::nullopt;
        }
        if (padding) {
            return std::nullopt; // data after padding
        }
        buffer = (buffer << 6U) | static_cast<std::uint32_t>(value);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(
                static_cast<unsigned char>((buffer >> static_cast<unsigned>(bits)) & 0xffU));
        }
    }
    return out;
}

std::string base64_encode(Bytes const& bytes) {
    constexpr std::string_view kAlphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    for (std::size_t i = 0; i < bytes.size(); i += 3) {
        std::uint32_t chunk = std::uint32_t{bytes[i]} << 16U;
        if (i + 1 < bytes.size()) {
            chunk |= std::uint32_t{bytes[i + 1]} << 8U;
        }
        if (i + 2 < bytes.size()) {
            chunk |= bytes[i + 2];
        }
        out.push_back(kAlphabet[(chunk >> 18U) & 63U]);
        out.push_back(kAlphabet[(chunk >> 12U) & 63U]);
        out.push_back(i + 1 < bytes.size() ? kAlphabet[(chunk >> 6U) & 63U] : '=');
        out.push_back(i + 2 < bytes.size() ? kAlphabet[chunk & 63U] : '=');
    }
    return out;
}

// One DER element: its tag and contents, read from the front of `input`.
struct Element {
    unsigned char tag = 0;
    std::span<unsigned char const> contents;
};

std::optional<Element> take(std::span<unsigned char const>& input) {
    if (input.size() < 2) {
        return std::nullopt;
    }
    Element element;
    element.tag = input[0];
    std::size_t length = input[1];
    std::size_t header = 2;
    if ((length & 0x80U) != 0) {
        std::size_t const octets = length & 0x7fU;
        if (octets == 0 || octets > 4 || input.size() < 2 + octets) {
            return std::nullopt;
        }
        length = 0;
        for (std::size_t i = 0; i < octets; ++i) {
            length = (length << 8U) | input[2 + i];
        }
        header += octets;
    }
    if (input.size() - header < length) {
        return std::nullopt;
    }
    element.contents = input.subspan(header, length);
    input = input.subspan(header + length);
    return element;
}

constexpr unsigned char kSequence = 0x30;
constexpr unsigned char kInteger = 0x02;
constexpr unsigned char kObjectIdentifier = 0x06;
constexpr unsigned char kOctetString = 0x04;
constexpr unsigned char kBitString = 0x03;

// The algorithm identifier's object identifier (SEQUENCE { OID, [parameters] }).
std::optional<Bytes> algorithm_oid(std::span<unsigned char const>& input) {
    auto const algorithm = take(input);
    if (!algorithm || algorithm->tag != kSequence) {
        return std::nullopt;
    }
    auto contents = algorithm->contents;
    auto const oid = take(contents);
    if (!oid || oid->tag != kObjectIdentifier) {
        return std::nullopt;
    }
    return Bytes(oid->contents.begin(), oid->contents.end());
}

[[noreturn]] void refuse(std::string_view origin, std::string const& what) {
    throw InvalidArgument(std::string(origin) + what);
}

KeyPair read_pem(std::string_view pem, std::string_view origin, bool private_key) {
    std::string const wanted = private_key
                                   ? "an Ed25519 private key (PEM \"PRIVATE KEY\", made with "
                                     "'openssl genpkey -algorithm ed25519')"
                                   : "an Ed25519 public key (PEM \"PUBLIC KEY\", made with "
                                     "'openssl pkey -in SIGNING-KEY -pubout')";
    std::string const label = private_key ? "PRIVATE KEY" : "PUBLIC KEY";
    std::string const begin = "-----BEGIN " + label + "-----";
    std::string const end = "-----END " + label + "-----";
    auto const first = pem.find(begin);
    auto const last = first == std::string_view::npos ? first : pem.find(end, first);
    if (first == std::string_view::npos || last == std::string_view::npos) {
        refuse(origin, " does not hold " + wanted);
    }
    auto const der = base64_decode(pem.substr(first + begin.size(), last - first - begin.size()));
    if (!der) {
        refuse(origin, " does not hold " + wanted);
    }
    std::span<unsigned char const> input(*der);
    auto const outer = take(input);
    if (!outer || outer->tag != kSequence) {
        refuse(origin, " does not hold " + wanted);
    }
    auto body = outer->contents;
    KeyPair pair;
    if (private_key) {
        // OneAsymmetricKey: version, algorithm, OCTET STRING { OCTET STRING seed }, ...
        auto const version = take(body);
        if (!version || version->tag != kInteger) {
            refuse(origin, " does not hold " + wanted);
        }
    }
    auto const oid = algorithm_oid(body);
    if (!oid) {
        refuse(origin, " does not hold " + wanted);
    }
    if (!std::equal(oid->begin(), oid->end(), kEd25519Oid.begin(), kEd25519Oid.end())) {
        refuse(origin, std::string(" holds a ") + algorithm_name(*oid) + " key, not " + wanted);
    }
    auto const key = take(body);
    if (private_key) {
        std::span<unsigned char const> wrapped =
            key && key->tag == kOctetString ? key->contents : std::span<unsigned char const>{};
        auto const seed = take(wrapped);
        if (!seed || seed->tag != kOctetString || seed->contents.size() != crypto_sign_SEEDBYTES) {
            refuse(origin, " does not hold " + wanted);
        }
        start_sodium();
        crypto_sign_seed_keypair(pair.public_key.data(), pair.secret_key.data(),
                                 seed->contents.data());
        pair.has_secret = true;
    } else {
        if (!key || key->tag != kBitString || key->contents.size() != 1 + pair.public_key.size() ||
            key->contents[0] != 0) {
            refuse(origin, " does not hold " + wanted);
        }
        std::copy(key->contents.begin() + 1, key->contents.end(), pair.public_key.begin());
    }
    return pair;
}

KeyPair const& pair_of(detail::KeyPointer const& key) {
    return *static_cast<KeyPair const*>(key.get());
}

detail::KeyPointer owned(KeyPair pair) {
    return detail::KeyPointer(new KeyPair(pair)); // NOLINT(cppcoreguidelines-owning-memory)
}

} // namespace

namespace detail {
void KeyDeleter::operator()(void* key) const noexcept {
    auto* const pair = static_cast<KeyPair*>(key);
    sodium_memzero(pair->secret_key.data(), pair->secret_key.size());
    delete pair; // NOLINT(cppcoreguidelines-owning-memory): the KeyPointer's deleter
}
} // namespace detail

SigningKey SigningKey::from_pem_file(std::filesystem::path const& path) {
    return from_pem(detail::read_key_file(path), "key file '" + path.string() + "'");
}

SigningKey SigningKey::from_pem(std::string_view pem, std::string_view origin) {
    return SigningKey(owned(read_pem(pem, origin, true)));
}

Signature SigningKey::sign(std::span<std::byte const> message) const {
    start_sodium();
    Signature signature{};
    if (crypto_sign_detached(reinterpret_cast<unsigned char*>(signature.data()), nullptr,
                             reinterpret_cast<unsigned char const*>(message.data()), message.size(),
                             pair_of(key_).secret_key.data()) != 0) {
        throw std::runtime_error("libsodium could not make an Ed25519 signature");
    }
    return signature;
}

std::string SigningKey::public_key_pem() const {
    // SubjectPublicKeyInfo { AlgorithmIdentifier { id-Ed25519 }, BIT STRING { key } }.
    Bytes der = {kSequence, 0x2a,       kSequence, 0x05, kObjectIdentifier, 0x03, 0x2b, 0x65,
                 0x70,      kBitString, 0x21,      0x00};
    auto const& key = pair_of(key_).public_key;
    der.insert(der.end(), key.begin(), key.end());
    std::string const text = base64_encode(der);
    std::string pem = "-----BEGIN PUBLIC KEY-----\n";
    for (std::size_t i = 0; i < text.size(); i += 64) {
        pem += text.substr(i, 64) + "\n";
    }
    return pem + "-----END PUBLIC KEY-----\n";
}

VerifyKey VerifyKey::from_pem_file(std::filesystem::path const& path) {
    return from_pem(detail::read_key_file(path), "key file '" + path.string() + "'");
}

VerifyKey VerifyKey::from_pem(std::string_view pem, std::string_view origin) {
    return VerifyKey(owned(read_pem(pem, origin, false)));
}

bool VerifyKey::verify(std::span<std::byte const> message, Signature const& signature) const {
    start_sodium();
    return crypto_sign_verify_detached(reinterpret_cast<unsigned char const*>(signature.data()),
                                       reinterpret_cast<unsigned char const*>(message.data()),
                                       message.size(), pair_of(key_).public_key.data()) == 0;
}

std::string VerifyKey::fingerprint() const {
    auto const& key = pair_of(key_).public_key;
    return sha256_hex(std::as_bytes(std::span(key))).substr(0, 16);
}

} // namespace tensoracle
