// `tensoracle cache list`: every saved engine with its header conditions, as JSON or a table.
#include "cache/listing.hpp"
#include "commands.hpp"
#include "output_format.hpp"
#include "python_command.hpp"

#include <iostream>
#include <memory>

namespace tensoracle::cli {
namespace {

struct ListOptions {
    std::string cache_dir;
    std::string format{kJson};
    std::string remote;
    CLI::Option* remote_option = nullptr;
};

int list(ListOptions const& options) {
    std::filesystem::path const directory = resolve_cache_directory(options.cache_dir);
    if (options.format == kTable) {
        std::cout << listing_table(scan_cache(directory));
        return kExitSuccess;
    }
    write_listing_json(std::cout, directory);
    return kExitSuccess;
}

} // namespace

void add_cache_list_command(CLI::App& cache, Action& action) {
    auto options = std::make_shared<ListOptions>();
    CLI::App* command = cache.add_subcommand(
        "list", "Print every saved engine and its conditions (JSON, or a table)");
    command->footer("Print every saved engine (header conditions, size, recorded time, status) as "
                    "one JSON object; reads headers and weight digest records only");
    add_cache_dir_option(*command, options->cache_dir);
    options->remote_option = add_remote_option(*command, options->remote);
    add_format_option(*command, options->format);
    command->callback([options, &action] {
        if (options->remote_option->count() > 0) {
            std::vector<std::string> words = remote_words("list", options->remote);
            words.insert(words.end(), {"--format", options->format});
            action = [words] { return run_python_command(words); };
            return;
        }
        action = [options] {
            return run_reporting_errors("tensoracle cache list", [&] { return list(*options); });
        };
    });
}

} // namespace tensoracle::cli
