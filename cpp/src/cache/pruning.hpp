// `tensoracle cache prune`: which saved engines to remove (pure selection), the removal itself
// under each entry's identity lock, and the JSON plan and result that the command prints.
#pragma once

#include "cache/listing.hpp"
#include "cache/store.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

inline constexpr std::string_view kInUseReason = "in use by another process";

// An entry the plan removes, with the metadata the removal must still observe.
struct PlannedRemoval {
    std::string name;
    std::uint64_t size_bytes = 0;
    std::int64_t recorded_at_ns = 0;
    std::uint64_t inode = 0;
    std::uint64_t device = 0;
};

// How long a temporary file whose writer has ended stays before prune removes it: its
// modification time must be older than this (a writer that cannot be seen from here, in another
// PID namespace or on another machine sharing the directory, keeps touching its file as it
// writes).
inline constexpr std::int64_t kAbandonedTemporaryAgeNs = std::int64_t{10} * 60 * 1'000'000'000;

struct ExcludedEntry {
    std::string name;
    std::uint64_t size_bytes = 0;
    std::int64_t recorded_at_ns = 0;
    std::string reason;
};

struct PruneCriterion {
    // Exactly one is set.
    std::optional<std::int64_t> cutoff_ns;       // --unused-for: remove times strictly earlier
    std::optional<std::uint64_t> max_size_bytes; // --max-size: remove oldest first until fits
};

struct PrunePlan {
    PruneCriterion criterion;
    std::vector<PlannedRemoval> selected; // oldest recorded time first, ties by name
    std::vector<ExcludedEntry> excluded;  // by name
    // Temporary files whose writer is gone (TemporaryProbe), by name: removed whatever the
    // criterion, before the selection is judged against --max-size.
    std::vector<PlannedRemoval> abandoned_temporaries;
    // Every listed file, each counted once (hard links of one file are one file).
    std::uint64_t total_size_bytes = 0;
    std::uint64_t selected_bytes = 0;            // the selected files, each once
    std::uint64_t abandoned_temporary_bytes = 0; // the abandoned temporaries, each once
    // What stays once the selection and the abandoned temporaries are gone (a file that keeps
    // another name still counts); for --max-size, whether it fits the limit (always true
    // otherwise).
    std::uint64_t projected_total_bytes = 0;
    bool attainable = true;
};

// Why an entry is never removed by the criterion (empty, temporary, not a regular file or
// unrecognized), or nullopt.
std::optional<std::string> never_removed_reason(CacheEntry const& entry);

// True when another process holds the entry's identity lock. Called only for entries that the
// criterion would otherwise select.
using InUseProbe = std::function<bool(CacheEntry const&)>;

// True when the temporary file `entry` is abandoned: its writer is gone. Called only for regular
// temporary files.
using TemporaryProbe = std::function<bool(CacheEntry const&)>;

// Pure selection over the scanned entries (any order). Every never-removed entry is listed as
// excluded, but a temporary file that `abandoned` reports abandoned is planned for removal
// instead; an entry the probe reports in use is excluded instead of selected, and --max-size
// then goes on to the next oldest entry.
PrunePlan plan_prune(std::span<CacheEntry const> entries, PruneCriterion const& criterion,
                     InUseProbe const& in_use, TemporaryProbe const& abandoned = {});

// Whether the temporary file `entry` of `store` has been left by a writer that is gone: the
// process its name records (AtomicFile's "<entry>.tmp-<pid>-<random>") does not run on this
// machine, its modification time is more than `min_age_ns` before `now_ns`, and nobody holds its
// entry's identity lock (probed without creating the lock file). A temporary file of a live
// process, or a recent one, is never abandoned.
bool temporary_abandoned(Store const& store, CacheEntry const& entry, std::int64_t now_ns,
                         std::int64_t min_age_ns = kAbandonedTemporaryAgeNs);

struct FailedRemoval {
    std::string name;
    std::string reason;
};

struct PruneResult {
    bool dry_run = false;
    std::vector<PlannedRemoval> removed;
    std::vector<PlannedRemoval> removed_temporaries; // abandoned temporary files removed
    std::vector<ExcludedEntry> excluded;
    std::vector<FailedRemoval> failed;
    std::vector<std::string> missing;
    std::uint64_t bytes_removed = 0;           // of `removed`, each file once
    std::uint64_t temporary_bytes_removed = 0; // of `removed_temporaries`, each file once
    std::uint64_t remaining_total_bytes = 0;
    std::optional<std::uint64_t> projected_total_bytes; // dry runs only
    bool within_max_size = true;                        // for --max-size
};

// Called just before an entry is locked and removed; tests use it to race the removal.
using BeforeRemoval = std::function<void(PlannedRemoval const&)>;

// Removes the abandoned temporary files of `plan`, then its selected entries, from `directory`.
// A temporary file is removed only when it is still the planned file and `abandoned` (when
// given) still says so. Each entry's removal holds the entry's identity lock (exclusive, never
// waiting: a held lock gives "in use by another process"), and removes the file only when its
// size, modification time, device and inode are still those of the plan (else a failure naming
// what changed). A file already gone is `missing`. Lock files and weight records are kept. The
// remaining total is measured again after the removals.
PruneResult execute_prune(Store const& store, PrunePlan const& plan,
                          BeforeRemoval const& before_removal = {},
                          TemporaryProbe const& abandoned = {});

// The result of a dry run: nothing removed, the plan's exclusions, and the projected total.
PruneResult dry_run_result(PrunePlan const& plan);

// Reports whether the identity lock file beside `entry` is held by another process (a missing
// lock file means nobody holds it; the probe never creates one).
bool entry_lock_held(Store const& store, CacheEntry const& entry);

nlohmann::json plan_json(std::filesystem::path const& directory, PrunePlan const& plan,
                         bool dry_run);
nlohmann::json result_json(PruneResult const& result, PruneCriterion const& criterion);

} // namespace tensoracle
