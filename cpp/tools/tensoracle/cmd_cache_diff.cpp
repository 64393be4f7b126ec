// `tensoracle cache diff A B`: the condition keys in which two saved engines differ.
#include "cache/entry_details.hpp"
#include "commands.hpp"
#include "output_format.hpp"

#include <iostream>
#include <memory>

namespace tensoracle::cli {
namespace {

constexpr int kExitDiffer = 1;

struct DiffOptions {
    std::string cache_dir;
    std::string a;
    std::string b;
    std::string format{kJson};
};

int diff(DiffOptions const& options) {
    std::filesystem::path const directory = resolve_cache_directory(options.cache_dir);
    nlohmann::json const result =
        entry_diff_json(resolve_entry(directory, options.a), resolve_entry(directory, options.b));
    if (options.format == kTable) {
        std::cout << entry_diff_table(result);
    } else {
        std::cout << result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return result["same"].get<bool>() ? kExitSuccess : kExitDiffer;
}

// As diff(1): 0 the same, 1 different, 2 trouble (invalid usage, or an entry missing, ambiguous
// or damaged), so that a script can tell a difference from a failure.
int diff_reporting_errors(DiffOptions const& options) {
    int compared = kExitSuccess;
    int const status = run_reporting_errors("tensoracle cache diff", [&] {
        compared = diff(options);
        return kExitSuccess;
    });
    return status == kExitSuccess ? compared : kExitUsage;
}

} // namespace

void add_cache_diff_command(CLI::App& cache, Action& action) {
    auto options = std::make_shared<DiffOptions>();
    CLI::App* command = cache.add_subcommand(
        "diff", "Print the build conditions in which two saved engines differ");
    command->footer(
        "Print the build conditions in which two saved engines differ, each with a "
        "one-line description. Exit status 0 when they are the same, 1 when they differ, "
        "2 when an entry is missing, ambiguous or damaged, or for invalid usage");
    command
        ->add_option("A", options->a,
                     "First entry: file name in the cache directory, a unique prefix of it, the "
                     "name of its recipe, or a path")
        ->required();
    command->add_option("B", options->b, "Second entry")->required();
    add_cache_dir_option(*command, options->cache_dir);
    add_format_option(*command, options->format);
    command->callback(
        [options, &action] { action = [options] { return diff_reporting_errors(*options); }; });
}

} // namespace tensoracle::cli
