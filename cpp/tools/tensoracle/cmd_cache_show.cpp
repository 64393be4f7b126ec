// `tensoracle cache show ENTRY`: the whole header of one saved engine, as JSON or a table.
#include "cache/entry_details.hpp"
#include "commands.hpp"
#include "output_format.hpp"

#include <iostream>
#include <memory>

namespace tensoracle::cli {
namespace {

struct ShowOptions {
    std::string cache_dir;
    std::string entry;
    std::string format{kJson};
};

int show(ShowOptions const& options) {
    std::filesystem::path const path =
        resolve_entry(resolve_cache_directory(options.cache_dir), options.entry);
    nlohmann::json const details = entry_details_json(path);
    if (options.format == kTable) {
        std::cout << entry_details_table(details);
    } else {
        std::cout << details.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    }
    return kExitSuccess;
}

} // namespace

void add_cache_show_command(CLI::App& cache, Action& action) {
    auto options = std::make_shared<ShowOptions>();
    CLI::App* command = cache.add_subcommand("show", "Print the whole header of one saved engine");
    command->footer(
        "Print the whole header of one saved engine: conditions, IO signature, targets, "
        "references, sizes and times. Reads the header only. Exit status 1 when the "
        "entry is missing or damaged, 2 when it is ambiguous");
    command
        ->add_option("ENTRY", options->entry,
                     "File name in the cache directory, a unique prefix of it, the name of its "
                     "recipe, or a path")
        ->required();
    add_cache_dir_option(*command, options->cache_dir);
    add_format_option(*command, options->format);
    command->callback([options, &action] {
        action = [options] {
            return run_reporting_errors("tensoracle cache show", [&] { return show(*options); });
        };
    });
}

} // namespace tensoracle::cli
