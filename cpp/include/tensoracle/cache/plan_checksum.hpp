// The damage-detection checksum of a saved engine's plan: XXH3-128, as 32 lowercase hex digits.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle {

inline constexpr std::size_t kPlanChecksumHexDigits = 32;

// XXH3-128 of `bytes` in xxHash's canonical (big-endian) byte order, the spelling that
// `xxhash.xxh3_128_hexdigest` and `xxhsum -H2` print.
std::string plan_checksum_hex(std::span<std::byte const> bytes);

// True when `text` is exactly 32 lowercase hex digits.
bool is_plan_checksum_hex(std::string_view text) noexcept;

} // namespace tensoracle
