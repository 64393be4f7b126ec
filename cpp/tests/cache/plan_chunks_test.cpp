// Tests of a plan's chunk digests (format version 2): the incremental hasher against the one-shot
// digests however the plan is split, each chunk's digests against SHA-256 and XXH3-128 of its
// bytes, and what chunk_difference says of two lists.
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "io/hash.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

constexpr std::size_t kChunk = static_cast<std::size_t>(kPlanChunkBytes);
constexpr ChunkDigestKinds kSha256{.sha256 = true, .xxh3_128 = false};
constexpr ChunkDigestKinds kXxh3{.sha256 = false, .xxh3_128 = true};

// The plan sizes every test walks: none, one byte, exactly one chunk, one chunk and a byte, and
// several chunks with a short last one.
std::vector<std::size_t> plan_sizes() {
    return {0, 1, kChunk, kChunk + 1, 2 * kChunk + 12345};
}

// The digests of `plan` given to a PlanChunkHasher in pieces that end at each of `cuts` (in
// order; cuts past the plan's end are ignored), then the rest; an empty piece between each.
PlanChunks hashed_with_cuts(std::span<std::byte const> plan, std::vector<std::size_t> const& cuts,
                            ChunkDigestKinds kinds = {}) {
    PlanChunkHasher hasher(kinds);
    std::size_t at = 0;
    for (std::size_t const cut : cuts) {
        if (cut <= at || cut > plan.size()) {
            continue;
        }
        hasher.update(plan.subspan(at, cut - at));
        hasher.update({});
        at = cut;
    }
    hasher.update(plan.subspan(at));
    return hasher.finish();
}

// The cuts of pieces of `piece` bytes each.
std::vector<std::size_t> every(std::size_t piece, std::size_t size) {
    std::vector<std::size_t> cuts;
    for (std::size_t at = piece; at < size; at += piece) {
        cuts.push_back(at);
    }
    return cuts;
}

TEST(PlanChunks, ChunkCountIsOnePerStartedChunk) {
    EXPECT_EQ(kPlanChunkBytes, std::uint64_t{4} << 20U);
    EXPECT_EQ(plan_chunk_count(0), 0U);
    EXPECT_EQ(plan_chunk_count(1), 1U);
    EXPECT_EQ(plan_chunk_count(kPlanChunkBytes - 1), 1U);
    EXPECT_EQ(plan_chunk_count(kPlanChunkBytes), 1U);
    EXPECT_EQ(plan_chunk_count(kPlanChunkBytes + 1), 2U);
    EXPECT_EQ(plan_chunk_count(3 * kPlanChunkBytes), 3U);
}

// plan_chunks_of gives, per chunk of kPlanChunkBytes (the last one shorter), exactly sha256_hex and
// plan_checksum_hex of that chunk's bytes.
TEST(PlanChunks, EachChunksDigestsAreTheSha256AndXxh3OfItsBytes) {
    auto const largest = testing::random_bytes(plan_sizes().back(), 21);
    for (std::size_t const size : plan_sizes()) {
        SCOPED_TRACE("plan of " + std::to_string(size) + " bytes");
        std::span<std::byte const> const plan = std::span(largest).first(size);
        PlanChunks const chunks = plan_chunks_of(plan);
        std::size_t const count = (size + kChunk - 1) / kChunk;
        ASSERT_EQ(chunks.sha256.size(), count);
        ASSERT_EQ(chunks.xxh3_128.size(), count);
        for (std::size_t index = 0; index < count; ++index) {
            auto const bytes =
                plan.subspan(index * kChunk, std::min(kChunk, size - index * kChunk));
            EXPECT_EQ(chunks.sha256[index], sha256_hex(bytes)) << "sha256[" << index << "]";
            EXPECT_EQ(chunks.xxh3_128[index], plan_checksum_hex(bytes))
                << "xxh3_128[" << index << "]";
        }
    }
    // The last chunk of a plan one byte past a chunk is that byte alone.
    std::span<std::byte const> const two = std::span(largest).first(kChunk + 1);
    EXPECT_EQ(plan_chunks_of(two).sha256.at(1), sha256_hex(two.last(1)));
    EXPECT_EQ(plan_chunks_of(two).xxh3_128.at(1), plan_checksum_hex(two.last(1)));
    // An empty plan has no chunk: not one chunk of no bytes.
    EXPECT_EQ(plan_chunks_of({}), (PlanChunks{}));
}

TEST(PlanChunks, TheHasherGivesPlanChunksOfHoweverTheBytesAreSplit) {
    auto const largest = testing::random_bytes(plan_sizes().back(), 22);
    for (std::size_t const size : plan_sizes()) {
        std::span<std::byte const> const plan = std::span(largest).first(size);
        PlanChunks const expected = plan_chunks_of(plan);
        struct Split {
            std::string name;
            std::vector<std::size_t> cuts;
        };
        std::vector<Split> const splits = {
            {"whole", {}},
            {"bytewise to 3000, then whole", every(1, std::min<std::size_t>(size, 3000))},
            {"pieces of 1000", every(1000, size)},
            {"pieces of 65536", every(65536, size)},
            {"pieces of 4 MiB - 1", every(kChunk - 1, size)},
            {"pieces of 4 MiB", every(kChunk, size)},
            {"pieces of 4 MiB + 1", every(kChunk + 1, size)},
            {"one piece across the boundary", {kChunk - 1, kChunk + 1}},
            {"a piece that ends on the boundary", {10, kChunk}},
            {"a piece that starts one byte into the next chunk", {kChunk + 1}},
            {"a piece over two boundaries", {1, 2 * kChunk + 1}},
        };
        for (Split const& split : splits) {
            SCOPED_TRACE("plan of " + std::to_string(size) + " bytes, " + split.name);
            EXPECT_EQ(hashed_with_cuts(plan, split.cuts), expected);
        }
    }
}

// A hasher of one kind leaves the other's list empty; the kind it computes is unchanged.
TEST(PlanChunks, AHasherOfOneKindGivesThatKindOnly) {
    auto const plan = testing::random_bytes(kChunk + 5, 23);
    PlanChunks const both = plan_chunks_of(plan);
    PlanChunks const sha256 =
        hashed_with_cuts(plan, {kChunk - 3}, {.sha256 = true, .xxh3_128 = false});
    EXPECT_EQ(sha256.sha256, both.sha256);
    EXPECT_TRUE(sha256.xxh3_128.empty()) << "xxh3_128 has " << sha256.xxh3_128.size() << " items";
    PlanChunks const xxh3 =
        hashed_with_cuts(plan, {kChunk + 3}, {.sha256 = false, .xxh3_128 = true});
    EXPECT_EQ(xxh3.xxh3_128, both.xxh3_128);
    EXPECT_TRUE(xxh3.sha256.empty()) << "sha256 has " << xxh3.sha256.size() << " items";
}

TEST(PlanChunks, ChunkRangeTextNamesTheFirstAndLastByte) {
    EXPECT_EQ(chunk_range_text(0, 4096), "bytes 0 to 4095 of the plan");
    EXPECT_EQ(chunk_range_text(0, kPlanChunkBytes), "bytes 0 to 4194303 of the plan");
    EXPECT_EQ(chunk_range_text(1, kPlanChunkBytes + 1), "bytes 4194304 to 4194304 of the plan");
    EXPECT_EQ(chunk_range_text(2, 3 * kPlanChunkBytes), "bytes 8388608 to 12582911 of the plan");
}

TEST(PlanChunks, ChunkDifferenceIsNothingForEqualDigests) {
    auto const plan = testing::random_bytes(2 * kChunk + 7, 24);
    PlanChunks const chunks = plan_chunks_of(plan);
    EXPECT_EQ(chunk_difference(chunks, chunks, plan.size(), {}), std::nullopt);
    EXPECT_EQ(chunk_difference({}, {}, 0, {}), std::nullopt);
    // A kind not named is not compared.
    EXPECT_EQ(chunk_difference(PlanChunks{chunks.sha256, {}}, chunks, plan.size(), kSha256),
              std::nullopt);
    EXPECT_EQ(chunk_difference(PlanChunks{{}, chunks.xxh3_128}, chunks, plan.size(), kXxh3),
              std::nullopt);
}

// A kind named but not computed (an empty list) is a difference, not a pass: a caller that forgot
// to hash fails closed.
TEST(PlanChunks, ChunkDifferenceFailsClosedOnAnEmptyListOfAKindItCompares) {
    auto const plan = testing::random_bytes(2 * kChunk + 7, 27);
    PlanChunks const chunks = plan_chunks_of(plan);
    auto const no_sha = chunk_difference(PlanChunks{{}, chunks.xxh3_128}, chunks, plan.size(), {});
    ASSERT_TRUE(no_sha.has_value());
    EXPECT_EQ(*no_sha, "the plan has 0 chunks, the header records 3 SHA-256 digests");
    auto const no_xxh3 =
        chunk_difference(PlanChunks{chunks.sha256, {}}, chunks, plan.size(), kXxh3);
    ASSERT_TRUE(no_xxh3.has_value());
    EXPECT_EQ(*no_xxh3, "the plan has 0 chunks, the header records 3 XXH3-128 digests");
}

// A byte changed in chunk 1 of 3: the message names chunk 1, its byte range, the kind, the
// observed digest and the recorded one; chunk 0 and 2 agree and are not named.
TEST(PlanChunks, ChunkDifferenceNamesTheFirstDifferingChunkItsRangeAndBothDigests) {
    auto const plan = testing::random_bytes(2 * kChunk + 7, 25);
    auto changed = plan;
    changed[kChunk + 100] ^= std::byte{0x01};
    changed[2 * kChunk + 3] ^= std::byte{0x01}; // chunk 2 differs too: the first one is named
    PlanChunks const recorded = plan_chunks_of(plan);
    PlanChunks const observed = plan_chunks_of(changed);
    ASSERT_EQ(observed.sha256[0], recorded.sha256[0]);
    ASSERT_NE(observed.sha256[1], recorded.sha256[1]);

    auto const both = chunk_difference(observed, recorded, plan.size(), {});
    ASSERT_TRUE(both.has_value());
    EXPECT_EQ(*both, "chunk 1 (bytes 4194304 to 8388607 of the plan): SHA-256 " +
                         observed.sha256[1] + ", the header records " + recorded.sha256[1]);

    auto const xxh3 =
        chunk_difference(PlanChunks{{}, observed.xxh3_128}, recorded, plan.size(), kXxh3);
    ASSERT_TRUE(xxh3.has_value());
    EXPECT_EQ(*xxh3, "chunk 1 (bytes 4194304 to 8388607 of the plan): XXH3-128 " +
                         observed.xxh3_128[1] + ", the header records " + recorded.xxh3_128[1]);

    // The last, short chunk: its range ends at the plan's last byte.
    auto last_changed = plan;
    last_changed.back() ^= std::byte{0x80};
    PlanChunks const last = plan_chunks_of(last_changed);
    auto const tail = chunk_difference(PlanChunks{last.sha256, {}}, recorded, plan.size(), kSha256);
    ASSERT_TRUE(tail.has_value());
    EXPECT_EQ(*tail, "chunk 2 (bytes 8388608 to 8388614 of the plan): SHA-256 " + last.sha256[2] +
                         ", the header records " + recorded.sha256[2]);
}

TEST(PlanChunks, ChunkDifferenceReportsAListOfAnotherLengthByItsLength) {
    auto const plan = testing::random_bytes(2 * kChunk + 7, 26);
    PlanChunks const recorded = plan_chunks_of(plan);
    PlanChunks shorter = recorded;
    shorter.sha256.pop_back();
    shorter.xxh3_128.pop_back();
    auto const fewer = chunk_difference(shorter, recorded, plan.size(), {});
    ASSERT_TRUE(fewer.has_value());
    EXPECT_EQ(*fewer, "the plan has 2 chunks, the header records 3 SHA-256 digests");

    PlanChunks longer = recorded;
    longer.xxh3_128.push_back(recorded.xxh3_128[0]);
    auto const more =
        chunk_difference(PlanChunks{{}, longer.xxh3_128}, recorded, plan.size(), kXxh3);
    ASSERT_TRUE(more.has_value());
    EXPECT_EQ(*more, "the plan has 4 chunks, the header records 3 XXH3-128 digests");

    // An empty plan against a header that records a chunk: reported, not skipped as a kind not
    // computed.
    auto const empty = chunk_difference({}, plan_chunks_of(std::span(plan).first(1)), 0, {});
    ASSERT_TRUE(empty.has_value());
    EXPECT_EQ(*empty, "the plan has 0 chunks, the header records 1 SHA-256 digests");
}

} // namespace
} // namespace tensoracle
