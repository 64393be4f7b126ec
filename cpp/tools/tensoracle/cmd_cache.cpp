// `tensoracle cache`: the group of commands that inspect and clean the saved-engine directory,
// and the helpers its subcommands share.
#include "cache/store.hpp"
#include "commands.hpp"
#include "python_command.hpp"
#include "tensoracle/errors.hpp"

#include <exception>
#include <iostream>

namespace tensoracle::cli {

void add_cache_command(CLI::App& app, Action& action) {
    CLI::App* cache =
        app.add_subcommand("cache", "Inspect and clean saved engines (never loads TensorRT)");
    cache->require_subcommand(1);
    add_cache_list_command(*cache, action);
    add_cache_prune_command(*cache, action);
    add_cache_verify_command(*cache, action);
    add_cache_show_command(*cache, action);
    add_cache_diff_command(*cache, action);
    add_cache_export_command(*cache, action);
    add_cache_encryption_commands(*cache, action);
    // The remote cache's client (obstore) is a Python package: push runs in Python, and so does
    // pull, but for a deployment manifest's entries (pull --manifest), which it pulls natively.
    add_python_subcommand(*cache, "push",
                          "Publish saved engines to the remote cache (s3://...), create-only",
                          {"cache", "push"}, action);
    add_cache_pull_command(*cache, action);
}

CLI::Option* add_remote_option(CLI::App& command, std::string& value) {
    return command
        .add_option("--remote", value,
                    "Work on the remote cache s3://BUCKET[/PREFIX] instead (without a value: "
                    "$TENSORACLE_REMOTE); run by the Python package")
        ->expected(0, 1)
        ->type_name("[URL]");
}

std::vector<std::string> remote_words(std::string const& subcommand, std::string const& url) {
    std::vector<std::string> words{"cache", subcommand, "--remote"};
    if (!url.empty()) {
        words.push_back(url);
    }
    return words;
}

void add_cache_dir_option(CLI::App& command, std::string& value) {
    command
        .add_option("--cache-dir", value,
                    "Cache directory to use instead of $XDG_CACHE_HOME/tensoracle "
                    "(or ~/.cache/tensoracle)")
        ->type_name("DIR")
        ->check(CLI::Validator(
            [](std::string const& directory) {
                return directory.empty() ? std::string("the directory must not be empty")
                                         : std::string();
            },
            // No name of its own: CLI11 writes a validator's name beside the type's in the help
            // ("DIR:DIR").
            ""));
}

std::filesystem::path resolve_cache_directory(std::string const& option_value) {
    std::filesystem::path directory =
        option_value.empty() ? default_cache_directory() : std::filesystem::path(option_value);
    return std::filesystem::absolute(directory).lexically_normal();
}

int run_reporting_errors(std::string_view command, std::function<int()> const& body) {
    try {
        return body();
    } catch (InvalidArgument const& error) {
        std::cerr << command << ": " << error.what() << "\n";
        return kExitUsage;
    } catch (std::exception const& error) {
        std::cerr << command << ": " << error.what() << "\n";
        return kExitFailure;
    }
}

int usage_error(std::string_view command, std::string_view message, std::string_view usage) {
    std::cerr << command << ": " << message << "\n"
              << "usage: " << usage << "\n"
              << "Run '" << command << " --help' for more information.\n";
    return kExitUsage;
}

} // namespace tensoracle::cli
