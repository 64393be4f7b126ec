// `tensoracle cache prune`: selection (pure), removal under identity locks with races injected
// through the before-removal hook, and the JSON plan and result.
#include "support/cache_test_support.hpp"
#include "tensoracle/cache/cache_pruning.hpp"
#include "tensoracle/cache/store.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/file_lock.hpp"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

using testing::TemporaryDirectory;

CacheEntry recognized(std::string name, std::uint64_t size, std::int64_t time) {
    CacheEntry entry;
    entry.name = std::move(name);
    entry.size_bytes = size;
    entry.recorded_at_ns = time;
    entry.status = EntryStatus::recognized;
    entry.header = EngineHeader{};
    return entry;
}

CacheEntry empty_file(std::string name, std::int64_t time) {
    CacheEntry entry;
    entry.name = std::move(name);
    entry.recorded_at_ns = time;
    entry.status = EntryStatus::building_or_leftover;
    return entry;
}

CacheEntry unrecognized(std::string name, std::uint64_t size, std::int64_t time) {
    CacheEntry entry;
    entry.name = std::move(name);
    entry.size_bytes = size;
    entry.recorded_at_ns = time;
    entry.status = EntryStatus::unrecognized;
    entry.reason = "not a tensoracle engine file";
    return entry;
}

CacheEntry temporary(std::string name, std::uint64_t size, std::int64_t time) {
    CacheEntry entry = empty_file(std::move(name), time);
    entry.size_bytes = size;
    entry.temporary = true;
    return entry;
}

std::vector<std::string> selected_names(PrunePlan const& plan) {
    std::vector<std::string> names;
    for (PlannedRemoval const& entry : plan.selected) {
        names.push_back(entry.name);
    }
    return names;
}

std::vector<std::string> excluded_names(std::vector<ExcludedEntry> const& entries) {
    std::vector<std::string> names;
    for (ExcludedEntry const& entry : entries) {
        names.push_back(entry.name);
    }
    return names;
}

PruneCriterion unused_before(std::int64_t cutoff) {
    return {cutoff, std::nullopt};
}
PruneCriterion max_size(std::uint64_t bytes) {
    return {std::nullopt, bytes};
}

TEST(PlanPrune, UnusedForSelectsOnlyTimesStrictlyBeforeTheCutoff) {
    std::vector<CacheEntry> const entries{recognized("before.engine", 10, 999),
                                          recognized("at.engine", 20, 1000),
                                          recognized("after.engine", 30, 1001)};
    PrunePlan const plan = plan_prune(entries, unused_before(1000), {});
    EXPECT_EQ(selected_names(plan), std::vector<std::string>{"before.engine"});
    EXPECT_EQ(plan.total_size_bytes, 60U);
    EXPECT_EQ(plan.selected_bytes, 10U);
    EXPECT_EQ(plan.projected_total_bytes, 50U);
    EXPECT_TRUE(plan.attainable);
}

TEST(PlanPrune, UnusedForOrdersTheSelectionOldestFirstThenByName) {
    std::vector<CacheEntry> const entries{
        recognized("c.engine", 1, 5), recognized("a.engine", 1, 7), recognized("b.engine", 1, 5)};
    PrunePlan const plan = plan_prune(entries, unused_before(100), {});
    EXPECT_EQ(selected_names(plan), (std::vector<std::string>{"b.engine", "c.engine", "a.engine"}));
}

TEST(PlanPrune, NeverSelectsEmptyUnrecognizedOrTemporaryFiles) {
    std::vector<CacheEntry> const entries{
        empty_file("empty.engine", 1), unrecognized("junk.engine", 7, 1),
        temporary("x.engine.tmp-12-ab", 9, 1), recognized("old.engine", 5, 1)};
    PrunePlan const plan = plan_prune(entries, unused_before(1000), {});
    EXPECT_EQ(selected_names(plan), std::vector<std::string>{"old.engine"});
    ASSERT_EQ(excluded_names(plan.excluded),
              (std::vector<std::string>{"empty.engine", "junk.engine", "x.engine.tmp-12-ab"}));
    EXPECT_NE(plan.excluded[0].reason.find("empty"), std::string::npos);
    EXPECT_NE(plan.excluded[1].reason.find("unrecognized"), std::string::npos);
    EXPECT_NE(plan.excluded[1].reason.find("not a tensoracle engine file"), std::string::npos);
    EXPECT_NE(plan.excluded[2].reason.find("temporary"), std::string::npos);
    EXPECT_EQ(plan.total_size_bytes, 21U);
}

TEST(PlanPrune, MaxSizeRemovesOldestFirstWithTiesByNameUntilTheTotalFits) {
    std::vector<CacheEntry> const entries{
        recognized("new.engine", 100, 30), recognized("tie-b.engine", 100, 10),
        recognized("tie-a.engine", 100, 10), recognized("mid.engine", 100, 20)};
    PrunePlan const plan = plan_prune(entries, max_size(250), {});
    EXPECT_EQ(selected_names(plan), (std::vector<std::string>{"tie-a.engine", "tie-b.engine"}));
    EXPECT_EQ(plan.projected_total_bytes, 200U);
    EXPECT_TRUE(plan.attainable);
}

TEST(PlanPrune, MaxSizeStopsExactlyAtTheLimit) {
    std::vector<CacheEntry> const entries{recognized("a.engine", 100, 1),
                                          recognized("b.engine", 100, 2)};
    EXPECT_TRUE(plan_prune(entries, max_size(200), {}).selected.empty());
    EXPECT_EQ(selected_names(plan_prune(entries, max_size(199), {})),
              std::vector<std::string>{"a.engine"});
    EXPECT_EQ(selected_names(plan_prune(entries, max_size(0), {})),
              (std::vector<std::string>{"a.engine", "b.engine"}));
}

TEST(PlanPrune, MaxSizeCountsFilesItNeverRemoves) {
    std::vector<CacheEntry> const entries{
        unrecognized("junk.engine", 500, 1), temporary("n.engine.tmp-1-x", 300, 1),
        empty_file("e.engine", 1), recognized("a.engine", 100, 9), recognized("b.engine", 100, 8)};
    PrunePlan const fits = plan_prune(entries, max_size(900), {});
    EXPECT_EQ(selected_names(fits), std::vector<std::string>{"b.engine"});
    EXPECT_TRUE(fits.attainable);

    PrunePlan const cannot = plan_prune(entries, max_size(799), {});
    EXPECT_EQ(selected_names(cannot), (std::vector<std::string>{"b.engine", "a.engine"}));
    EXPECT_FALSE(cannot.attainable);
    EXPECT_EQ(cannot.projected_total_bytes, 800U);
}

TEST(PlanPrune, AnEntryInUseIsExcludedAndMaxSizeTakesTheNextOldest) {
    std::vector<CacheEntry> const entries{recognized("a.engine", 100, 1),
                                          recognized("b.engine", 100, 2),
                                          recognized("c.engine", 100, 3)};
    std::vector<std::string> probed;
    auto const probe = [&probed](CacheEntry const& entry) {
        probed.push_back(entry.name);
        return entry.name == "a.engine";
    };
    PrunePlan const plan = plan_prune(entries, max_size(200), probe);
    EXPECT_EQ(selected_names(plan), std::vector<std::string>{"b.engine"});
    ASSERT_EQ(plan.excluded.size(), 1U);
    EXPECT_EQ(plan.excluded[0].name, "a.engine");
    EXPECT_EQ(plan.excluded[0].reason, "in use by another process");
    EXPECT_EQ(probed, (std::vector<std::string>{"a.engine", "b.engine"}));
}

TEST(PlanPrune, UnusedForProbesOnlyEntriesItWouldSelect) {
    std::vector<CacheEntry> const entries{recognized("old.engine", 1, 1),
                                          recognized("new.engine", 1, 50)};
    std::vector<std::string> probed;
    auto const probe = [&probed](CacheEntry const& entry) {
        probed.push_back(entry.name);
        return false;
    };
    plan_prune(entries, unused_before(10), probe);
    EXPECT_EQ(probed, std::vector<std::string>{"old.engine"});
}

TEST(PlanPrune, RequiresExactlyOneCriterion) {
    std::vector<CacheEntry> const entries;
    EXPECT_THROW(plan_prune(entries, PruneCriterion{}, {}), InvalidArgument);
    EXPECT_THROW(plan_prune(entries, PruneCriterion{1, 1}, {}), InvalidArgument);
}

TEST(PruneJson, PlanListsSelectionExclusionsAndTheRebuildNotice) {
    std::vector<CacheEntry> const entries{recognized("b.engine", 100, 2'000'000'000),
                                          recognized("a.engine", 50, 1'000'000'000),
                                          empty_file("e.engine", 3)};
    PrunePlan const plan = plan_prune(entries, max_size(0), {});
    nlohmann::json const json = plan_json("/cache", plan, true);
    EXPECT_EQ(json["directory"], "/cache");
    EXPECT_EQ(json["dry_run"], true);
    EXPECT_EQ(json["criterion"]["max_size_bytes"], 0);
    EXPECT_EQ(json["total_size_bytes"], 150);
    EXPECT_EQ(json["selected_bytes"], 150);
    EXPECT_EQ(json["projected_total_bytes"], 0);
    EXPECT_EQ(json["attainable"], true);
    ASSERT_EQ(json["selected"].size(), 2U);
    EXPECT_EQ(json["selected"][0], (nlohmann::json{{"file_name", "a.engine"},
                                                   {"size_bytes", 50},
                                                   {"recorded_at", "1970-01-01T00:00:01Z"},
                                                   {"recorded_at_ns", 1'000'000'000}}));
    EXPECT_EQ(json["selected"][1]["file_name"], "b.engine");
    ASSERT_EQ(json["excluded"].size(), 1U);
    EXPECT_EQ(json["excluded"][0]["file_name"], "e.engine");
    EXPECT_TRUE(json["excluded"][0]["reason"].is_string());
    EXPECT_NE(json["notice"].get<std::string>().find("rebuil"), std::string::npos);
}

TEST(PruneJson, DryRunResultRemovesNothingAndProjectsTheTotal) {
    std::vector<CacheEntry> const entries{recognized("a.engine", 100, 1),
                                          recognized("b.engine", 100, 2)};
    PrunePlan const plan = plan_prune(entries, max_size(150), {});
    nlohmann::json const json = result_json(dry_run_result(plan), plan.criterion);
    EXPECT_EQ(json["dry_run"], true);
    EXPECT_TRUE(json["removed"].empty());
    EXPECT_TRUE(json["failed"].empty());
    EXPECT_TRUE(json["missing"].empty());
    EXPECT_EQ(json["bytes_removed"], 0);
    EXPECT_EQ(json["remaining_total_bytes"], 200);
    EXPECT_EQ(json["projected_total_bytes"], 100);
    EXPECT_EQ(json["max_size_bytes"], 150);
    EXPECT_EQ(json["within_max_size"], true);
}

// --- removal on real files ---------------------------------------------------------------

class ExecutePrune : public ::testing::Test {
protected:
    TemporaryDirectory directory;
    std::filesystem::path path(std::string const& name) const { return directory.path() / name; }

    PrunePlan plan_all_older_than(std::int64_t cutoff) const {
        return plan_prune(scan_cache(directory.path()).entries, unused_before(cutoff), {});
    }
};

TEST_F(ExecutePrune, RemovesTheSelectionAndKeepsEverythingElse) {
    testing::write_engine(path("old.engine"), {{"name", "old"}}, {}, 100, 1'000);
    testing::write_engine(path("new.engine"), {{"name", "new"}}, {}, 200, 9'000);
    testing::write_file(path("empty.engine"), "", 1'000);
    testing::write_file(path("weight-abc.json"), "{}", 1'000);
    Store const store{directory.path()};
    PruneResult const result = execute_prune(store, plan_all_older_than(5'000));
    ASSERT_EQ(result.removed.size(), 1U);
    EXPECT_EQ(result.removed[0].name, "old.engine");
    EXPECT_FALSE(std::filesystem::exists(path("old.engine")));
    EXPECT_TRUE(std::filesystem::exists(path("new.engine")));
    EXPECT_TRUE(std::filesystem::exists(path("empty.engine")));
    EXPECT_TRUE(std::filesystem::exists(path("weight-abc.json")));
    EXPECT_EQ(result.bytes_removed, result.removed[0].size_bytes);
    EXPECT_EQ(result.remaining_total_bytes, std::filesystem::file_size(path("new.engine")));
    EXPECT_TRUE(result.failed.empty());
    EXPECT_TRUE(result.missing.empty());
}

TEST_F(ExecutePrune, AFileGoneBeforeItsRemovalIsMissingAndNotCounted) {
    testing::write_engine(path("a.engine"), {{"name", "a"}}, {}, 100, 1'000);
    testing::write_engine(path("b.engine"), {{"name", "b"}}, {}, 100, 2'000);
    Store const store{directory.path()};
    PruneResult const result =
        execute_prune(store, plan_all_older_than(5'000), [this](PlannedRemoval const& entry) {
            if (entry.name == "a.engine") {
                std::filesystem::remove(path("a.engine"));
            }
        });
    ASSERT_EQ(result.missing, std::vector<std::string>{"a.engine"});
    EXPECT_FALSE(std::filesystem::exists(path("a.engine.lock")));
    ASSERT_EQ(result.removed.size(), 1U);
    EXPECT_EQ(result.removed[0].name, "b.engine");
    EXPECT_EQ(result.bytes_removed, result.removed[0].size_bytes);
    EXPECT_EQ(result.remaining_total_bytes, 0U);
}

TEST_F(ExecutePrune, AChangedFileIsAFailedRemovalAndStays) {
    testing::write_engine(path("grew.engine"), {{"name", "grew"}}, {}, 100, 1'000);
    testing::write_engine(path("touched.engine"), {{"name", "touched"}}, {}, 100, 1'000);
    testing::write_engine(path("replaced.engine"), {{"name", "replaced"}}, {}, 100, 1'000);
    Store const store{directory.path()};
    PruneResult const result =
        execute_prune(store, plan_all_older_than(5'000), [this](PlannedRemoval const& entry) {
            if (entry.name == "grew.engine") {
                testing::append_bytes(path("grew.engine"), "x");
                testing::set_mtime(path("grew.engine"), 1'000);
            } else if (entry.name == "touched.engine") {
                // 100 ns later: the smallest step of Windows file times.
                testing::set_mtime(path("touched.engine"), 1'100);
            } else {
                // Same bytes and time in a new file renamed over the old one (a new inode).
                testing::write_all(path("replacement"), testing::read_all(path("replaced.engine")));
                testing::set_mtime(path("replacement"), 1'000);
                std::filesystem::rename(path("replacement"), path("replaced.engine"));
            }
        });
    EXPECT_TRUE(result.removed.empty());
    EXPECT_EQ(result.bytes_removed, 0U);
    ASSERT_EQ(result.failed.size(), 3U);
    for (FailedRemoval const& failure : result.failed) {
        EXPECT_TRUE(std::filesystem::exists(path(failure.name))) << failure.name;
        EXPECT_NE(failure.reason.find("changed since the plan"), std::string::npos);
    }
    EXPECT_NE(result.failed[0].reason.find("size"), std::string::npos) << result.failed[0].reason;
    EXPECT_NE(result.failed[1].reason.find("inode"), std::string::npos) << result.failed[1].reason;
    EXPECT_NE(result.failed[2].reason.find("recorded_at_ns 1000 -> 1100"), std::string::npos)
        << result.failed[2].reason;
}

TEST_F(ExecutePrune, AnEntryWhoseLockIsHeldIsExcludedAsInUse) {
    testing::write_engine(path("busy.engine"), {{"name", "busy"}}, {}, 100, 1'000);
    testing::write_engine(path("idle.engine"), {{"name", "idle"}}, {}, 100, 1'000);
    Store const store{directory.path()};
    FileLock const reader =
        FileLock::acquire(store.lock_path_for(path("busy.engine")), LockMode::shared);
    CacheEntry busy;
    busy.name = "busy.engine";
    EXPECT_TRUE(entry_lock_held(store, busy));
    CacheEntry idle;
    idle.name = "idle.engine";
    EXPECT_FALSE(entry_lock_held(store, idle));
    EXPECT_FALSE(std::filesystem::exists(store.lock_path_for(path("idle.engine"))))
        << "probing must not create lock files";

    PruneResult const result = execute_prune(store, plan_all_older_than(5'000));
    ASSERT_EQ(result.excluded.size(), 1U);
    EXPECT_EQ(result.excluded[0].name, "busy.engine");
    EXPECT_EQ(result.excluded[0].reason, "in use by another process");
    EXPECT_TRUE(std::filesystem::exists(path("busy.engine")));
    EXPECT_FALSE(std::filesystem::exists(path("idle.engine")));
}

TEST_F(ExecutePrune, MaxSizeResultSaysWhetherTheTotalFits) {
    testing::write_file(path("junk.engine"), std::string(1000, 'j'), 1'000);
    testing::write_engine(path("a.engine"), {{"name", "a"}}, {}, 100, 1'000);
    Store const store{directory.path()};
    PrunePlan const plan = plan_prune(scan_cache(directory.path()).entries, max_size(500), {});
    EXPECT_FALSE(plan.attainable);
    PruneResult const result = execute_prune(store, plan);
    EXPECT_FALSE(result.within_max_size);
    EXPECT_EQ(result.remaining_total_bytes, 1000U);
    EXPECT_TRUE(std::filesystem::exists(path("junk.engine")));
    nlohmann::json const json = result_json(result, plan.criterion);
    EXPECT_EQ(json["within_max_size"], false);
    EXPECT_FALSE(json.contains("projected_total_bytes"));
}

} // namespace
} // namespace tensoracle
