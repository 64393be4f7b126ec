// The damage-detection checksum of a saved engine's plan: XXH3-128, as 32 lowercase hex digits.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle {

inline constexpr std::size_t kPlanChecksumHexDigits = 32;

// XXH3-128 of `bytes` in xxHash's canonical (big-endian) byte order, the spelling that
// `xxhash.xxh3_128_hexdigest` and `xxhsum -H2` print.
std::string plan_checksum_hex(std::span<std::byte const> bytes);

// The same checksum computed over bytes given in pieces (a plan as it is downloaded): equal to
// plan_checksum_hex of their concatenation, however they are split. Not copyable; movable.
class PlanChecksum {
public:
    PlanChecksum();
    ~PlanChecksum();
    PlanChecksum(PlanChecksum&&) noexcept;
    PlanChecksum& operator=(PlanChecksum&&) noexcept;
    PlanChecksum(PlanChecksum const&) = delete;
    PlanChecksum& operator=(PlanChecksum const&) = delete;

    void update(std::span<std::byte const> bytes);
    // The checksum of every byte given so far; more bytes may follow.
    std::string hex_digest() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// True when `text` is exactly 32 lowercase hex digits.
bool is_plan_checksum_hex(std::string_view text) noexcept;

} // namespace tensoracle
