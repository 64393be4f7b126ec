// XXH3-128 plan checksums with xxHash.
//
// The plan checksum only has to notice damage (truncation, bit rot, a partial write), so it
// uses a non-cryptographic hash that runs at memory speed; SHA-256 stays wherever identity
// needs collision resistance (file names, weight and plugin digests).
#include "tensoracle/cache/plan_checksum.hpp"

#include <algorithm>

// xxHash from its header alone: every function static in this file, no library to link. The
// baseline build is SSE2 on x86-64; detail/xxh3_avx2.cpp holds the AVX2 build.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tensoracle {

#if defined(TENSORACLE_XXH3_AVX2)
namespace detail {
XXH128_hash_t xxh3_128_avx2(void const* data, std::size_t size) noexcept; // detail/xxh3_avx2.cpp
} // namespace detail
#endif

namespace {

XXH128_hash_t xxh3_128(std::span<std::byte const> bytes) noexcept {
#if defined(TENSORACLE_XXH3_AVX2)
    static bool const has_avx2 = __builtin_cpu_supports("avx2") != 0;
    if (has_avx2) {
        return detail::xxh3_128_avx2(bytes.data(), bytes.size());
    }
#endif
    return XXH3_128bits(bytes.data(), bytes.size());
}

} // namespace

std::string plan_checksum_hex(std::span<std::byte const> bytes) {
    XXH128_canonical_t canonical{};
    XXH128_canonicalFromHash(&canonical, xxh3_128(bytes));
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string hex;
    hex.reserve(kPlanChecksumHexDigits);
    for (unsigned char const byte : canonical.digest) {
        hex.push_back(kDigits[byte >> 4U]);
        hex.push_back(kDigits[byte & 0x0FU]);
    }
    return hex;
}

bool is_plan_checksum_hex(std::string_view text) noexcept {
    return text.size() == kPlanChecksumHexDigits &&
           std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

} // namespace tensoracle
