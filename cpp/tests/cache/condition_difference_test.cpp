// Condition differences, the nearest saved entry of a name, and the details `cache show` prints.
#include "cache/condition_difference.hpp"
#include "cache/engine_file.hpp"
#include "cache/entry_details.hpp"
#include "cache/plan_checksum.hpp"
#include "support/cache_test_support.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

using testing::TemporaryDirectory;
using testing::write_engine;

nlohmann::json conditions() {
    return {{"name", "model"},
            {"graph_version", "3"},
            {"backend", "tensorrt_rtx"},
            {"backend_version", "1.7.1.116"},
            {"gpu", nullptr},
            {"weights", {std::string(64, 'a')}}};
}

TEST(ConditionDifference, DescribesEachChangedKeyForPeople) {
    nlohmann::json after = conditions();
    after["graph_version"] = "4";
    after["backend_version"] = "1.7.2.3";
    after["gpu"] = {{"name", "NVIDIA L40S"}};
    after["weights"] = {std::string(64, 'b')};
    after["extra"] = 1;
    WeightPathIndex const none{std::span<WeightRecord const>{}};
    auto const differences = condition_differences(conditions(), after, none);
    ASSERT_EQ(differences.size(), 5U);
    EXPECT_EQ(differences[0].description, "tensorrt_rtx version 1.7.1.116 \u2192 1.7.2.3");
    EXPECT_EQ(differences[1].description, "extra: none \u2192 1");
    EXPECT_EQ(differences[2].description, "gpu: none \u2192 NVIDIA L40S");
    EXPECT_EQ(differences[3].description, "graph_version 3 \u2192 4");
    EXPECT_EQ(differences[4].description, "weights: weight file 1 content changed");
    EXPECT_TRUE(condition_differences(after, after, none).empty());
}

TEST(ConditionDifference, NamesTheHardwareAnEntryIsBuiltFor) {
    nlohmann::json before = conditions();
    before["backend"] = "tensorrt";
    before["gpu"] = {{"name", "NVIDIA L40S"}, {"compute_capability", "8.9"}};
    nlohmann::json after = before;
    after["gpu"] = {{"compute_capability", "8.9"}};
    after["hardware_compatibility"] = "same_compute_capability";
    WeightPathIndex const none{std::span<WeightRecord const>{}};
    auto const differences = condition_differences(before, after, none);
    ASSERT_EQ(differences.size(), 2U);
    EXPECT_EQ(differences[0].description, "gpu: NVIDIA L40S \u2192 compute capability 8.9");
    EXPECT_EQ(differences[1].description,
              "hardware_compatibility: none \u2192 same_compute_capability");
    nlohmann::json portable = after;
    portable["gpu"] = nullptr;
    portable["hardware_compatibility"] = "ampere_plus";
    auto const wider = condition_differences(after, portable, none);
    ASSERT_EQ(wider.size(), 2U);
    EXPECT_EQ(wider[0].description, "gpu: compute capability 8.9 \u2192 none");
    EXPECT_EQ(wider[1].description,
              "hardware_compatibility: same_compute_capability \u2192 ampere_plus");
}

TEST(ConditionDifference, NearestEntryHasFewestDifferencesAndTheSameName) {
    TemporaryDirectory const directory;
    nlohmann::json far = conditions();
    far["graph_version"] = "1";
    far["backend_version"] = "1.0";
    nlohmann::json near = conditions();
    near["graph_version"] = "2";
    nlohmann::json other = conditions();
    other["name"] = "other";
    // Each under the store's name: a listing recognizes no engine under another name.
    write_engine(directory.path() / testing::engine_name(far), far, nullptr, 10, 3'000'000'000);
    write_engine(directory.path() / testing::engine_name(near), near, nullptr, 10, 1'000'000'000);
    write_engine(directory.path() / testing::engine_name(other), other, nullptr, 10, 2'000'000'000);
    auto const found = nearest_entry(directory.path(), conditions());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->file_name, testing::engine_name(near));
    ASSERT_EQ(found->differences.size(), 1U);
    EXPECT_EQ(found->differences[0].description, "graph_version 2 \u2192 3");
    nlohmann::json unknown = conditions();
    unknown["name"] = "never-saved";
    EXPECT_FALSE(nearest_entry(directory.path(), unknown).has_value());
}

// The version the file's own preamble holds: 2 for an entry saved now, 1 for one saved before
// chunk digests existed (both are read).
TEST(CacheEntryDetails, ShowTheFormatVersionOfTheFileItself) {
    TemporaryDirectory const directory;
    (void)write_engine(directory.path() / "new.engine", conditions(), {}, 77, 1'000'000'000);
    EXPECT_EQ(entry_details_json(directory.path() / "new.engine")["format_version"], 2);
    EngineHeader header;
    header.conditions = conditions();
    std::vector<std::byte> const plan = testing::random_bytes(77, 3);
    header.plan_size = plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(plan);
    std::vector<std::byte> bytes = encode_engine_prefix(header); // no chunks: format 1
    bytes.insert(bytes.end(), plan.begin(), plan.end());
    testing::write_all(directory.path() / "old.engine", bytes);
    EXPECT_EQ(entry_details_json(directory.path() / "old.engine")["format_version"], 1);
}

TEST(CacheEntryDetails, ShowsHeaderSizesAndResolvesNames) {
    TemporaryDirectory const directory;
    nlohmann::json const references = {{"targets", {"sm89"}}, {"built_at", "2026-11-30T10:00:00Z"}};
    std::uint64_t const size =
        write_engine(directory.path() / "a.engine", conditions(), references, 77, 1'000'000'000);
    auto const path = resolve_entry(directory.path(), "a.engine");
    nlohmann::json const details = entry_details_json(path);
    EXPECT_EQ(details["size_bytes"], size);
    EXPECT_EQ(details["plan_bytes"], 77);
    EXPECT_EQ(details["conditions"], conditions());
    EXPECT_EQ(details["targets"], nlohmann::json({"sm89"}));
    EXPECT_EQ(details["last_used_at"], "1970-01-01T00:00:01Z");
    std::string const table = entry_details_table(details);
    EXPECT_NE(table.find("graph_version"), std::string::npos);
    EXPECT_NE(table.find("2026-11-30T10:00:00Z"), std::string::npos);
    EXPECT_THROW((void)resolve_entry(directory.path(), "missing.engine"), FileError);
    nlohmann::json const rebuilt = {{"rebuild_reason",
                                     {{"compared_with", "a.engine"},
                                      {"differences", nlohmann::json::array()},
                                      {"cannot_run_here", "INVALID (OLD_CUDA_DRIVER)"}}}};
    write_engine(directory.path() / "b.engine", conditions(), rebuilt, 7, 1'000'000'000);
    std::string const shown =
        entry_details_table(entry_details_json(resolve_entry(directory.path(), "b.engine")));
    EXPECT_NE(shown.find("Built because"), std::string::npos) << shown;
    EXPECT_NE(shown.find("cannot run here"), std::string::npos) << shown;
    EXPECT_NE(shown.find("INVALID (OLD_CUDA_DRIVER)"), std::string::npos) << shown;
    nlohmann::json const diff = entry_diff_json(path, path);
    EXPECT_TRUE(diff["same"].get<bool>());
    EXPECT_NE(entry_diff_table(diff).find("equal"), std::string::npos);
}

} // namespace
} // namespace tensoracle
