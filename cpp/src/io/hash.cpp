// SHA-256 through OpenSSL's EVP interface.
//
// OpenSSL is the well-kept choice here: it is audited, packaged by every distribution, and picks
// the CPU's SHA instructions (SHA-NI, ARMv8 SHA) at run time, so hashing multi-GiB plans and
// weight files runs at memory-bandwidth-like speed without code of our own.
#include "tensoracle/io/hash.hpp"

#include "tensoracle/errors.hpp"

#include <array>
#include <cerrno>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdexcept>
#include <unistd.h>
#include <vector>

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

void Sha256::update(std::string_view text) {
    update(std::as_bytes(std::span(text)));
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
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string hex;
    hex.reserve(64);
    for (unsigned int i = 0; i < length; ++i) {
        hex.push_back(kDigits[digest[i] >> 4U]);
        hex.push_back(kDigits[digest[i] & 0x0FU]);
    }
    return hex;
}

std::string sha256_hex(std::span<std::byte const> bytes) {
    Sha256 hash;
    hash.update(bytes);
    return hash.hex_digest();
}

std::string sha256_hex(std::string_view text) {
    return sha256_hex(std::as_bytes(std::span(text)));
}

std::string sha256_file_hex(std::filesystem::path const& path) {
    int const fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        throw_file_error("cannot open", path, errno);
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    // Large reads keep the syscall count low; the buffer stays cache-friendly enough for SHA-NI.
    std::vector<std::byte> buffer(std::size_t{4} << 20);
    Sha256 hash;
    for (;;) {
        ssize_t const count = ::read(fd, buffer.data(), buffer.size());
        if (count < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw_file_error("cannot read", path, errno);
        }
        if (count == 0) {
            break;
        }
        hash.update(std::span(buffer.data(), static_cast<std::size_t>(count)));
    }
    return hash.hex_digest();
}

bool is_sha256_hex(std::string_view text) noexcept {
    if (text.size() != 64) {
        return false;
    }
    for (char const c : text) {
        bool const digit = c >= '0' && c <= '9';
        bool const lower = c >= 'a' && c <= 'f';
        if (!digit && !lower) {
            return false;
        }
    }
    return true;
}

} // namespace tensoracle
