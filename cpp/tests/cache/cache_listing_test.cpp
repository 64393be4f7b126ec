// `tensoracle cache list`: which files are listed, their status, and the JSON of each entry.
#include "cache/listing.hpp"
#include "cache/weight_digest.hpp"
#include "support/cache_test_support.hpp"
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

using testing::TemporaryDirectory;

std::vector<std::string> names(CacheScan const& scan) {
    std::vector<std::string> result;
    for (CacheEntry const& entry : scan.entries) {
        result.push_back(entry.name);
    }
    return result;
}

EngineHeader header_with_references(nlohmann::json references) {
    EngineHeader header;
    header.references = std::move(references);
    return header;
}

TEST(EntryNames, EnginesAndTheirTemporaryFiles) {
    EXPECT_TRUE(is_engine_file_name("model-abc.engine"));
    EXPECT_FALSE(is_engine_file_name(".engine"));
    EXPECT_FALSE(is_engine_file_name("model.engine.lock"));
    EXPECT_FALSE(is_engine_file_name("weight-abc.json"));
    EXPECT_TRUE(is_temporary_engine_name("model-abc.engine.tmp-123-a1b2c3"));
    EXPECT_FALSE(is_temporary_engine_name("weight-abc.json.tmp-123-a1b2c3"));
    EXPECT_FALSE(is_temporary_engine_name("model-abc.engine"));
}

TEST(ScanCache, AMissingDirectoryIsEmptyAndNotCreated) {
    TemporaryDirectory directory;
    CacheScan const scan = scan_cache(directory.path() / "absent");
    EXPECT_FALSE(scan.exists);
    EXPECT_TRUE(scan.entries.empty());
    EXPECT_EQ(scan.total_size_bytes, 0U);
    EXPECT_FALSE(std::filesystem::exists(directory.path() / "absent"));
}

TEST(ScanCache, ADirectoryThatCannotBeListedIsAFileError) {
    TemporaryDirectory directory;
    testing::write_file(directory.path() / "plain", "x", 0);
    EXPECT_THROW(scan_cache(directory.path() / "plain"), FileError);
}

TEST(ScanCache, ListsEnginesAndTemporaryFilesSortedByNameWithStatus) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    // Below the second and the microsecond, in the 100 ns steps that Windows file times keep.
    std::string const good_name = testing::engine_name({{"name", "m"}});
    std::uint64_t const good =
        testing::write_engine(dir / good_name, {{"name", "m"}}, {}, 64, 1'500'000'100);
    testing::write_file(dir / "b-empty.engine", "", 2);
    testing::write_file(dir / "a-junk.engine", "not an engine at all", 3);
    testing::write_file(dir / "c.engine.tmp-77-abc", "partial", 4);
    testing::write_file(dir / (good_name + ".lock"), "", 5);
    testing::write_file(dir / "weight-0123.json", "{}", 6);
    testing::write_file(dir / "notes.txt", "x", 7);
    std::filesystem::create_directory(dir / "dir.engine");

    CacheScan const scan = scan_cache(dir);
    EXPECT_TRUE(scan.exists);
    ASSERT_EQ(names(scan),
              (std::vector<std::string>{"a-junk.engine", "b-empty.engine", "c.engine.tmp-77-abc",
                                        "dir.engine", good_name}));
    CacheEntry const& junk = scan.entries[0];
    EXPECT_EQ(junk.status, EntryStatus::unrecognized);
    EXPECT_NE(junk.reason.find("not a tensoracle engine file"), std::string::npos) << junk.reason;
    EXPECT_EQ(scan.entries[1].status, EntryStatus::building_or_leftover);
    EXPECT_FALSE(scan.entries[1].temporary);
    EXPECT_EQ(scan.entries[2].status, EntryStatus::building_or_leftover);
    EXPECT_TRUE(scan.entries[2].temporary);
    // A directory at an engine's name is listed, never opened: unrecognized, holding no bytes.
    CacheEntry const& folder = scan.entries[3];
    EXPECT_EQ(folder.status, EntryStatus::unrecognized);
    EXPECT_FALSE(folder.regular);
    EXPECT_EQ(folder.size_bytes, 0U);
    EXPECT_NE(folder.reason.find("is a directory"), std::string::npos) << folder.reason;
    EXPECT_NE(folder.reason.find((dir / "dir.engine").string()), std::string::npos);
    CacheEntry const& engine = scan.entries[4];
    EXPECT_EQ(engine.status, EntryStatus::recognized);
    ASSERT_TRUE(engine.header.has_value());
    EXPECT_EQ(engine.header->conditions, (nlohmann::json{{"name", "m"}}));
    EXPECT_EQ(engine.size_bytes, good);
    EXPECT_EQ(engine.recorded_at_ns, 1'500'000'100);
    EXPECT_EQ(scan.total_size_bytes, good + 0 + 20 + 7);
}

TEST(ScanCache, TruncatedPlanIsUnrecognizedWithTheReason) {
    TemporaryDirectory directory;
    auto const path = directory.path() / "t.engine";
    testing::write_engine(path, {{"name", "t"}}, {}, 100, 1);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
    CacheScan const scan = scan_cache(directory.path());
    ASSERT_EQ(scan.entries.size(), 1U);
    EXPECT_EQ(scan.entries[0].status, EntryStatus::unrecognized);
    EXPECT_NE(scan.entries[0].reason.find("truncated"), std::string::npos)
        << scan.entries[0].reason;
}

TEST(ScanCache, MetadataOnlyScanReadsNoHeader) {
    TemporaryDirectory directory;
    testing::write_engine(directory.path() / "x.engine", {{"name", "x"}}, {}, 8, 1);
    CacheScan const scan = scan_cache(directory.path(), false);
    ASSERT_EQ(scan.entries.size(), 1U);
    EXPECT_FALSE(scan.entries[0].header.has_value());
}

TEST(WorkspaceLimitJson, PositiveIntegerNullOrUnknown) {
    EXPECT_EQ(workspace_limit_json(header_with_references({{"workspace_limit", 4294967296}})),
              4294967296);
    EXPECT_TRUE(
        workspace_limit_json(header_with_references({{"workspace_limit", nullptr}})).is_null());
    EXPECT_EQ(workspace_limit_json(header_with_references(nlohmann::json::object())), "unknown");
    EXPECT_EQ(workspace_limit_json(header_with_references({{"workspace_limit", 0}})), "unknown");
    EXPECT_EQ(workspace_limit_json(header_with_references({{"workspace_limit", -5}})), "unknown");
    EXPECT_EQ(workspace_limit_json(header_with_references({{"workspace_limit", "4GiB"}})),
              "unknown");
}

TEST(WeightPathsJson, EachDigestInDeclaredOrderWithTheMatchingRecordPaths) {
    std::string const a(64, 'a');
    std::string const b(64, 'b');
    std::string const c(64, 'c');
    std::vector<WeightRecord> const records{
        {"/w/two.safetensors", 1, 1, 1, a},
        {"/w/one.safetensors", 1, 1, 2, a},
        {"/w/b.safetensors", 1, 1, 3, b},
        {"/w/other.safetensors", 1, 1, 4, std::string(64, 'd')}};
    nlohmann::json const conditions = {{"name", "m"}, {"weights", {c, a, b}}};
    nlohmann::json const expected = nlohmann::json::array(
        {{{"sha256", c}, {"paths", nlohmann::json::array()}},
         {{"sha256", a}, {"paths", {"/w/one.safetensors", "/w/two.safetensors"}}},
         {{"sha256", b}, {"paths", {"/w/b.safetensors"}}}});
    EXPECT_EQ(weight_paths_json(conditions, WeightPathIndex{records}), expected);
    EXPECT_EQ(weight_paths_json({{"name", "m"}}, WeightPathIndex{records}),
              nlohmann::json::array());
}

TEST(ListingJson, RecognizedEntriesCarryConditionsLimitAndWeightPaths) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    auto const weight_file = dir / "model.safetensors";
    testing::write_file(weight_file, "weights", 1);
    std::string const digest = weight_digest(dir, weight_file).sha256;
    nlohmann::json const conditions = {
        {"name", "m"}, {"graph_version", "1"}, {"weights", {digest}}};
    std::uint64_t const size =
        testing::write_engine(dir / testing::engine_name(conditions), conditions,
                              {{"workspace_limit", nullptr}}, 16, 1'700'000'000'500'000'000);
    testing::write_file(dir / "z.engine", "", 1'000'000'000);

    std::vector<WeightRecord> const records = read_weight_records(dir);
    nlohmann::json const json = listing_json(scan_cache(dir), records);
    EXPECT_EQ(json["directory"], dir.string());
    EXPECT_EQ(json["total_size_bytes"], size);
    ASSERT_EQ(json["entries"].size(), 2U);
    nlohmann::json const& entry = json["entries"][0];
    EXPECT_EQ(entry["file_name"], testing::engine_name(conditions));
    EXPECT_EQ(entry["size_bytes"], size);
    EXPECT_EQ(entry["recorded_at"], "2023-11-14T22:13:20Z");
    EXPECT_EQ(entry["recorded_at_ns"], 1'700'000'000'500'000'000);
    EXPECT_EQ(entry["status"], "recognized");
    EXPECT_EQ(entry["conditions"], conditions);
    EXPECT_TRUE(entry["workspace_limit"].is_null());
    EXPECT_EQ(entry["weight_paths"],
              nlohmann::json::array(
                  {{{"sha256", digest}, {"paths", {std::filesystem::absolute(weight_file)}}}}));
    nlohmann::json const& empty = json["entries"][1];
    EXPECT_EQ(empty["status"], "building or leftover");
    EXPECT_FALSE(empty.contains("conditions"));
    EXPECT_FALSE(empty.contains("workspace_limit"));
}

TEST(ListingTable, AlignedColumnsWithGraphVersionAndTargets) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    nlohmann::json const a = {{"name", "a"}, {"graph_version", "7"}, {"targets", {"sm86", "sm89"}}};
    nlohmann::json const b = {{"name", "b"}, {"gpu", {{"name", "NVIDIA H200"}}}};
    std::string const a_name = testing::engine_name(a);
    std::uint64_t const a_size = testing::write_engine(dir / a_name, a, {}, 2048, 0);
    testing::write_engine(dir / testing::engine_name(b), b, {}, 8, 0);
    std::string const table = listing_table(scan_cache(dir));
    std::string const gap(a_name.size() - 4 + 2, ' '); // names of one length: "a-" or "b-" digest
    EXPECT_NE(table.find("NAME" + gap + "GRAPH_VERSION  SIZE"), std::string::npos) << table;
    EXPECT_NE(table.find(a_name + "  7              " + format_size_human(a_size) + "  "),
              std::string::npos)
        << table;
    EXPECT_NE(table.find("sm86,sm89"), std::string::npos) << table;
    EXPECT_NE(table.find("NVIDIA H200"), std::string::npos) << table;
    EXPECT_NE(table.find("1970-01-01T00:00:00Z"), std::string::npos) << table;
    EXPECT_NE(table.find("2 entries"), std::string::npos) << table;
}

TEST(ListingTable, TheCountSaysEntryForOneAndEntriesForNone) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    EXPECT_NE(listing_table(scan_cache(dir)).find("0 entries, "), std::string::npos);
    nlohmann::json const a = {{"name", "a"}};
    testing::write_engine(dir / testing::engine_name(a), a, {}, 8, 0);
    std::string const table = listing_table(scan_cache(dir));
    EXPECT_NE(table.find("\n1 entry, "), std::string::npos) << table;
}

TEST(ListingTable, TargetsColumnNamesTheHardwareCompatibilityLevel) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    nlohmann::json const a = {{"name", "a"},
                              {"backend", "tensorrt"},
                              {"hardware_compatibility", "same_compute_capability"},
                              {"gpu", {{"compute_capability", "8.9"}}},
                              {"targets", {"sm89"}}};
    nlohmann::json const b = {{"name", "b"},
                              {"backend", "tensorrt"},
                              {"hardware_compatibility", "ampere_plus"},
                              {"gpu", nullptr},
                              {"targets", nlohmann::json::array()}};
    testing::write_engine(dir / testing::engine_name(a), a, {}, 8, 0);
    testing::write_engine(dir / testing::engine_name(b), b, {}, 8, 0);
    std::string const table = listing_table(scan_cache(dir));
    EXPECT_NE(table.find("same_compute_capability (sm89)"), std::string::npos) << table;
    EXPECT_NE(table.find("ampere_plus"), std::string::npos) << table;
    EXPECT_EQ(table.find("ampere_plus ("), std::string::npos) << table;
}

} // namespace
} // namespace tensoracle

namespace tensoracle {
namespace {

TEST(WriteListingJson, StreamsTheSameObjectAsListingJson) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    auto const weight_file = dir / "w.safetensors";
    testing::write_file(weight_file, "w", 1);
    std::string const digest = weight_digest(dir, weight_file).sha256;
    nlohmann::json const a = {{"name", "a"}, {"weights", {digest}}};
    testing::write_engine(dir / testing::engine_name(a), a, {{"workspace_limit", 1024}}, 10, 5);
    testing::write_file(dir / "b.engine", "junk", 6);
    testing::write_file(dir / "c.engine", "", 7);
    std::ostringstream out;
    write_listing_json(out, dir);
    std::string const text = out.str();
    nlohmann::json const streamed = nlohmann::json::parse(text);
    EXPECT_EQ(streamed, listing_json(scan_cache(dir), read_weight_records(dir)));
    EXPECT_EQ(streamed["entries"].size(), 3U);
    // Six lines of frame, one line per entry.
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6 + 3);
}

// Enough entries for the listing's worker threads and for more than one batch of lines: every
// kind of entry, each line written as entry_json writes that entry (the conditions, which the
// streamed lines take from the header's own text, included), and the scan the same as one made
// entry by entry on one thread.
TEST(WriteListingJson, ALongListingIsWrittenLineForLineAsEntryJsonWritesEachEntry) {
    TemporaryDirectory directory;
    auto const& dir = directory.path();
    auto const weight_file = dir / "w.safetensors";
    testing::write_file(weight_file, "w", 1);
    std::string const digest = weight_digest(dir, weight_file).sha256;
    std::size_t const count = 2600;
    for (std::size_t i = 0; i < count; ++i) {
        auto const time = static_cast<std::int64_t>(1'700'000'000'000'000'000 + i);
        std::string const index = std::to_string(i);
        switch (i % 7) {
        case 0:
            testing::write_file(dir / ("junk-" + index + ".engine"), "not an engine", time);
            break;
        case 1:
            testing::write_file(dir / ("empty-" + index + ".engine"), "", time);
            break;
        case 2:
            testing::write_file(dir / ("t.engine.tmp-" + index + "-abc"), "partial", time);
            break;
        case 3: { // a recognized engine under another name
            nlohmann::json const conditions = {{"name", "copy"}, {"i", i}};
            testing::write_engine(dir / ("copy-" + index + ".engine"), conditions, {}, 8, time);
            break;
        }
        default: { // recognized: non-ASCII text, escapes, weights, limits
            nlohmann::json const conditions = {{"name", "m\xC3\xBC" + index},
                                               {"note", "tab\tquote\" \u00e9 \x01"},
                                               {"shape", {1, -1, static_cast<int>(i)}},
                                               {"weights", {digest}}};
            nlohmann::json const references = {{"workspace_limit", i % 2 == 0 ? 1024 : 0}};
            testing::write_engine(dir / testing::engine_name(conditions), conditions, references,
                                  16, time);
        }
        }
    }
    nlohmann::json const linked = {{"name", "linked"}};
    testing::write_engine(dir / testing::engine_name(linked), linked, {}, 32, 9);
    std::filesystem::create_directory(dir / "folder.engine");
    std::size_t listed = count + 2;
#ifndef _WIN32
    // A hard link of a recognized entry counts its bytes once (made on POSIX systems only: the
    // Windows build of this test runs under Wine, whose file identities of links are not ours).
    std::filesystem::create_hard_link(dir / testing::engine_name(linked),
                                      dir / "linked-copy.engine");
    ++listed;
#endif

    CacheScan const scan = scan_cache(dir);
    ASSERT_EQ(scan.entries.size(), listed);
    // The same scan, one entry at a time: metadata first, then each header on this thread.
    CacheScan one_by_one = scan_cache(dir, false);
    ASSERT_EQ(one_by_one.entries.size(), scan.entries.size());
    for (std::size_t i = 0; i < scan.entries.size(); ++i) {
        CacheEntry& entry = one_by_one.entries[i];
        if (entry.regular && !entry.temporary && entry.size_bytes > 0) {
            ASSERT_TRUE(read_entry_header(dir, entry));
        }
        ASSERT_EQ(entry.name, scan.entries[i].name);
        EXPECT_EQ(entry.status, scan.entries[i].status) << entry.name;
        EXPECT_EQ(entry.reason, scan.entries[i].reason) << entry.name;
        EXPECT_EQ(entry.header.has_value(), scan.entries[i].header.has_value()) << entry.name;
        EXPECT_EQ(entry.conditions_json, scan.entries[i].conditions_json) << entry.name;
    }
    EXPECT_EQ(scan.total_size_bytes, one_by_one.total_size_bytes);

    std::ostringstream out;
    write_listing_json(out, dir);
    std::istringstream lines(out.str());
    std::vector<std::string> entry_lines;
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("    ")) {
            if (line.ends_with(",")) {
                line.pop_back();
            }
            entry_lines.push_back(line.substr(4));
        }
    }
    std::vector<WeightRecord> const records = read_weight_records(dir);
    WeightPathIndex const weights{records};
    ASSERT_EQ(entry_lines.size(), scan.entries.size());
    std::size_t recognized = 0;
    for (std::size_t i = 0; i < scan.entries.size(); ++i) {
        EXPECT_EQ(entry_lines[i],
                  entry_json(scan.entries[i], weights)
                      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
            << scan.entries[i].name;
        recognized += scan.entries[i].status == EntryStatus::recognized ? 1U : 0U;
    }
    // i % 7 in 4..6 (2,600 = 7 * 371 + 3), and the linked entry under its own name only.
    EXPECT_EQ(recognized, 3 * (count / 7) + 1);
    EXPECT_EQ(nlohmann::json::parse(out.str()), listing_json(scan, records));
}

TEST(WriteListingJson, EmptyAndMissingDirectories) {
    TemporaryDirectory directory;
    for (auto const& dir : {directory.path(), directory.path() / "absent"}) {
        std::ostringstream out;
        write_listing_json(out, dir);
        EXPECT_EQ(nlohmann::json::parse(out.str()),
                  (nlohmann::json{{"directory", dir.string()},
                                  {"entries", nlohmann::json::array()},
                                  {"total_size_bytes", 0}}));
    }
}

} // namespace
} // namespace tensoracle
