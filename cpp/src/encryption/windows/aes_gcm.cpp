// AES-256-GCM through Windows CNG (BCrypt), the Windows build's seal and open of primitives.hpp:
// the same bytes as OpenSSL's, with the CPU's AES instructions where it has them (and none
// required, unlike libsodium's AES-GCM). The rest of the Windows primitives are libsodium's
// (sodium/primitives.cpp).
#include "encryption/primitives.hpp"

// bcrypt.h needs the types of windows.h, which comes first.
// clang-format off
#include <windows.h>
#include <bcrypt.h>
// clang-format on

#include <array>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>

namespace tensoracle::encryption {
namespace {

// ntstatus.h's STATUS_AUTH_TAG_MISMATCH: the tag is not the one of these bytes under this key.
constexpr NTSTATUS kAuthTagMismatch = static_cast<NTSTATUS>(0xC000A002UL);

void check(NTSTATUS status, char const* call) {
    if (status < 0) {
        throw std::runtime_error(std::string("Windows CNG ") + call +
                                 " failed for AES-256-GCM (status " +
                                 std::to_string(static_cast<unsigned long>(status)) + ")");
    }
}

// An AES-256-GCM key of CNG's, made from `key`; both handles closed when it goes.
class GcmKey {
public:
    explicit GcmKey(Key const& key) {
        check(::BCryptOpenAlgorithmProvider(&algorithm_, BCRYPT_AES_ALGORITHM, nullptr, 0),
              "BCryptOpenAlgorithmProvider");
        std::wstring mode = BCRYPT_CHAIN_MODE_GCM; // given with its terminating NUL
        check(::BCryptSetProperty(algorithm_, BCRYPT_CHAINING_MODE,
                                  reinterpret_cast<PUCHAR>(mode.data()),
                                  static_cast<ULONG>((mode.size() + 1) * sizeof(wchar_t)), 0),
              "BCryptSetProperty");
        std::array<UCHAR, kKeyBytes> bytes{};
        std::memcpy(bytes.data(), key.bytes().data(), kKeyBytes);
        NTSTATUS const made =
            ::BCryptGenerateSymmetricKey(algorithm_, &key_, nullptr, 0, bytes.data(), kKeyBytes, 0);
        wipe(std::as_writable_bytes(std::span(bytes)));
        check(made, "BCryptGenerateSymmetricKey");
    }
    GcmKey(GcmKey const&) = delete;
    GcmKey& operator=(GcmKey const&) = delete;
    GcmKey(GcmKey&&) = delete;
    GcmKey& operator=(GcmKey&&) = delete;
    ~GcmKey() {
        if (key_ != nullptr) {
            ::BCryptDestroyKey(key_);
        }
        if (algorithm_ != nullptr) {
            ::BCryptCloseAlgorithmProvider(algorithm_, 0);
        }
    }
    BCRYPT_KEY_HANDLE get() const noexcept { return key_; }

private:
    BCRYPT_ALG_HANDLE algorithm_ = nullptr;
    BCRYPT_KEY_HANDLE key_ = nullptr;
};

// The mode information of one message: its nonce, additional data and tag.
BCRYPT_AUTHENTICATED_CIPHER_MODE_INFO mode_info(Nonce const& nonce, std::string_view aad,
                                                UCHAR* tag) {
    BCRYPT_AUTHENTICATED_CIPHER_MODE_INFO info;
    BCRYPT_INIT_AUTH_MODE_INFO(info);
    info.pbNonce = const_cast<PUCHAR>(reinterpret_cast<UCHAR const*>(nonce.data()));
    info.cbNonce = static_cast<ULONG>(nonce.size());
    info.pbAuthData = const_cast<PUCHAR>(reinterpret_cast<UCHAR const*>(aad.data()));
    info.cbAuthData = static_cast<ULONG>(aad.size());
    info.pbTag = tag;
    info.cbTag = static_cast<ULONG>(kTagBytes);
    return info;
}

ULONG length_of(std::size_t size) {
    if (size > std::numeric_limits<ULONG>::max()) {
        throw std::length_error("AES-256-GCM: a message over 4 GiB");
    }
    return static_cast<ULONG>(size);
}

} // namespace

void seal(Key const& key, Nonce const& nonce, std::string_view aad,
          std::span<std::byte const> plain, std::span<std::byte> sealed) {
    if (sealed.size() != plain.size() + kTagBytes) {
        throw std::logic_error("seal: the output must be the input and a tag");
    }
    GcmKey const gcm(key);
    auto* const tag = reinterpret_cast<UCHAR*>(sealed.data() + plain.size());
    BCRYPT_AUTHENTICATED_CIPHER_MODE_INFO info = mode_info(nonce, aad, tag);
    ULONG written = 0;
    check(::BCryptEncrypt(
              gcm.get(), const_cast<PUCHAR>(reinterpret_cast<UCHAR const*>(plain.data())),
              length_of(plain.size()), &info, nullptr, 0, reinterpret_cast<PUCHAR>(sealed.data()),
              length_of(plain.size()), &written, 0),
          "BCryptEncrypt");
}

bool open(Key const& key, Nonce const& nonce, std::string_view aad,
          std::span<std::byte const> sealed, std::span<std::byte> plain) {
    if (sealed.size() < kTagBytes || plain.size() != sealed.size() - kTagBytes) {
        throw std::logic_error("open: the output must be the input less its tag");
    }
    GcmKey const gcm(key);
    std::array<UCHAR, kTagBytes> tag{};
    std::memcpy(tag.data(), sealed.data() + plain.size(), kTagBytes);
    BCRYPT_AUTHENTICATED_CIPHER_MODE_INFO info = mode_info(nonce, aad, tag.data());
    ULONG written = 0;
    NTSTATUS const status = ::BCryptDecrypt(
        gcm.get(), const_cast<PUCHAR>(reinterpret_cast<UCHAR const*>(sealed.data())),
        length_of(plain.size()), &info, nullptr, 0, reinterpret_cast<PUCHAR>(plain.data()),
        length_of(plain.size()), &written, 0);
    if (status == kAuthTagMismatch) {
        wipe(plain);
        return false;
    }
    check(status, "BCryptDecrypt");
    return true;
}

} // namespace tensoracle::encryption
