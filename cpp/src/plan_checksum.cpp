// XXH3-128 plan checksums through the xxHash library.
//
// The plan checksum only has to notice damage (truncation, bit rot, a partial write), so it
// uses a non-cryptographic hash that runs at memory speed; SHA-256 stays wherever identity
// needs collision resistance (file names, weight and plugin digests).
#include "tensoracle/plan_checksum.hpp"

#include <algorithm>
#include <xxhash.h>
#if defined(TENSORACLE_XXHASH_DISPATCH) && (defined(__x86_64__) || defined(__i386__))
#include <xxh_x86dispatch.h> // XXH3_128bits becomes the variant that picks AVX2/AVX-512
#endif

namespace tensoracle {

std::string plan_checksum_hex(std::span<std::byte const> bytes) {
    XXH128_canonical_t canonical{};
    XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
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
