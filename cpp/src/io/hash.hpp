// SHA-256 digests of byte ranges and files, rendered as 64 lowercase hex digits.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle {

// Incremental SHA-256. Not copyable; movable.
class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;
    Sha256(Sha256 const&) = delete;
    Sha256& operator=(Sha256 const&) = delete;

    void update(std::span<std::byte const> bytes);
    void update(std::string_view text);
    // Finishes the digest; the object cannot be updated afterwards.
    std::string hex_digest();

private:
    struct State;
    std::unique_ptr<State> state_;
};

std::string sha256_hex(std::span<std::byte const> bytes);
std::string sha256_hex(std::string_view text);
// Streams the file through SHA-256; throws FileError naming the path when it cannot be read.
std::string sha256_file_hex(std::filesystem::path const& path);

// True when `text` is exactly 64 lowercase hex digits.
bool is_sha256_hex(std::string_view text) noexcept;

} // namespace tensoracle
