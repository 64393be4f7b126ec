// Private to the core: the text of a key file (PEM), read as a file the user names but that
// anyone could have put there: no symbolic link followed, no FIFO or device opened in a way
// that blocks, and at most kMaxKeyFileBytes read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tensoracle::detail {

// Far above any PEM key (an Ed25519 public key is 113 bytes, an RSA-16384 private key < 13 KiB).
inline constexpr std::uint64_t kMaxKeyFileBytes = std::uint64_t{64} * 1024;

// Throws FileError naming the file when it cannot be opened, is a symbolic link or is not a
// regular file, and InvalidArgument naming it when it holds more than kMaxKeyFileBytes.
std::string read_key_file(std::filesystem::path const& path);

} // namespace tensoracle::detail
