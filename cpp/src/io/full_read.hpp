// Private to the core: the one loop that reads a range of an open file until it is full.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>

namespace tensoracle {

// Fills `into` with the bytes of the open file `fd` from `offset` on (platform::read_at, which
// retries an interrupted read, as many times as the system returns less than asked), stopping
// early only at the end of the file (which may have shrunk since it was measured). Returns how
// many bytes were read: into.size() unless the file ends sooner. Throws FileError
// "<failure> '<path>': <reason>" when a read fails.
std::size_t read_full(int fd, std::span<std::byte> into, std::uint64_t offset,
                      std::filesystem::path const& path, std::string_view failure = "cannot read");

} // namespace tensoracle
