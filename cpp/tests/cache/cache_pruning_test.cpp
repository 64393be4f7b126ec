// `tensoracle cache prune`: selection (pure), removal under identity locks with races injected
// through the before-removal hook, and the JSON plan and result.
#include "cache/pruning.hpp"
#include "cache/store.hpp"
#include "io/atomic_file.hpp"
#include "io/file_lock.hpp"
#include "support/cache_test_support.hpp"
#include "support/this_process.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <string>
#include <vector>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

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

// The store's file name of the engine whose conditions are {"name": name}.
std::string named(std::string const& name) {
    return testing::engine_name({{"name", name}});
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
    testing::write_engine(path(named("old")), {{"name", "old"}}, {}, 100, 1'000);
    testing::write_engine(path(named("new")), {{"name", "new"}}, {}, 200, 9'000);
    testing::write_file(path("empty.engine"), "", 1'000);
    testing::write_file(path("weight-abc.json"), "{}", 1'000);
    Store const store{directory.path()};
    PruneResult const result = execute_prune(store, plan_all_older_than(5'000));
    ASSERT_EQ(result.removed.size(), 1U);
    EXPECT_EQ(result.removed[0].name, named("old"));
    EXPECT_FALSE(std::filesystem::exists(path(named("old"))));
    EXPECT_TRUE(std::filesystem::exists(path(named("new"))));
    EXPECT_TRUE(std::filesystem::exists(path("empty.engine")));
    EXPECT_TRUE(std::filesystem::exists(path("weight-abc.json")));
    EXPECT_EQ(result.bytes_removed, result.removed[0].size_bytes);
    EXPECT_EQ(result.remaining_total_bytes, std::filesystem::file_size(path(named("new"))));
    EXPECT_TRUE(result.failed.empty());
    EXPECT_TRUE(result.missing.empty());
}

TEST_F(ExecutePrune, AFileGoneBeforeItsRemovalIsMissingAndNotCounted) {
    testing::write_engine(path(named("a")), {{"name", "a"}}, {}, 100, 1'000);
    testing::write_engine(path(named("b")), {{"name", "b"}}, {}, 100, 2'000);
    Store const store{directory.path()};
    PruneResult const result =
        execute_prune(store, plan_all_older_than(5'000), [this](PlannedRemoval const& entry) {
            if (entry.name == named("a")) {
                std::filesystem::remove(path(named("a")));
            }
        });
    ASSERT_EQ(result.missing, std::vector<std::string>{named("a")});
    EXPECT_FALSE(std::filesystem::exists(path(named("a") + ".lock")));
    ASSERT_EQ(result.removed.size(), 1U);
    EXPECT_EQ(result.removed[0].name, named("b"));
    EXPECT_EQ(result.bytes_removed, result.removed[0].size_bytes);
    EXPECT_EQ(result.remaining_total_bytes, 0U);
}

TEST_F(ExecutePrune, AChangedFileIsAFailedRemovalAndStays) {
    testing::write_engine(path(named("grew")), {{"name", "grew"}}, {}, 100, 1'000);
    testing::write_engine(path(named("touched")), {{"name", "touched"}}, {}, 100, 1'000);
    testing::write_engine(path(named("replaced")), {{"name", "replaced"}}, {}, 100, 1'000);
    Store const store{directory.path()};
    PruneResult const result =
        execute_prune(store, plan_all_older_than(5'000), [this](PlannedRemoval const& entry) {
            if (entry.name == named("grew")) {
                testing::append_bytes(path(named("grew")), "x");
                testing::set_mtime(path(named("grew")), 1'000);
            } else if (entry.name == named("touched")) {
                // 100 ns later: the smallest step of Windows file times.
                testing::set_mtime(path(named("touched")), 1'100);
            } else {
                // Same bytes and time in a new file renamed over the old one (a new inode).
                testing::write_all(path("replacement"), testing::read_all(path(named("replaced"))));
                testing::set_mtime(path("replacement"), 1'000);
                std::filesystem::rename(path("replacement"), path(named("replaced")));
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
    testing::write_engine(path(named("busy")), {{"name", "busy"}}, {}, 100, 1'000);
    testing::write_engine(path(named("idle")), {{"name", "idle"}}, {}, 100, 1'000);
    Store const store{directory.path()};
    FileLock const reader =
        FileLock::acquire(store.lock_path_for(path(named("busy"))), LockMode::shared);
    CacheEntry busy;
    busy.name = named("busy");
    EXPECT_TRUE(entry_lock_held(store, busy));
    CacheEntry idle;
    idle.name = named("idle");
    EXPECT_FALSE(entry_lock_held(store, idle));
    EXPECT_FALSE(std::filesystem::exists(store.lock_path_for(path(named("idle")))))
        << "probing must not create lock files";

    PruneResult const result = execute_prune(store, plan_all_older_than(5'000));
    ASSERT_EQ(result.excluded.size(), 1U);
    EXPECT_EQ(result.excluded[0].name, named("busy"));
    EXPECT_EQ(result.excluded[0].reason, "in use by another process");
    EXPECT_TRUE(std::filesystem::exists(path(named("busy"))));
    EXPECT_FALSE(std::filesystem::exists(path(named("idle"))));
}

TEST_F(ExecutePrune, MaxSizeResultSaysWhetherTheTotalFits) {
    testing::write_file(path("junk.engine"), std::string(1000, 'j'), 1'000);
    testing::write_engine(path(named("a")), {{"name", "a"}}, {}, 100, 1'000);
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

// --- temporary files whose writer is gone ------------------------------------------------

// No process has this id: beyond Linux's largest pid_max, and not a multiple of 4 as Windows
// process ids are.
constexpr long long kGonePid = 2'147'483'647;

TEST(TemporaryNames, GiveTheWriterAndTheTarget) {
    EXPECT_EQ(temporary_writer_pid("m.engine.tmp-4242-0a1b"), 4242);
    EXPECT_EQ(temporary_target_name("m.engine.tmp-4242-0a1b"), "m.engine");
    EXPECT_EQ(temporary_writer_pid("m.engine"), std::nullopt);
    EXPECT_EQ(temporary_target_name("m.engine"), "");
    EXPECT_EQ(temporary_writer_pid("m.engine.tmp-99999999999999999999999-ab"), std::nullopt);
}

TEST(PlanPrune, AbandonedTemporariesArePlannedForRemovalBeforeTheSizeIsJudged) {
    std::vector<CacheEntry> const entries{
        recognized("a.engine", 100, 1), recognized("b.engine", 100, 2),
        temporary("x.engine.tmp-7-ab", 300, 1), temporary("y.engine.tmp-8-cd", 50, 1)};
    auto const abandoned = [](CacheEntry const& entry) { return entry.name[0] == 'x'; };
    PrunePlan const plan = plan_prune(entries, max_size(150), {}, abandoned);
    ASSERT_EQ(plan.abandoned_temporaries.size(), 1U);
    EXPECT_EQ(plan.abandoned_temporaries[0].name, "x.engine.tmp-7-ab");
    EXPECT_EQ(plan.abandoned_temporary_bytes, 300U);
    EXPECT_EQ(excluded_names(plan.excluded), std::vector<std::string>{"y.engine.tmp-8-cd"});
    EXPECT_NE(plan.excluded[0].reason.find("temporary"), std::string::npos);
    // 550 in all; without the abandoned file 250, so removing a.engine is enough.
    EXPECT_EQ(plan.total_size_bytes, 550U);
    EXPECT_EQ(selected_names(plan), std::vector<std::string>{"a.engine"});
    EXPECT_EQ(plan.projected_total_bytes, 150U);
    EXPECT_TRUE(plan.attainable);

    nlohmann::json const json = plan_json("/cache", plan, true);
    ASSERT_EQ(json["abandoned_temporaries"].size(), 1U);
    EXPECT_EQ(json["abandoned_temporaries"][0]["file_name"], "x.engine.tmp-7-ab");
    EXPECT_EQ(json["abandoned_temporaries"][0]["writer_pid"], 7);
    EXPECT_EQ(json["abandoned_temporaries"][0]["size_bytes"], 300);
    EXPECT_EQ(json["abandoned_temporary_bytes"], 300);

    // A dry run only lists them.
    nlohmann::json const dry = result_json(dry_run_result(plan), plan.criterion);
    EXPECT_TRUE(dry["removed_temporaries"].empty());
    EXPECT_EQ(dry["temporary_bytes_removed"], 0);
}

TEST_F(ExecutePrune, ATemporaryFileIsAbandonedOnlyWhenItsWriterIsGoneItIsOldAndUnlocked) {
    std::int64_t const now = 100 * kAbandonedTemporaryAgeNs;
    std::int64_t const old = now - kAbandonedTemporaryAgeNs - 1;
    std::string const target = named("m");
    std::string const gone = target + ".tmp-" + std::to_string(kGonePid) + "-ab";
    std::string const mine = target + ".tmp-" + std::to_string(testing::this_process_id()) + "-cd";
    std::string const recent = target + ".tmp-" + std::to_string(kGonePid) + "-ef";
    testing::write_file(path(gone), "left by a killed save", old);
    testing::write_file(path(mine), "being written", old);
    testing::write_file(path(recent), "just written", now - 1'000'000'000);
    Store const store{directory.path()};
    std::vector<CacheEntry> const entries = scan_cache(directory.path()).entries;
    ASSERT_EQ(entries.size(), 3U);
    auto const judged = [&](std::string const& name) {
        auto const found =
            std::find_if(entries.begin(), entries.end(),
                         [&](CacheEntry const& entry) { return entry.name == name; });
        return temporary_abandoned(store, *found, now);
    };
    EXPECT_TRUE(judged(gone));
    EXPECT_FALSE(judged(mine)) << "this process is alive";
    EXPECT_FALSE(judged(recent)) << "younger than the grace period";
    EXPECT_FALSE(std::filesystem::exists(path(target + ".lock"))) << "probing creates no lock";
    {
        FileLock const builder = FileLock::acquire(path(target + ".lock"), LockMode::shared);
        EXPECT_FALSE(judged(gone)) << "its entry's lock is held";
    }
    EXPECT_TRUE(judged(gone));
    CacheEntry engine;
    engine.name = target;
    EXPECT_FALSE(temporary_abandoned(store, engine, now)) << "not a temporary file";
}

TEST_F(ExecutePrune, RemovesAbandonedTemporariesWhateverTheCriterionAndReportsThem) {
    std::int64_t const now = 100 * kAbandonedTemporaryAgeNs;
    std::string const target = named("m");
    std::string const gone = target + ".tmp-" + std::to_string(kGonePid) + "-ab";
    std::string const mine = target + ".tmp-" + std::to_string(testing::this_process_id()) + "-cd";
    testing::write_file(path(gone), std::string(48, 't'), 1'000);
    testing::write_file(path(mine), std::string(10, 'u'), 1'000);
    testing::write_engine(path(named("kept")), {{"name", "kept"}}, {}, 100, now);
    Store const store{directory.path()};
    TemporaryProbe const abandoned = [&](CacheEntry const& entry) {
        return temporary_abandoned(store, entry, now);
    };
    PrunePlan const plan =
        plan_prune(scan_cache(directory.path()).entries, unused_before(0), {}, abandoned);
    ASSERT_EQ(plan.abandoned_temporaries.size(), 1U);
    EXPECT_EQ(plan.abandoned_temporaries[0].name, gone);
    EXPECT_TRUE(plan.selected.empty());
    EXPECT_EQ(excluded_names(plan.excluded), std::vector<std::string>{mine});

    PruneResult const dry = dry_run_result(plan);
    EXPECT_TRUE(dry.removed_temporaries.empty());
    EXPECT_TRUE(std::filesystem::exists(path(gone)));

    PruneResult const result = execute_prune(store, plan, {}, abandoned);
    ASSERT_EQ(result.removed_temporaries.size(), 1U);
    EXPECT_EQ(result.removed_temporaries[0].name, gone);
    EXPECT_EQ(result.temporary_bytes_removed, 48U);
    EXPECT_EQ(result.bytes_removed, 0U);
    EXPECT_TRUE(result.failed.empty());
    EXPECT_FALSE(std::filesystem::exists(path(gone)));
    EXPECT_TRUE(std::filesystem::exists(path(mine)));
    EXPECT_TRUE(std::filesystem::exists(path(named("kept"))));
    EXPECT_FALSE(std::filesystem::exists(path(target + ".lock")));
    EXPECT_EQ(result.remaining_total_bytes, 10 + std::filesystem::file_size(path(named("kept"))));
    nlohmann::json const json = result_json(result, plan.criterion);
    ASSERT_EQ(json["removed_temporaries"].size(), 1U);
    EXPECT_EQ(json["removed_temporaries"][0]["file_name"], gone);
    EXPECT_EQ(json["temporary_bytes_removed"], 48);
}

TEST_F(ExecutePrune, ATemporaryFileWrittenAgainSinceThePlanIsKept) {
    std::string const gone = named("m") + ".tmp-" + std::to_string(kGonePid) + "-ab";
    testing::write_file(path(gone), "partial", 1'000);
    Store const store{directory.path()};
    PrunePlan const plan = plan_prune(scan_cache(directory.path()).entries, unused_before(0), {},
                                      [](CacheEntry const&) { return true; });
    ASSERT_EQ(plan.abandoned_temporaries.size(), 1U);
    PruneResult const result = execute_prune(
        store, plan, [&](PlannedRemoval const&) { testing::append_bytes(path(gone), "more"); });
    EXPECT_TRUE(result.removed_temporaries.empty());
    EXPECT_TRUE(result.failed.empty());
    ASSERT_EQ(result.excluded.size(), 1U);
    EXPECT_NE(result.excluded[0].reason.find("in use"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(path(gone)));
}

} // namespace
} // namespace tensoracle
