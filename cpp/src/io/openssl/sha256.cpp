// SHA-256 through OpenSSL's EVP interface.
//
// OpenSSL is the well-kept choice here: it is audited, packaged by every distribution, and picks
// the CPU's SHA instructions (SHA-NI, ARMv8 SHA) at run time, so hashing multi-GiB plans and
// weight files runs at memory-bandwidth-like speed without code of our own.
#include "io/hash.hpp"
#include "io/hex_digits.hpp"

#include <array>
#include <openssl/evp.h>
#include <stdexcept>

namespace tensoracle {

struct Sha256::State {
    EVP_MD_CTX* context = nullptr;
    bool finished = false;
    ~State() { EVP_MD_CTX_free(context); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
    state_->context = EVP_MD_CTX_new();
    if (state_->context == nullptr ||
        EVP_DigestInit_ex(state_->context, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("OpenSSL could not initialise a SHA-256 context");
    }
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<std::byte const> bytes) {
    if (!state_ || state_->finished) {
        throw std::logic_error("Sha256::update after hex_digest");
    }
    if (!bytes.empty() && EVP_DigestUpdate(state_->context, bytes.data(), bytes.size()) != 1) {
        throw std::runtime_error("OpenSSL SHA-256 update failed");
    }
}

std::string Sha256::hex_digest() {
    if (!state_ || state_->finished) {
        throw std::logic_error("Sha256::hex_digest called twice");
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(state_->context, digest.data(), &length) != 1 || length != 32) {
        throw std::runtime_error("OpenSSL SHA-256 finalisation failed");
    }
    state_->finished = true;
    return detail::lower_hex(std::span(digest.data(), length));
}

} // namespace tensoracle
