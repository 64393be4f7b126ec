// Tests of weight digests and their cross-process records.
#include "cache/weight_digest.hpp"
#include "io/hash.hpp"
#include "support/cache_test_support.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <fstream>
#include <gtest/gtest.h>
#ifndef _WIN32
#include <sys/stat.h>
#endif

namespace tensoracle {
namespace {

using nlohmann::json;

struct Fixture {
    testing::TemporaryDirectory dir;
    std::filesystem::path cache = dir.path() / "cache";
    std::filesystem::path weights = dir.path() / "model.safetensors";
    std::vector<std::byte> data = testing::random_bytes(100'000, 21);
    Fixture() { testing::write_all(weights, data); }
    std::filesystem::path record() const { return weight_record_path(cache, weights); }
};

std::string read_text(std::filesystem::path const& path) {
    auto const bytes = testing::read_all(path);
    return {reinterpret_cast<char const*>(bytes.data()), bytes.size()};
}

void write_text(std::filesystem::path const& path, std::string const& text) {
    testing::write_all(path, testing::to_bytes(text));
}

void bump_mtime(std::filesystem::path const& path) {
    testing::set_mtime(path, 1'234'567'890'000'000'100); // whole 100 ns steps, as Windows keeps
}

TEST(WeightDigest, FirstCallReadsThenTheRecordAnswers) {
    Fixture f;
    auto const first = weight_digest(f.cache, f.weights);
    EXPECT_EQ(first.sha256, sha256_hex(f.data));
    EXPECT_FALSE(first.from_record);
    EXPECT_EQ(f.record().filename().string(), "weight-" + sha256_hex(f.weights.string()) + ".json");
    ASSERT_TRUE(std::filesystem::exists(f.record()));
    auto const second = weight_digest(f.cache, f.weights);
    EXPECT_EQ(second.sha256, first.sha256);
    EXPECT_TRUE(second.from_record);
}

TEST(WeightDigest, RecordContentsAreCanonicalAndSelfChecked) {
    Fixture f;
    weight_digest(f.cache, f.weights);
    auto const text = read_text(f.record());
    auto const json_record = json::parse(text);
    EXPECT_EQ(canonical_json(json_record), text);
    EXPECT_EQ(json_record.at("path"), f.weights.string());
    EXPECT_EQ(json_record.at("size"), f.data.size());
#ifndef _WIN32 // On Windows the file's index stands in for the inode; no portable call reads it.
    struct stat status {};
    ASSERT_EQ(::stat(f.weights.c_str(), &status), 0);
    EXPECT_EQ(json_record.at("inode"), status.st_ino);
#endif
    EXPECT_EQ(json_record.at("mtime_ns"), testing::mtime_ns(f.weights));
    EXPECT_EQ(json_record.at("sha256"), sha256_hex(f.data));
    auto others = json_record;
    others.erase("record_sha256");
    EXPECT_EQ(json_record.at("record_sha256"), sha256_hex(canonical_json(others)));
    auto const parsed = parse_weight_record(text);
    EXPECT_EQ(parsed.path, f.weights);
    EXPECT_EQ(encode_weight_record(parsed), text);
}

TEST(WeightDigest, AChangedStampMeansReadingAgain) {
    Fixture f;
    weight_digest(f.cache, f.weights);
    bump_mtime(f.weights);
    auto const after_touch = weight_digest(f.cache, f.weights);
    EXPECT_FALSE(after_touch.from_record);
    EXPECT_TRUE(weight_digest(f.cache, f.weights).from_record);

    auto const other = testing::random_bytes(50'000, 22);
    testing::write_all(f.weights, other);
    auto const changed = weight_digest(f.cache, f.weights);
    EXPECT_FALSE(changed.from_record);
    EXPECT_EQ(changed.sha256, sha256_hex(other));

    // A new file under the same name (new inode), same size and time: still read again.
    auto const replacement = f.dir.path() / "replacement";
    testing::write_all(replacement, other);
    testing::set_mtime(replacement, testing::mtime_ns(f.weights));
    std::filesystem::rename(replacement, f.weights);
    EXPECT_FALSE(weight_digest(f.cache, f.weights).from_record);
}

TEST(WeightDigest, ForceReadsAgainAndRewrites) {
    Fixture f;
    weight_digest(f.cache, f.weights);
    // The documented risk: same size and time, new bytes. Only force notices.
    auto const mtime = testing::mtime_ns(f.weights);
    auto modified = f.data;
    modified[0] ^= std::byte{0xFF};
    {
        std::fstream file(f.weights, std::ios::in | std::ios::out | std::ios::binary);
        ASSERT_TRUE(file.is_open());
        file.write(reinterpret_cast<char const*>(modified.data()), 1);
        ASSERT_TRUE(file.good());
    }
    testing::set_mtime(f.weights, mtime);
    auto const stale = weight_digest(f.cache, f.weights);
    EXPECT_TRUE(stale.from_record);
    EXPECT_EQ(stale.sha256, sha256_hex(f.data));
    auto const forced = weight_digest(f.cache, f.weights, true);
    EXPECT_FALSE(forced.from_record);
    EXPECT_EQ(forced.sha256, sha256_hex(modified));
    auto const after = weight_digest(f.cache, f.weights);
    EXPECT_TRUE(after.from_record);
    EXPECT_EQ(after.sha256, sha256_hex(modified));
}

TEST(WeightDigest, DamagedRecordsAreIgnoredAndRewritten) {
    Fixture f;
    weight_digest(f.cache, f.weights);
    auto const good = read_text(f.record());
    auto const truth = sha256_hex(f.data);
    auto tampered = json::parse(good);
    tampered["sha256"] = std::string(64, 'a'); // record_sha256 no longer matches
    std::vector<std::string> const damages = {
        "", "{", "[]", good.substr(0, good.size() / 2), tampered.dump(), "\xFF\xFE garbage"};
    for (auto const& damage : damages) {
        write_text(f.record(), damage);
        auto const result = weight_digest(f.cache, f.weights);
        EXPECT_FALSE(result.from_record) << damage;
        EXPECT_EQ(result.sha256, truth);
        EXPECT_EQ(read_text(f.record()), good) << "the record was not rewritten";
    }
}

TEST(WeightDigest, RelativePathsAreRecordedAbsolute) {
    Fixture f;
    auto const old = std::filesystem::current_path();
    std::filesystem::current_path(f.dir.path());
    auto const result = weight_digest(f.cache, "./model.safetensors");
    std::filesystem::current_path(old);
    EXPECT_FALSE(result.from_record);
    EXPECT_TRUE(weight_digest(f.cache, f.weights).from_record);
}

TEST(WeightDigest, UnwritableCacheStillGivesTheDigest) {
    Fixture f;
    testing::write_all(f.cache, {}); // a file where the directory should be
    auto const result = weight_digest(f.cache, f.weights);
    EXPECT_EQ(result.sha256, sha256_hex(f.data));
    EXPECT_FALSE(result.from_record);
}

TEST(WeightDigest, MissingWeightFileIsAFileError) {
    Fixture f;
    EXPECT_THROW(weight_digest(f.cache, f.dir.path() / "absent"), FileError);
    EXPECT_THROW(weight_digest(f.cache, f.dir.path()), FileError);
}

TEST(WeightDigest, ListingSkipsDamagedAndMisnamedRecords) {
    Fixture f;
    EXPECT_TRUE(read_weight_records(f.cache).empty());
    auto const second = f.dir.path() / "other.safetensors";
    testing::write_all(second, testing::random_bytes(10, 1));
    weight_digest(f.cache, f.weights);
    weight_digest(f.cache, second);
    write_text(f.cache / ("weight-" + std::string(64, '0') + ".json"), read_text(f.record()));
    write_text(f.cache / ("weight-" + std::string(64, '1') + ".json"), "{}");
    write_text(f.cache / "unrelated.json", read_text(f.record()));
    auto const records = read_weight_records(f.cache);
    ASSERT_EQ(records.size(), 2U);
    EXPECT_EQ(records[0].path, f.weights);
    EXPECT_EQ(records[0].sha256, sha256_hex(f.data));
    EXPECT_EQ(records[1].path, second);
}

// An absolute path as the OS spells it.
#ifdef _WIN32
constexpr char const* kAbsoluteWeights = "C:\\w\\model.safetensors";
#else
constexpr char const* kAbsoluteWeights = "/w/model.safetensors";
#endif

TEST(WeightRecordParser, NamesWhatIsWrong) {
    WeightRecord record{kAbsoluteWeights, 10, -5, 77, std::string(64, 'c')};
    auto const good = json::parse(encode_weight_record(record));
    auto const parsed = parse_weight_record(good.dump());
    EXPECT_EQ(parsed.mtime_ns, -5);
    EXPECT_EQ(parsed.inode, 77U);
    auto expect_error = [](json const& value, std::string const& part) {
        try {
            parse_weight_record(value.dump());
            ADD_FAILURE() << "accepted " << value.dump();
        } catch (InvalidArgument const& error) {
            EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
        }
    };
    auto with = [&](char const* key, json value) {
        auto copy = good;
        copy[key] = std::move(value);
        return copy;
    };
    auto without = [&](char const* key) {
        auto copy = good;
        copy.erase(key);
        return copy;
    };
    expect_error(json::array(), "not an object");
    expect_error(without("inode"), "lacks the member \"inode\"");
    expect_error(with("extra", 1), "unexpected member \"extra\"");
    expect_error(with("path", "relative/file"), "absolute path");
    expect_error(with("size", -1), "\"size\" must be a non-negative integer");
    expect_error(with("mtime_ns", "5"), "\"mtime_ns\" must be an integer");
    expect_error(with("mtime_ns", 18446744073709551615ULL), "out of range");
    expect_error(with("sha256", "abc"), "\"sha256\" must be 64 lowercase hex digits");
    expect_error(with("record_sha256", std::string(64, 'f')), "the other members hash to");
    expect_error(with("size", 11), "\"record_sha256\"");
    EXPECT_THROW(parse_weight_record("{"), InvalidArgument);
    EXPECT_THROW(parse_weight_record(std::string(70'000, ' ')), InvalidArgument);
    EXPECT_THROW(encode_weight_record({"relative", 0, 0, 0, std::string(64, 'c')}),
                 InvalidArgument);
    EXPECT_THROW(encode_weight_record({kAbsoluteWeights, 0, 0, 0, "xyz"}), InvalidArgument);
}

} // namespace
} // namespace tensoracle
