// Tests of the XXH3-128 plan checksum: reference values, damage detection, hex validation.
#include "cache/plan_checksum.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <set>

namespace tensoracle {
namespace {

// Reference values printed by the Python binding (xxhash.xxh3_128_hexdigest), which, like
// `xxhsum -H2`, writes the high 64 bits first.
constexpr char kEmpty[] = "99aa06d3014798d86001c324468d497f";
constexpr char kAbc[] = "06b05ab6733a618578af5f94892f3950";

TEST(PlanChecksum, ReferenceValues) {
    EXPECT_EQ(plan_checksum_hex({}), kEmpty);
    EXPECT_EQ(plan_checksum_hex(std::as_bytes(std::span(std::string_view{"abc"}))), kAbc);
}

TEST(PlanChecksum, EverySingleBitFlipChangesIt) {
    auto data = testing::random_bytes(300, 11);
    std::set<std::string> seen{plan_checksum_hex(data)};
    for (std::size_t i = 0; i < data.size(); ++i) {
        for (unsigned bit = 0; bit < 8; ++bit) {
            data[i] ^= static_cast<std::byte>(1U << bit);
            seen.insert(plan_checksum_hex(data));
            data[i] ^= static_cast<std::byte>(1U << bit);
        }
    }
    EXPECT_EQ(seen.size(), 1 + data.size() * 8);
}

TEST(PlanChecksum, TruncationAndZeroFillChangeIt) {
    auto const data = testing::random_bytes(1 << 20, 12);
    std::span<std::byte const> const whole(data);
    auto const full = plan_checksum_hex(whole);
    EXPECT_NE(plan_checksum_hex(whole.first(whole.size() - 1)), full);
    EXPECT_NE(plan_checksum_hex(whole.first(whole.size() / 2)), full);
    auto zeroed = data; // a write that stopped half-way, the rest left as zeros
    std::fill(zeroed.begin() + static_cast<std::ptrdiff_t>(zeroed.size() / 2), zeroed.end(),
              std::byte{0});
    EXPECT_NE(plan_checksum_hex(zeroed), full);
    EXPECT_EQ(plan_checksum_hex(whole), full);
}

// The incremental checksum equals the one-shot one however the bytes are split, across xxHash's
// internal block and buffer sizes, and can be read in between.
TEST(PlanChecksum, IncrementalEqualsOneShotForEverySplit) {
    auto const data = testing::random_bytes((3 << 20) + 12345, 13);
    std::span<std::byte const> const whole(data);
    for (std::size_t const piece :
         {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{240}, std::size_t{1024},
          std::size_t{65537}, std::size_t{1} << 20, data.size()}) {
        SCOPED_TRACE(piece);
        std::size_t const length = piece == 1 ? 5000 : data.size(); // bytewise: a short prefix
        PlanChecksum checksum;
        for (std::size_t at = 0; at < length; at += piece) {
            checksum.update(whole.subspan(at, std::min(piece, length - at)));
        }
        EXPECT_EQ(checksum.hex_digest(), plan_checksum_hex(whole.first(length)));
    }
    PlanChecksum partial;
    EXPECT_EQ(partial.hex_digest(), kEmpty);
    partial.update(whole.first(1000));
    EXPECT_EQ(partial.hex_digest(), plan_checksum_hex(whole.first(1000)));
    partial.update(whole.subspan(1000));
    EXPECT_EQ(partial.hex_digest(), plan_checksum_hex(whole));
}

TEST(PlanChecksum, HexValidation) {
    EXPECT_TRUE(is_plan_checksum_hex(kEmpty));
    EXPECT_TRUE(is_plan_checksum_hex(std::string(32, '0')));
    EXPECT_FALSE(is_plan_checksum_hex(""));
    EXPECT_FALSE(is_plan_checksum_hex(std::string(31, 'a')));
    EXPECT_FALSE(is_plan_checksum_hex(std::string(33, 'a')));
    EXPECT_FALSE(is_plan_checksum_hex(std::string(64, 'a'))); // a SHA-256 is not accepted
    EXPECT_FALSE(is_plan_checksum_hex(std::string(32, 'A')));
    EXPECT_FALSE(is_plan_checksum_hex(std::string(31, 'a') + "g"));
}

} // namespace
} // namespace tensoracle
