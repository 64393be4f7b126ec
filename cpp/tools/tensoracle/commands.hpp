// Registration of the `tensoracle` subcommands (one file each) and what they share.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::cli {

// What the parsed command line asks for; returns the process exit status.
using Action = std::function<int()>;

inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1; // filesystem failures, failed removals, unmet limits
inline constexpr int kExitUsage = 2;   // invalid usage

void add_cache_command(CLI::App& app, Action& action);
void add_cache_list_command(CLI::App& cache, Action& action);
void add_cache_prune_command(CLI::App& cache, Action& action);
void add_cache_verify_command(CLI::App& cache, Action& action);
void add_cache_show_command(CLI::App& cache, Action& action);
void add_cache_diff_command(CLI::App& cache, Action& action);
void add_cache_export_command(CLI::App& cache, Action& action);
void add_cache_encryption_commands(CLI::App& cache, Action& action);
void add_cache_pull_command(CLI::App& cache, Action& action);
void add_manifest_command(CLI::App& app, Action& action);
void add_manifest_sign_command(CLI::App& manifest, Action& action);
void add_manifest_verify_command(CLI::App& manifest, Action& action);

// Adds `--remote [URL]` to list or prune: given, the whole command runs in the Python package.
CLI::Option* add_remote_option(CLI::App& command, std::string& value);
// {"cache", subcommand, "--remote", URL if not empty}: the start of the handed-over command line.
std::vector<std::string> remote_words(std::string const& subcommand, std::string const& url);

// Adds `--cache-dir DIR` to a subcommand.
void add_cache_dir_option(CLI::App& command, std::string& value);

// The absolute cache directory: `--cache-dir` when given, else the store's default
// (XDG_CACHE_HOME or the home directory's .cache, plus "tensoracle").
std::filesystem::path resolve_cache_directory(std::string const& option_value);

// Runs `body`, turning the core's exceptions into a one-line message on stderr prefixed by
// `command`: InvalidArgument gives kExitUsage, every other error kExitFailure.
int run_reporting_errors(std::string_view command, std::function<int()> const& body);

// Prints "<command>: <message>" and a usage hint on stderr; returns kExitUsage.
int usage_error(std::string_view command, std::string_view message, std::string_view usage);

} // namespace tensoracle::cli
