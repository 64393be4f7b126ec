// `tensoracle cache pull`: with --manifest FILE, the native pull of a deployment manifest's
// entries (manifest_pull.hpp), which needs no Python; without it (ENTRY names, or every
// published engine), the Python package's pull, to which the command line is handed unparsed.
// Where no Python interpreter is found, the native parser answers every command line (a pull
// without --manifest is then a usage error saying what is missing).
#include "commands.hpp"
#include "output_format.hpp"
#include "python_command.hpp"
#include "tensoracle/deploy/manifest_pull.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>

namespace tensoracle::cli {
namespace {

constexpr std::string_view kCommand = "tensoracle cache pull";
constexpr std::string_view kUsage =
    "tensoracle cache pull [ENTRY... | --manifest FILE [--trust-policy POLICY | --verify-key "
    "KEY] [--minimum-version N] [--recipe RECIPE]...] [--remote URL] [--cache-dir DIR] "
    "[--format json|table] [--quiet]";

struct PullCommand {
    std::vector<std::string> entries;
    std::string manifest;
    CLI::Option* manifest_option = nullptr;
    std::string trust_policy;
    std::string verify_key;
    long long minimum_version = 0;
    std::vector<std::string> recipes;
    std::string remote;
    std::string cache_dir;
    std::string format{kJson};
    bool quiet = false;
};

std::string environment(char const* name) {
    char const* value = std::getenv(name); // NOLINT(concurrency-mt-unsafe): read once, here
    return value == nullptr ? std::string() : std::string(value);
}

nlohmann::json report_json(deploy::PullReport const& report) {
    nlohmann::json pulled = nlohmann::json::array();
    for (deploy::PulledEntry const& entry : report.pulled) {
        pulled.push_back({{"file_name", entry.file_name},
                          {"size_bytes", entry.size_bytes},
                          {"signed", entry.is_signed}});
    }
    nlohmann::json present = nlohmann::json::array();
    for (std::string const& name : report.already_present) {
        present.push_back({{"file_name", name}});
    }
    nlohmann::json refused = nlohmann::json::array();
    for (deploy::RefusedEntry const& entry : report.refused) {
        refused.push_back({{"file_name", entry.file_name}, {"reason", entry.reason}});
    }
    return {{"remote", report.remote},
            {"directory", report.directory.string()},
            {"pulled", pulled},
            {"already_present", present},
            {"refused", refused}};
}

// A row per entry, by name (outcome, size, signed, why refused), then the counts.
std::string report_table(deploy::PullReport const& report) {
    std::vector<std::vector<std::string>> rows;
    for (deploy::PulledEntry const& entry : report.pulled) {
        rows.push_back({entry.file_name, "pulled", format_size_human(entry.size_bytes),
                        entry.is_signed ? "yes" : "no", ""});
    }
    for (std::string const& name : report.already_present) {
        rows.push_back({name, "already present", "-", "-", ""});
    }
    for (deploy::RefusedEntry const& entry : report.refused) {
        rows.push_back({entry.file_name, "refused", "-", "-", one_line(entry.reason)});
    }
    std::sort(rows.begin(), rows.end());
    rows.insert(rows.begin(), {"NAME", "OUTCOME", "SIZE", "SIGNED", "REASON"});
    return aligned_rows(rows) + std::to_string(report.pulled.size()) + " pulled, " +
           std::to_string(report.already_present.size()) + " already present, " +
           std::to_string(report.refused.size()) + " refused, from " +
           escape_for_terminal(report.remote) + " into " +
           escape_for_terminal(report.directory.string()) + "\n";
}

int pull(PullCommand const& command) {
    if (!command.entries.empty() && command.manifest_option->count() > 0) {
        return usage_error(kCommand, "give ENTRY names or --manifest FILE, not both", kUsage);
    }
    if (command.manifest_option->count() == 0) {
        return usage_error(kCommand,
                           "pulling ENTRY names or every published engine is done by the "
                           "Python package, and no Python interpreter with it was found (pip "
                           "install tensoracle, or set TENSORACLE_PYTHON); give --manifest FILE "
                           "to pull a deployment manifest's entries without it",
                           kUsage);
    }
    if (command.manifest.empty()) {
        return usage_error(kCommand, "--manifest: the file name must not be empty", kUsage);
    }
    if (command.minimum_version < 0) {
        return usage_error(kCommand,
                           "--minimum-version " + std::to_string(command.minimum_version) +
                               ": expected a number >= 0",
                           kUsage);
    }
    if (!command.trust_policy.empty() && !command.verify_key.empty()) {
        return usage_error(kCommand, "give --trust-policy or --verify-key, not both", kUsage);
    }
    deploy::OpenOptions options;
    options.cache_directory = resolve_cache_directory(command.cache_dir);
    options.minimum_version = static_cast<std::uint64_t>(command.minimum_version);
    // The manifest is trusted by --trust-policy, --verify-key, $TENSORACLE_TRUST_POLICY or
    // $TENSORACLE_REMOTE_VERIFY_KEY, in that order; each object's signature is checked by the
    // verify key (--verify-key, else the variable), a policy or not.
    std::string const key =
        command.verify_key.empty() ? environment(deploy::kVerifyKeyVariable) : command.verify_key;
    if (key.starts_with("-----BEGIN")) {
        options.verify_key_pem = key;
    } else {
        options.verify_key = key;
    }
    options.trust_policy = command.trust_policy;
    if (command.trust_policy.empty() && command.verify_key.empty()) {
        options.trust_policy = environment(deploy::kTrustPolicyVariable);
    }
    deploy::Manifest manifest;
    try {
        manifest = deploy::read_manifest(command.manifest, options);
    } catch (std::exception const& error) {
        std::cerr << kCommand << ": " << error.what() << "\n";
        return kExitFailure;
    }
    if (command.remote.empty() && environment(deploy::kRemoteVariable).empty() &&
        !manifest.remote) {
        return usage_error(kCommand,
                           "no remote cache: " + command.manifest +
                               " records none (it was written without --push); pass --remote "
                               "s3://BUCKET[/PREFIX] or set " +
                               deploy::kRemoteVariable,
                           kUsage);
    }
    deploy::PullReport report;
    try {
        report = deploy::pull_entries(manifest, command.manifest, options,
                                      {.remote = command.remote, .recipes = command.recipes});
    } catch (std::exception const& error) {
        std::cerr << kCommand << ": " << error.what() << "\n";
        return kExitFailure;
    }
    if (command.format == kTable) {
        std::cout << report_table(report) << std::flush;
    } else {
        std::cout << report_json(report).dump(-1, ' ', true,
                                              nlohmann::json::error_handler_t::replace)
                  << std::endl;
    }
    return report.refused.empty() ? kExitSuccess : kExitFailure;
}

// Parses `arguments` (what follows `cache pull`) natively and runs the pull.
int run_native(std::vector<std::string> arguments) {
    CLI::App app("Download the entries of a deployment manifest (tensoracle build --manifest) "
                 "from the remote cache into the local cache, each checked against the manifest "
                 "as it arrives; no Python needed. Exit status: 0 success, 1 an entry was "
                 "refused or missing, 2 invalid usage.",
                 std::string(kCommand));
    PullCommand command;
    app.add_option("entries", command.entries,
                   "File names in the remote cache (pulled by the Python package)")
        ->type_name("ENTRY");
    command.manifest_option =
        app.add_option("--manifest", command.manifest,
                       "Pull exactly the entries of the deployment manifest FILE, each checked "
                       "against it; from the manifest's remote cache unless --remote or "
                       "$TENSORACLE_REMOTE names one")
            ->type_name("FILE");
    app.add_option("--trust-policy", command.trust_policy,
                   "Accept only a signed manifest that this trust policy file's keys accept "
                   "(default: $TENSORACLE_TRUST_POLICY)")
        ->type_name("POLICY");
    app.add_option("--verify-key", command.verify_key,
                   "Accept only a signed manifest signed by this Ed25519 public key (PEM), and "
                   "only objects it signed (default: $TENSORACLE_REMOTE_VERIFY_KEY)")
        ->type_name("KEY");
    app.add_option("--minimum-version", command.minimum_version,
                   "Refuse a signed manifest of a lower version")
        ->type_name("N");
    app.add_option("--recipe", command.recipes,
                   "Pull only the entries of this recipe (repeat for more)")
        ->type_name("RECIPE");
    app.add_option("--remote", command.remote,
                   "The remote cache s3://BUCKET[/PREFIX] (default: $TENSORACLE_REMOTE, else the "
                   "manifest's)")
        ->type_name("URL");
    add_cache_dir_option(app, command.cache_dir);
    add_format_option(app, command.format);
    // Accepted as the Python pull accepts it; the native pull draws no progress bars.
    app.add_flag("--quiet", command.quiet, "Draw no progress bars (the native pull draws none)");
    std::reverse(arguments.begin(), arguments.end()); // CLI11 takes them last first
    try {
        app.parse(arguments);
    } catch (CLI::CallForHelp const&) {
        std::cout << app.help();
        return kExitSuccess;
    } catch (CLI::ParseError const& error) {
        return usage_error(kCommand, error.what(), kUsage);
    }
    return run_reporting_errors(kCommand, [&] { return pull(command); });
}

bool names_manifest(std::vector<std::string> const& arguments) {
    return std::any_of(arguments.begin(), arguments.end(), [](std::string const& argument) {
        return argument == "--manifest" || argument.starts_with("--manifest=");
    });
}

} // namespace

void add_cache_pull_command(CLI::App& cache, Action& action) {
    CLI::App* command =
        cache.add_subcommand("pull", "Download published engines from the remote cache, verified");
    // Everything after the name, --help included, is parsed by whichever pull runs.
    command->prefix_command();
    command->set_help_flag();
    command->callback([command, &action] {
        std::vector<std::string> arguments = command->remaining();
        if (names_manifest(arguments) || !python_interpreter()) {
            action = [arguments] { return run_native(arguments); };
            return;
        }
        std::vector<std::string> words{"cache", "pull"};
        words.insert(words.end(), arguments.begin(), arguments.end());
        action = [words] { return run_python_command(words); };
    });
}

} // namespace tensoracle::cli
