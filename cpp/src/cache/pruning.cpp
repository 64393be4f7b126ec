// Selection, removal and reporting for `tensoracle cache prune`.
#include "cache/pruning.hpp"

#include "io/atomic_file.hpp"
#include "io/file_lock.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace tensoracle {
namespace {

constexpr std::string_view kRebuildNotice =
    "Removed engines will be rebuilt by open_engine the next time they are used, which takes "
    "as long as their first build.";

bool older_first(CacheEntry const* a, CacheEntry const* b) {
    if (a->recorded_at_ns != b->recorded_at_ns) {
        return a->recorded_at_ns < b->recorded_at_ns;
    }
    return a->name < b->name;
}

PlannedRemoval planned(CacheEntry const& entry) {
    return {entry.name, entry.size_bytes, entry.recorded_at_ns, entry.inode, entry.device};
}

// The entry as the removal sees it now, for a second look of the temporary-file probe.
CacheEntry as_entry(PlannedRemoval const& planned_entry) {
    CacheEntry entry;
    entry.name = planned_entry.name;
    entry.size_bytes = planned_entry.size_bytes;
    entry.recorded_at_ns = planned_entry.recorded_at_ns;
    entry.inode = planned_entry.inode;
    entry.device = planned_entry.device;
    entry.temporary = true;
    return entry;
}

// How many names each file (device, inode) has among the entries, so that the bytes of a file
// leave the total only with its last name. Entries of inode 0 (unknown) are files of their own.
class NameCounts {
public:
    explicit NameCounts(std::span<CacheEntry const> entries) {
        for (CacheEntry const& entry : entries) {
            if (entry.inode != 0) {
                ++names_[{entry.device, entry.inode}];
            }
        }
    }
    // The bytes that leave the total when this name goes.
    std::uint64_t released(std::uint64_t device, std::uint64_t inode, std::uint64_t size) {
        if (inode == 0) {
            return size;
        }
        auto const found = names_.find({device, inode});
        if (found == names_.end() || found->second == 0) {
            return 0;
        }
        return --found->second == 0 ? size : 0;
    }

private:
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> names_;
};

ExcludedEntry excluded(CacheEntry const& entry, std::string reason) {
    return {entry.name, entry.size_bytes, entry.recorded_at_ns, std::move(reason)};
}

// What differs between the planned entry and the file now, or an empty string.
std::string observed_change(PlannedRemoval const& entry, platform::FileStatus const& status) {
    std::string change;
    auto const note = [&change](std::string const& text) {
        change += (change.empty() ? "" : ", ") + text;
    };
    if (status.size != entry.size_bytes) {
        note("size " + std::to_string(entry.size_bytes) + " -> " + std::to_string(status.size) +
             " bytes");
    }
    if (status.modified_ns != entry.recorded_at_ns) {
        note("recorded_at_ns " + std::to_string(entry.recorded_at_ns) + " -> " +
             std::to_string(status.modified_ns));
    }
    if (status.identity != entry.inode || status.device != entry.device) {
        note("replaced by another file (inode " + std::to_string(entry.inode) + " -> " +
             std::to_string(status.identity) + ")");
    }
    if (status.kind != platform::FileKind::regular) {
        note("no longer a regular file");
    }
    return change;
}

nlohmann::json removal_json(PlannedRemoval const& entry) {
    return {{"file_name", entry.name},
            {"size_bytes", entry.size_bytes},
            {"recorded_at", format_utc_time(entry.recorded_at_ns)},
            {"recorded_at_ns", entry.recorded_at_ns}};
}

nlohmann::json excluded_json(std::span<ExcludedEntry const> entries) {
    nlohmann::json list = nlohmann::json::array();
    for (ExcludedEntry const& entry : entries) {
        list.push_back({{"file_name", entry.name},
                        {"size_bytes", entry.size_bytes},
                        {"recorded_at", format_utc_time(entry.recorded_at_ns)},
                        {"recorded_at_ns", entry.recorded_at_ns},
                        {"reason", entry.reason}});
    }
    return list;
}

nlohmann::json removals_json(std::span<PlannedRemoval const> entries) {
    nlohmann::json list = nlohmann::json::array();
    for (PlannedRemoval const& entry : entries) {
        list.push_back(removal_json(entry));
    }
    return list;
}

// As removals_json, with the id of the process that wrote each file ("writer_pid").
nlohmann::json temporaries_json(std::span<PlannedRemoval const> entries) {
    nlohmann::json list = nlohmann::json::array();
    for (PlannedRemoval const& entry : entries) {
        nlohmann::json json = removal_json(entry);
        json["writer_pid"] = temporary_writer_pid(entry.name).value_or(0);
        list.push_back(std::move(json));
    }
    return list;
}

void sort_by_name(std::vector<ExcludedEntry>& entries) {
    std::sort(entries.begin(), entries.end(),
              [](ExcludedEntry const& a, ExcludedEntry const& b) { return a.name < b.name; });
}

} // namespace

std::optional<std::string> never_removed_reason(CacheEntry const& entry) {
    if (!entry.regular) {
        return "unrecognized, not a regular file; never removed: " + entry.reason;
    }
    if (entry.temporary) {
        return "temporary file of a save in progress (building or leftover); removed only once "
               "its writer is gone";
    }
    if (entry.size_bytes == 0 || entry.status == EntryStatus::building_or_leftover) {
        return "empty file (building or leftover); never removed";
    }
    if (entry.status == EntryStatus::unrecognized) {
        return "unrecognized; never removed" +
               (entry.reason.empty() ? std::string() : ": " + entry.reason);
    }
    return std::nullopt;
}

PrunePlan plan_prune(std::span<CacheEntry const> entries, PruneCriterion const& criterion,
                     InUseProbe const& in_use, TemporaryProbe const& abandoned) {
    if (criterion.cutoff_ns.has_value() == criterion.max_size_bytes.has_value()) {
        throw InvalidArgument("prune needs exactly one of --unused-for and --max-size");
    }
    PrunePlan plan;
    plan.criterion = criterion;
    plan.total_size_bytes = distinct_size_bytes(entries);
    std::uint64_t remaining = plan.total_size_bytes;
    NameCounts names{entries};
    auto const release = [&](CacheEntry const& entry) {
        remaining -=
            std::min(remaining, names.released(entry.device, entry.inode, entry.size_bytes));
    };
    DistinctFiles selected_files;
    DistinctFiles abandoned_files;
    std::vector<CacheEntry const*> candidates;
    for (CacheEntry const& entry : entries) {
        if (entry.temporary && entry.regular && abandoned && abandoned(entry)) {
            plan.abandoned_temporaries.push_back(planned(entry));
            abandoned_files.add(entry);
            release(entry);
        } else if (auto reason = never_removed_reason(entry)) {
            plan.excluded.push_back(excluded(entry, std::move(*reason)));
        } else {
            candidates.push_back(&entry);
        }
    }
    std::sort(plan.abandoned_temporaries.begin(), plan.abandoned_temporaries.end(),
              [](PlannedRemoval const& a, PlannedRemoval const& b) { return a.name < b.name; });
    plan.abandoned_temporary_bytes = abandoned_files.total_bytes();
    std::sort(candidates.begin(), candidates.end(), older_first);
    for (CacheEntry const* candidate : candidates) {
        if (criterion.cutoff_ns && candidate->recorded_at_ns >= *criterion.cutoff_ns) {
            break; // candidates are sorted: every later one is at least as recent
        }
        if (criterion.max_size_bytes && remaining <= *criterion.max_size_bytes) {
            break;
        }
        if (in_use && in_use(*candidate)) {
            plan.excluded.push_back(excluded(*candidate, std::string{kInUseReason}));
            continue;
        }
        plan.selected.push_back(planned(*candidate));
        selected_files.add(*candidate);
        release(*candidate);
    }
    plan.selected_bytes = selected_files.total_bytes();
    sort_by_name(plan.excluded);
    plan.projected_total_bytes = remaining;
    plan.attainable = !criterion.max_size_bytes || remaining <= *criterion.max_size_bytes;
    return plan;
}

bool entry_lock_held(Store const& store, CacheEntry const& entry) {
    std::filesystem::path const lock_path = store.lock_path_for(store.directory() / entry.name);
    std::error_code error;
    if (!std::filesystem::exists(lock_path, error)) {
        return false;
    }
    try {
        return !FileLock::try_acquire(lock_path, LockMode::exclusive).has_value();
    } catch (Error const&) {
        return false; // cannot be probed here; the removal itself reports what stops it
    }
}

bool temporary_abandoned(Store const& store, CacheEntry const& entry, std::int64_t now_ns,
                         std::int64_t min_age_ns) {
    auto const pid = temporary_writer_pid(entry.name);
    if (!entry.temporary || !entry.regular || !pid || platform::process_alive(*pid)) {
        return false;
    }
    std::int64_t age = 0;
    if (__builtin_sub_overflow(now_ns, entry.recorded_at_ns, &age) || age <= min_age_ns) {
        return false;
    }
    CacheEntry target;
    target.name = std::string(temporary_target_name(entry.name));
    return !entry_lock_held(store, target);
}

PruneResult dry_run_result(PrunePlan const& plan) {
    PruneResult result;
    result.dry_run = true;
    result.excluded = plan.excluded;
    result.remaining_total_bytes = plan.total_size_bytes;
    result.projected_total_bytes = plan.projected_total_bytes;
    result.within_max_size = plan.attainable;
    return result;
}

namespace {

// Removes `path`; where it cannot, records why in `result` (missing, or failed with the reason)
// and returns false.
bool remove_or_report(std::filesystem::path const& path, std::string const& name,
                      PruneResult& result) {
    if (platform::remove_file(path) == 0) {
        return true;
    }
    if (errno == ENOENT) {
        result.missing.push_back(name);
    } else {
        result.failed.push_back(
            {name, std::string("cannot remove it: ") + platform::error_text(errno)});
    }
    return false;
}

// Removes one abandoned temporary file if it is still the planned one and still abandoned.
void remove_temporary(Store const& store, PlannedRemoval const& entry,
                      TemporaryProbe const& abandoned, PruneResult& result,
                      DistinctFiles& removed) {
    std::filesystem::path const path = store.directory() / entry.name;
    auto const status = platform::status(path, platform::Follow::no_links);
    if (!status) {
        if (errno == ENOENT) {
            result.missing.push_back(entry.name); // committed or removed meanwhile
        } else {
            result.failed.push_back({entry.name, std::string("cannot read its metadata: ") +
                                                     platform::error_text(errno)});
        }
        return;
    }
    // A temporary file that changed has a writer after all: kept, as one in use.
    if (std::string change = observed_change(entry, *status); !change.empty()) {
        result.excluded.push_back(
            {entry.name, entry.size_bytes, entry.recorded_at_ns,
             "temporary file changed since the plan (" + change + "): in use; left in place"});
        return;
    }
    if (abandoned && !abandoned(as_entry(entry))) {
        result.excluded.push_back({entry.name, entry.size_bytes, entry.recorded_at_ns,
                                   "temporary file no longer abandoned (its entry is locked or "
                                   "its writer's process id runs); left in place"});
        return;
    }
    if (!remove_or_report(path, entry.name, result)) {
        return;
    }
    result.removed_temporaries.push_back(entry);
    removed.add(entry.device, entry.inode, entry.size_bytes);
}

} // namespace

PruneResult execute_prune(Store const& store, PrunePlan const& plan,
                          BeforeRemoval const& before_removal, TemporaryProbe const& abandoned) {
    PruneResult result;
    result.excluded = plan.excluded;
    DistinctFiles removed_temporaries;
    for (PlannedRemoval const& entry : plan.abandoned_temporaries) {
        if (before_removal) {
            before_removal(entry);
        }
        remove_temporary(store, entry, abandoned, result, removed_temporaries);
    }
    result.temporary_bytes_removed = removed_temporaries.total_bytes();
    DistinctFiles removed_files;
    for (PlannedRemoval const& entry : plan.selected) {
        if (before_removal) {
            before_removal(entry);
        }
        std::filesystem::path const path = store.directory() / entry.name;
        if (!platform::status(path, platform::Follow::no_links) && errno == ENOENT) {
            result.missing.push_back(entry.name); // gone: no lock file is created for it
            continue;
        }
        std::optional<FileLock> lock;
        try {
            lock = FileLock::try_acquire(store.lock_path_for(path), LockMode::exclusive);
        } catch (Error const& error) {
            result.failed.push_back({entry.name, error.what()});
            continue;
        }
        if (!lock) {
            result.excluded.push_back(
                {entry.name, entry.size_bytes, entry.recorded_at_ns, std::string{kInUseReason}});
            continue;
        }
        // Again, now that the lock is held.
        auto const status = platform::status(path, platform::Follow::no_links);
        if (!status) {
            if (errno == ENOENT) {
                result.missing.push_back(entry.name);
            } else {
                result.failed.push_back({entry.name, std::string("cannot read its metadata: ") +
                                                         platform::error_text(errno)});
            }
            continue;
        }
        if (std::string change = observed_change(entry, *status); !change.empty()) {
            result.failed.push_back(
                {entry.name, "changed since the plan (" + change + "); left in place"});
            continue;
        }
        if (!remove_or_report(path, entry.name, result)) {
            continue;
        }
        result.removed.push_back(entry);
        removed_files.add(entry.device, entry.inode, entry.size_bytes);
    }
    result.bytes_removed = removed_files.total_bytes();
    sort_by_name(result.excluded);
    try {
        result.remaining_total_bytes = scan_cache(store.directory(), false).total_size_bytes;
    } catch (FileError const&) {
        // The directory could not be listed again: report what the plan and removals imply.
        std::uint64_t const gone = result.bytes_removed + result.temporary_bytes_removed;
        result.remaining_total_bytes =
            plan.total_size_bytes - std::min(gone, plan.total_size_bytes);
    }
    result.within_max_size = !plan.criterion.max_size_bytes ||
                             result.remaining_total_bytes <= *plan.criterion.max_size_bytes;
    return result;
}

nlohmann::json plan_json(std::filesystem::path const& directory, PrunePlan const& plan,
                         bool dry_run) {
    nlohmann::json criterion = nlohmann::json::object();
    if (plan.criterion.cutoff_ns) {
        criterion["cutoff"] = format_utc_time(*plan.criterion.cutoff_ns);
        criterion["cutoff_ns"] = *plan.criterion.cutoff_ns;
    }
    if (plan.criterion.max_size_bytes) {
        criterion["max_size_bytes"] = *plan.criterion.max_size_bytes;
    }
    return {{"directory", directory.string()},
            {"dry_run", dry_run},
            {"criterion", std::move(criterion)},
            {"total_size_bytes", plan.total_size_bytes},
            {"selected", removals_json(plan.selected)},
            {"selected_bytes", plan.selected_bytes},
            {"excluded", excluded_json(plan.excluded)},
            {"abandoned_temporaries", temporaries_json(plan.abandoned_temporaries)},
            {"abandoned_temporary_bytes", plan.abandoned_temporary_bytes},
            {"projected_total_bytes", plan.projected_total_bytes},
            {"attainable", plan.attainable},
            {"notice", kRebuildNotice}};
}

nlohmann::json result_json(PruneResult const& result, PruneCriterion const& criterion) {
    nlohmann::json failed = nlohmann::json::array();
    for (FailedRemoval const& entry : result.failed) {
        failed.push_back({{"file_name", entry.name}, {"reason", entry.reason}});
    }
    nlohmann::json missing = nlohmann::json::array();
    for (std::string const& name : result.missing) {
        missing.push_back({{"file_name", name}});
    }
    nlohmann::json json = {{"dry_run", result.dry_run},
                           {"removed", removals_json(result.removed)},
                           {"removed_temporaries", temporaries_json(result.removed_temporaries)},
                           {"temporary_bytes_removed", result.temporary_bytes_removed},
                           {"excluded", excluded_json(result.excluded)},
                           {"failed", std::move(failed)},
                           {"missing", std::move(missing)},
                           {"bytes_removed", result.bytes_removed},
                           {"remaining_total_bytes", result.remaining_total_bytes}};
    if (result.projected_total_bytes) {
        json["projected_total_bytes"] = *result.projected_total_bytes;
    }
    if (criterion.max_size_bytes) {
        json["max_size_bytes"] = *criterion.max_size_bytes;
        json["within_max_size"] = result.within_max_size;
    }
    return json;
}

} // namespace tensoracle
