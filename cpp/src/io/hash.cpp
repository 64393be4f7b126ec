// SHA-256 of byte ranges and files: the parts common to every backend (the digest itself is
// computed by OpenSSL, src/io/openssl/sha256.cpp, or on Windows by CNG, src/io/windows/sha256.cpp).
#include "io/hash.hpp"

#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <cerrno>
#include <fcntl.h>
#include <vector>

namespace tensoracle {

void Sha256::update(std::string_view text) {
    update(std::as_bytes(std::span(text)));
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
    platform::Descriptor const file{
        platform::open_file(path, O_RDONLY, 0, platform::Follow::links)};
    int const fd = file.get();
    if (fd < 0) {
        throw_file_error("cannot open", path, errno);
    }
    platform::advise_sequential_reads(fd);
    // Large reads keep the syscall count low; the buffer stays cache-friendly enough for SHA-NI.
    std::vector<std::byte> buffer(std::size_t{4} << 20);
    Sha256 hash;
    for (;;) {
        long long const count = platform::read_some(fd, buffer.data(), buffer.size());
        if (count < 0) {
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
