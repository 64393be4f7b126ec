// The `bundle` command of the native CLI: inspection of a cubin bundle and its plugin library.
#include "cmd_bundle.hpp"

#include "commands.hpp"
#include "cubin/bundle_inspect.hpp"
#include "output_format.hpp"
#include "tensoracle/errors.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cli {
namespace {

// The Python exception class each core error corresponds to, named in the reports.
char const* error_kind(Error const& error) {
    if (dynamic_cast<MissingCubinError const*>(&error) != nullptr) {
        return "MissingCubinError";
    }
    if (dynamic_cast<CorruptCubinError const*>(&error) != nullptr) {
        return "CorruptCubinError";
    }
    if (dynamic_cast<CubinArchitectureError const*>(&error) != nullptr) {
        return "CubinArchitectureError";
    }
    if (dynamic_cast<PluginBundleMismatchError const*>(&error) != nullptr) {
        return "PluginBundleMismatchError";
    }
    if (dynamic_cast<BundleAbiError const*>(&error) != nullptr) {
        return "BundleAbiError";
    }
    if (dynamic_cast<BundleError const*>(&error) != nullptr) {
        return "BundleError";
    }
    if (auto const* file = dynamic_cast<FileError const*>(&error);
        file != nullptr && file->error_number() == ENOENT) {
        return "FileNotFoundError";
    }
    return "Error";
}

using cubin::BundleInspection;

constexpr std::string_view kCommand = "tensoracle bundle inspect";
constexpr std::string_view kUsage =
    "tensoracle bundle inspect DIRECTORY [--plugin LIB] [--format json|table]";

struct InspectOptions {
    std::string directory;
    std::string plugin;
    std::string format{kTable};
    CLI::Option* format_option = nullptr;
    CLI::Option* json_option = nullptr;
};

std::string text(nlohmann::json const& value) {
    if (value.is_null()) {
        return "-";
    }
    if (value.is_string()) {
        return value.get<std::string>();
    }
    return value.dump();
}

// One row per entry, columns padded to their widest cell.
void print_table(BundleInspection const& inspection) {
    nlohmann::json const report = inspection.to_json();
    std::vector<std::vector<std::string>> rows = {
        {"id", "target", "file", "bytes", "sha256", "registers", "dyn-shared", "in-plugin"}};
    for (nlohmann::json const& entry : report["entries"]) {
        std::string const plugin =
            entry["in_plugin"].is_null() ? "-" : (entry["in_plugin"].get<bool>() ? "yes" : "no");
        std::string const id = entry["id"].is_null()
                                   ? "(" + entry["kernel"].get<std::string>() + ")"
                                   : text(entry["id"]);
        rows.push_back({id, text(entry["target_sm"]), text(entry["file"]), text(entry["bytes"]),
                        text(entry["sha256"]).substr(0, 12), text(entry["registers_per_thread"]),
                        text(entry["launch_dynamic_shared_memory_bytes"]), plugin});
    }
    std::cout << "bundle " << escape_for_terminal(inspection.directory.string()) << '\n'
              << "bundle_sha256 " << inspection.digest() << '\n';
    if (inspection.plugin) {
        std::cout << "plugin " << escape_for_terminal(inspection.plugin->string())
                  << " (digest and embedded cubins "
                  << "match)\n";
    }
    std::cout << aligned_rows(rows);
}

int run_inspect(InspectOptions options) {
    if (auto const status = apply_deprecated_json(*options.json_option, *options.format_option,
                                                  options.format, kCommand, kUsage)) {
        return *status;
    }
    bool const json = options.format == kJson;
    std::optional<std::filesystem::path> plugin;
    if (!options.plugin.empty()) {
        plugin = options.plugin;
    }
    try {
        BundleInspection const inspection = cubin::inspect_bundle(options.directory, plugin);
        if (json) {
            std::cout << inspection.to_json().dump(2, ' ', false,
                                                   nlohmann::json::error_handler_t::replace)
                      << '\n';
        } else {
            print_table(inspection);
        }
        return kExitSuccess;
    } catch (Error const& error) {
        if (json) {
            nlohmann::json report = {
                {"ok", false}, {"error", error_kind(error)}, {"message", error.what()}};
            if (auto const* bundle = dynamic_cast<BundleError const*>(&error)) {
                report["path"] = bundle->path().string();
            }
            std::cout << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                      << '\n';
        } else {
            std::cerr << kCommand << ": " << error_kind(error) << ": " << error.what() << '\n';
        }
        return kExitFailure;
    }
}

} // namespace

void add_bundle_command(CLI::App& app, Action& action) {
    CLI::App* bundle = app.add_subcommand("bundle", "Inspect cubin bundles");
    bundle->require_subcommand(1);
    CLI::App* inspect = bundle->add_subcommand(
        "inspect", "Check a cubin bundle and the plugin library built from it");
    inspect->footer(
        "Check a cubin bundle directory (bundle.json, schema_version 1) and, with --plugin, the "
        "library built from it: every entry's cubin length, SHA-256 and SM, and the library's "
        "tensoracle_bundle_sha256 and embedded cubins. Prints one row per entry (id, target, "
        "file, bytes, SHA-256 prefix, registers, dynamic shared memory, in plugin), or the JSON "
        "report with --format json. Exit 0 when every check passed, 1 when one failed");
    auto options = std::make_shared<InspectOptions>();
    inspect->add_option("directory", options->directory, "Bundle directory holding bundle.json")
        ->required();
    inspect->add_option("--plugin", options->plugin,
                        "Plugin library (ELF shared object) that must export this bundle's "
                        "digest and cubins");
    options->format_option = add_format_option(*inspect, options->format);
    options->json_option = add_deprecated_json_flag(*inspect);
    inspect->callback([options, &action] { action = [options] { return run_inspect(*options); }; });
}

} // namespace tensoracle::cli
