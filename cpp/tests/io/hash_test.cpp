// Tests of SHA-256 hashing: published vectors, incremental use, files, and hex validation.
#include "io/hash.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

// FIPS 180-2 example digests.
constexpr char kEmpty[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char kAbc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Hash, KnownVectors) {
    EXPECT_EQ(sha256_hex(std::string_view{}), kEmpty);
    EXPECT_EQ(sha256_hex(std::string_view{"abc"}), kAbc);
}

TEST(Hash, IncrementalEqualsOneShot) {
    auto const data = testing::random_bytes(100'000, 7);
    Sha256 hash;
    std::span<std::byte const> rest(data);
    for (std::size_t step = 1; !rest.empty(); step = step * 3 + 1) {
        auto const n = std::min(step, rest.size());
        hash.update(rest.first(n));
        rest = rest.subspan(n);
    }
    EXPECT_EQ(hash.hex_digest(), sha256_hex(data));
}

TEST(Hash, FinishedHashRefusesMoreInput) {
    Sha256 hash;
    hash.update(std::string_view{"abc"});
    EXPECT_EQ(hash.hex_digest(), kAbc);
    EXPECT_THROW(hash.update(std::string_view{"x"}), std::logic_error);
    EXPECT_THROW(hash.hex_digest(), std::logic_error);
}

TEST(Hash, MovedHashContinues) {
    Sha256 first;
    first.update(std::string_view{"a"});
    Sha256 second = std::move(first);
    second.update(std::string_view{"bc"});
    EXPECT_EQ(second.hex_digest(), kAbc);
}

TEST(Hash, FileLargerThanTheReadBufferMatchesMemory) {
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes((9U << 20) + 123, 11);
    auto const path = dir.path() / "data.bin";
    testing::write_all(path, data);
    EXPECT_EQ(sha256_file_hex(path), sha256_hex(data));
    testing::write_all(path, {});
    EXPECT_EQ(sha256_file_hex(path), kEmpty);
}

TEST(Hash, MissingFileNamesThePath) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "absent.bin";
    try {
        sha256_file_hex(path);
        FAIL() << "expected FileError";
    } catch (FileError const& error) {
        EXPECT_EQ(error.path(), path);
        EXPECT_NE(std::string(error.what()).find(path.string()), std::string::npos);
    }
}

TEST(Hash, HexValidation) {
    EXPECT_TRUE(is_sha256_hex(kAbc));
    EXPECT_FALSE(is_sha256_hex(std::string(kAbc).substr(1)));
    EXPECT_FALSE(is_sha256_hex(std::string(kAbc) + "0"));
    std::string upper = kAbc;
    upper[0] = 'B';
    EXPECT_FALSE(is_sha256_hex(upper));
    std::string other = kAbc;
    other[5] = 'g';
    EXPECT_FALSE(is_sha256_hex(other));
    EXPECT_FALSE(is_sha256_hex(""));
}

} // namespace
} // namespace tensoracle
