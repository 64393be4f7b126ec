// XXH3-128 plan checksums with xxHash.
//
// The plan checksum only has to notice damage (truncation, bit rot, a partial write), so it
// uses a non-cryptographic hash that runs at memory speed; SHA-256 stays wherever identity
// needs collision resistance (file names, weight and plugin digests).
#include "cache/plan_checksum.hpp"

#include <algorithm>
#include <new>

// xxHash from its header alone: every function static in this file, no library to link. The
// baseline build is SSE2 on x86-64; detail/xxh3_avx2.cpp holds the AVX2 build.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tensoracle {

#if defined(TENSORACLE_XXH3_AVX2)
namespace detail {
// detail/xxh3_avx2.cpp
XXH128_hash_t xxh3_128_avx2(void const* data, std::size_t size) noexcept;
void xxh3_128_update_avx2(XXH3_state_t* state, void const* data, std::size_t size) noexcept;
} // namespace detail
#endif

namespace {

#if defined(TENSORACLE_XXH3_AVX2)
bool has_avx2() noexcept {
    static bool const found = __builtin_cpu_supports("avx2") != 0;
    return found;
}
#endif

XXH128_hash_t xxh3_128(std::span<std::byte const> bytes) noexcept {
#if defined(TENSORACLE_XXH3_AVX2)
    if (has_avx2()) {
        return detail::xxh3_128_avx2(bytes.data(), bytes.size());
    }
#endif
    return XXH3_128bits(bytes.data(), bytes.size());
}

std::string hex_of(XXH128_hash_t hash) {
    XXH128_canonical_t canonical{};
    XXH128_canonicalFromHash(&canonical, hash);
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string hex;
    hex.reserve(kPlanChecksumHexDigits);
    for (unsigned char const byte : canonical.digest) {
        hex.push_back(kDigits[byte >> 4U]);
        hex.push_back(kDigits[byte & 0x0FU]);
    }
    return hex;
}

} // namespace

std::string plan_checksum_hex(std::span<std::byte const> bytes) {
    return hex_of(xxh3_128(bytes));
}

// xxHash's streaming state (64-byte aligned, from XXH3_createState); the avx2 and baseline code
// paths keep the same state and give the same result.
struct PlanChecksum::State {
    XXH3_state_t* xxh = XXH3_createState();
    State() {
        if (xxh == nullptr) {
            throw std::bad_alloc();
        }
        (void)XXH3_128bits_reset(xxh);
    }
    State(State const&) = delete;
    State& operator=(State const&) = delete;
    ~State() { (void)XXH3_freeState(xxh); }
};

PlanChecksum::PlanChecksum() : state_(std::make_unique<State>()) {}
PlanChecksum::~PlanChecksum() = default;
PlanChecksum::PlanChecksum(PlanChecksum&&) noexcept = default;
PlanChecksum& PlanChecksum::operator=(PlanChecksum&&) noexcept = default;

void PlanChecksum::update(std::span<std::byte const> bytes) {
    if (bytes.empty()) {
        return;
    }
#if defined(TENSORACLE_XXH3_AVX2)
    if (has_avx2()) {
        detail::xxh3_128_update_avx2(state_->xxh, bytes.data(), bytes.size());
        return;
    }
#endif
    (void)XXH3_128bits_update(state_->xxh, bytes.data(), bytes.size());
}

std::string PlanChecksum::hex_digest() const {
    return hex_of(XXH3_128bits_digest(state_->xxh));
}

bool is_plan_checksum_hex(std::string_view text) noexcept {
    return text.size() == kPlanChecksumHexDigits &&
           std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

} // namespace tensoracle
