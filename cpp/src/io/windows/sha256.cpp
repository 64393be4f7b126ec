// SHA-256 through Windows CNG (BCrypt), which uses the CPU's SHA instructions where it has them.
#include "io/hash.hpp"
#include "io/hex_digits.hpp"

// bcrypt.h needs the types of windows.h, which comes first.
// clang-format off
#include <windows.h>
#include <bcrypt.h>
// clang-format on

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace tensoracle {
namespace {

void check(NTSTATUS status, char const* call) {
    if (status < 0) {
        throw std::runtime_error(std::string("Windows CNG ") + call +
                                 " failed for SHA-256 (status " +
                                 std::to_string(static_cast<unsigned long>(status)) + ")");
    }
}

} // namespace

struct Sha256::State {
    BCRYPT_ALG_HANDLE algorithm = nullptr;
    BCRYPT_HASH_HANDLE hash = nullptr;
    bool finished = false;
    State() = default;
    State(State const&) = delete;
    State& operator=(State const&) = delete;
    ~State() {
        if (hash != nullptr) {
            ::BCryptDestroyHash(hash);
        }
        if (algorithm != nullptr) {
            ::BCryptCloseAlgorithmProvider(algorithm, 0);
        }
    }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    check(::BCryptOpenAlgorithmProvider(&state_->algorithm, BCRYPT_SHA256_ALGORITHM, nullptr, 0),
          "BCryptOpenAlgorithmProvider");
    // The hash object's memory is managed by CNG (Windows 7 and later).
    check(::BCryptCreateHash(state_->algorithm, &state_->hash, nullptr, 0, nullptr, 0, 0),
          "BCryptCreateHash");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<std::byte const> bytes) {
    if (!state_ || state_->finished) {
        throw std::logic_error("Sha256::update after hex_digest");
    }
    while (!bytes.empty()) {
        auto const count = std::min<std::size_t>(bytes.size(), std::size_t{1} << 30U);
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): CNG takes PUCHAR, reads only
        auto* const data = const_cast<UCHAR*>(reinterpret_cast<UCHAR const*>(bytes.data()));
        check(::BCryptHashData(state_->hash, data, static_cast<ULONG>(count), 0), "BCryptHashData");
        bytes = bytes.subspan(count);
    }
}

std::string Sha256::hex_digest() {
    if (!state_ || state_->finished) {
        throw std::logic_error("Sha256::hex_digest called twice");
    }
    std::array<unsigned char, 32> digest{};
    check(::BCryptFinishHash(state_->hash, digest.data(), static_cast<ULONG>(digest.size()), 0),
          "BCryptFinishHash");
    state_->finished = true;
    return detail::lower_hex(digest);
}

} // namespace tensoracle
