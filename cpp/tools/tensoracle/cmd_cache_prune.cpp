// `tensoracle cache prune`: removes saved engines unused for some days, or the oldest ones until
// the cache fits a size. Prints two JSON lines: {"plan": ...} before removing anything, then
// {"result": ...}; with --format table, the plan as a table, then the outcome of each removal.
#include "cache/pruning.hpp"
#include "cache/store.hpp"
#include "commands.hpp"
#include "output_format.hpp"
#include "python_command.hpp"
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"
#include "text/utf8_text.hpp"

#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace tensoracle::cli {
namespace {

constexpr std::string_view kCommand = "tensoracle cache prune";
constexpr std::string_view kUsage =
    "tensoracle cache prune (--unused-for DAYS | --max-size SIZE) [--dry-run] [--cache-dir DIR] "
    "[--format json|table]";

struct PruneOptions {
    std::string cache_dir;
    std::string unused_for;
    std::string max_size;
    CLI::Option* unused_for_option = nullptr;
    CLI::Option* max_size_option = nullptr;
    bool dry_run = false;
    std::string format{kJson};
    std::string remote;
    CLI::Option* remote_option = nullptr;
};

// `prune --remote`: the same options, handed to the Python package.
int run_remote(PruneOptions const& options) {
    std::vector<std::string> words = remote_words("prune", options.remote);
    if (options.unused_for_option->count() > 0) {
        words.insert(words.end(), {"--unused-for", options.unused_for});
    }
    if (options.max_size_option->count() > 0) {
        words.insert(words.end(), {"--max-size", options.max_size});
    }
    if (options.dry_run) {
        words.emplace_back("--dry-run");
    }
    words.insert(words.end(), {"--format", options.format});
    return run_python_command(words);
}

std::string json_line(char const* key, nlohmann::json value) {
    nlohmann::json document = nlohmann::json::object();
    document[key] = std::move(value);
    return document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string size_text(nlohmann::json const& bytes) {
    return format_size_human(bytes.get<std::uint64_t>());
}

std::string plural(std::size_t count, std::string const& one, std::string const& many) {
    return std::to_string(count) + " " + (count == 1 ? one : many);
}

// The plan for people: what is selected and why, one row per selected or excluded file (oldest
// selected first, then the excluded ones by name), the projected total, and the rebuild notice.
std::string plan_table(nlohmann::json const& plan) {
    nlohmann::json const& criterion = plan["criterion"];
    std::string text = "plan: ";
    if (criterion.contains("max_size_bytes")) {
        text += "remove the least recently recorded engines until the total is at most " +
                size_text(criterion["max_size_bytes"]);
    } else {
        text += "remove the engines recorded before " + criterion["cutoff"].get<std::string>();
        if (criterion.contains("unused_for_days")) {
            text += " (--unused-for " + criterion["unused_for_days"].get<std::string>() + ")";
        }
    }
    text += ", in " + escape_for_terminal(plan["directory"].get<std::string>()) +
            (plan["dry_run"].get<bool>() ? " (dry run: nothing is changed)" : "") + "\n";
    std::vector<std::vector<std::string>> rows = {{"NAME", "SIZE", "RECORDED_AT", "ACTION"}};
    for (nlohmann::json const& entry : plan["selected"]) {
        rows.push_back({entry["file_name"].get<std::string>(), size_text(entry["size_bytes"]),
                        entry["recorded_at"].get<std::string>(), "remove"});
    }
    for (nlohmann::json const& entry : plan["abandoned_temporaries"]) {
        rows.push_back({entry["file_name"].get<std::string>(), size_text(entry["size_bytes"]),
                        entry["recorded_at"].get<std::string>(),
                        "remove: temporary file, its writer (process " +
                            entry["writer_pid"].dump() + ") is gone"});
    }
    for (nlohmann::json const& entry : plan["excluded"]) {
        rows.push_back({entry["file_name"].get<std::string>(), size_text(entry["size_bytes"]),
                        entry["recorded_at"].get<std::string>(),
                        "keep: " + one_line(entry["reason"].get<std::string>())});
    }
    text += aligned_rows(rows);
    text += plural(plan["selected"].size(), "engine", "engines") + " selected (" +
            size_text(plan["selected_bytes"]) + ") of " + size_text(plan["total_size_bytes"]) +
            "; projected total " + size_text(plan["projected_total_bytes"]) +
            (plan["attainable"].get<bool>() ? "" : ", above the size limit") + "\n";
    return text + plan["notice"].get<std::string>() + "\n";
}

// The result for people: one row per selected engine with what happened to it, then the totals.
std::string result_table(nlohmann::json const& plan, nlohmann::json const& result) {
    if (result["dry_run"].get<bool>()) {
        return "result: dry run, nothing removed; projected total " +
               size_text(result["projected_total_bytes"]) + "\n";
    }
    std::map<std::string, std::string> outcomes;
    for (nlohmann::json const& entry : result["removed"]) {
        outcomes[entry["file_name"].get<std::string>()] = "removed";
    }
    for (nlohmann::json const& entry : result["missing"]) {
        outcomes[entry["file_name"].get<std::string>()] = "missing (already gone)";
    }
    for (nlohmann::json const& entry : result["failed"]) {
        outcomes[entry["file_name"].get<std::string>()] =
            "failed: " + one_line(entry["reason"].get<std::string>());
    }
    for (nlohmann::json const& entry : result["excluded"]) {
        outcomes.try_emplace(entry["file_name"].get<std::string>(),
                             "kept: " + one_line(entry["reason"].get<std::string>()));
    }
    std::vector<std::vector<std::string>> rows = {{"NAME", "OUTCOME"}};
    for (nlohmann::json const& entry : plan["selected"]) {
        std::string const name = entry["file_name"].get<std::string>();
        rows.push_back({name, outcomes.contains(name) ? outcomes[name] : "kept"});
    }
    std::string text = "result:\n" + aligned_rows(rows);
    text += plural(result["removed"].size(), "engine", "engines") + " removed (" +
            size_text(result["bytes_removed"]) + "), " + std::to_string(result["failed"].size()) +
            " failed, " + std::to_string(result["missing"].size()) + " missing, " +
            plural(result["removed_temporaries"].size(), "abandoned temporary file",
                   "abandoned temporary files") +
            " removed (" + size_text(result["temporary_bytes_removed"]) + "); remaining total " +
            size_text(result["remaining_total_bytes"]);
    if (result.contains("within_max_size")) {
        text += result["within_max_size"].get<bool>() ? ", within " : ", above ";
        text += size_text(result["max_size_bytes"]);
    }
    return text + "\n";
}

int prune(PruneOptions const& options, PruneCriterion const& criterion) {
    std::filesystem::path const directory = resolve_cache_directory(options.cache_dir);
    CacheScan const scan = scan_cache(directory);
    // Only an existing directory gets a Store: constructing one would create the directory.
    std::optional<Store> store;
    InUseProbe probe;
    TemporaryProbe abandoned;
    if (scan.exists) {
        store.emplace(directory);
        probe = [&store](CacheEntry const& entry) { return entry_lock_held(*store, entry); };
        abandoned = [&store, now = now_nanoseconds()](CacheEntry const& entry) {
            return temporary_abandoned(*store, entry, now);
        };
    }
    PrunePlan const plan = plan_prune(scan.entries, criterion, probe, abandoned);
    nlohmann::json plan_document = plan_json(directory, plan, options.dry_run);
    if (criterion.cutoff_ns) {
        plan_document["criterion"]["unused_for_days"] = options.unused_for;
    }
    bool const table = options.format == kTable;
    if (table) {
        std::cout << plan_table(plan_document) << std::flush;
    } else {
        std::cout << json_line("plan", plan_document) << std::endl;
    }

    PruneResult result;
    if (options.dry_run || !store) {
        result = dry_run_result(plan);
        result.dry_run = options.dry_run;
        if (!options.dry_run) {
            result.projected_total_bytes.reset();
        }
    } else {
        result = execute_prune(*store, plan, {}, abandoned);
    }
    nlohmann::json const result_document = result_json(result, criterion);
    if (table) {
        std::cout << result_table(plan_document, result_document) << std::flush;
    } else {
        std::cout << json_line("result", result_document) << std::endl;
    }
    return result.failed.empty() && result.within_max_size ? kExitSuccess : kExitFailure;
}

int run(PruneOptions const& options) {
    bool const by_age = options.unused_for_option->count() > 0;
    bool const by_size = options.max_size_option->count() > 0;
    if (by_age == by_size) {
        return usage_error(kCommand,
                           by_age ? "give only one of --unused-for and --max-size, not both"
                                  : "give exactly one of --unused-for DAYS and --max-size SIZE",
                           kUsage);
    }
    PruneCriterion criterion;
    try {
        if (by_age) {
            std::int64_t const age = parse_days_nanoseconds(options.unused_for, "--unused-for");
            std::int64_t cutoff = 0;
            if (__builtin_sub_overflow(now_nanoseconds(), age, &cutoff)) {
                cutoff = std::numeric_limits<std::int64_t>::min();
            }
            criterion.cutoff_ns = cutoff;
        } else {
            criterion.max_size_bytes = parse_size_bytes(options.max_size, "--max-size");
        }
    } catch (InvalidArgument const& error) {
        return usage_error(kCommand, error.what(), kUsage);
    }
    return run_reporting_errors(kCommand, [&] { return prune(options, criterion); });
}

} // namespace

void add_cache_prune_command(CLI::App& cache, Action& action) {
    auto options = std::make_shared<PruneOptions>();
    CLI::App* command = cache.add_subcommand(
        "prune", "Remove engines unused for some days, or the oldest beyond a size");
    std::string const details =
        "Remove saved engines, either those unused for some days or the oldest until the cache "
        "fits a size. Prints a JSON plan line, then a JSON result line (or, with --format "
        "table, the plan and the outcome of each removal as tables). Empty and unrecognized files "
        "and the temporary files of running writers count toward the total but are never "
        "removed, nor are engines whose lock another process holds; a temporary file whose "
        "writer is gone (not running, older than 10 minutes, its entry unlocked) is removed. "
        "Weight digest records are kept. Removed engines are rebuilt the next time they are "
        "used.\n\n";
    add_cache_dir_option(*command, options->cache_dir);
    options->unused_for_option = command->add_option(
        "--unused-for", options->unused_for,
        "Remove engines whose recorded time (last save or successful open) is strictly earlier "
        "than DAYS days of 24 hours ago; DAYS is a nonnegative decimal such as 30 or 0.5");
    options->unused_for_option->type_name("DAYS");
    options->max_size_option = command->add_option(
        "--max-size", options->max_size,
        "Remove the least recently recorded engines (ties by file name) until all .engine files "
        "total at most SIZE: bytes, or a number with B, KiB, MiB, GiB or TiB (powers of 1024) or "
        "KB, MB, GB or TB (powers of 1000), any case, fractions allowed and rounded down to whole "
        "bytes, such as 10GiB or 10GB");
    options->max_size_option->type_name("SIZE");
    command->add_flag("--dry-run", options->dry_run,
                      "Print the plan and the projected total; change no file and no recorded "
                      "time");
    command->footer(details + "Exit status: 0 success, 1 filesystem failure, failed removal or a "
                              "size limit that cannot be met, 2 invalid usage.");
    add_format_option(*command, options->format);
    options->remote_option = add_remote_option(*command, options->remote);
    command->callback([options, &action] {
        action = [options] {
            return options->remote_option->count() > 0 ? run_remote(*options) : run(*options);
        };
    });
}

} // namespace tensoracle::cli
