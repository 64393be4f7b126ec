// The `bundle` command of the native CLI: inspection of a cubin bundle and its plugin library.
#include "cmd_bundle.hpp"

#include "commands.hpp"
#include "tensoracle/bundle_inspect.hpp"
#include "tensoracle/errors.hpp"

#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace tensoracle::cli {
namespace {

// The Python exception class each core error corresponds to, named in the JSON report.
char const* error_kind(BundleError const& error) {
    if (dynamic_cast<MissingCubinError const*>(&error) != nullptr) {
        return "MissingCubinError";
    }
    if (dynamic_cast<CorruptCubinError const*>(&error) != nullptr) {
        return "CorruptCubinError";
    }
    if (dynamic_cast<FalseSmClaimError const*>(&error) != nullptr) {
        return "FalseSmClaimError";
    }
    if (dynamic_cast<PluginBundleMismatchError const*>(&error) != nullptr) {
        return "PluginBundleMismatchError";
    }
    if (dynamic_cast<BundleAbiError const*>(&error) != nullptr) {
        return "BundleAbiError";
    }
    return "BundleError";
}

struct InspectOptions {
    std::string directory;
    std::string plugin;
};

int run_inspect(InspectOptions const& options) {
    std::optional<std::filesystem::path> plugin;
    if (!options.plugin.empty()) {
        plugin = options.plugin;
    }
    try {
        std::cout << cubin::inspect_bundle(options.directory, plugin)
                         .to_json()
                         .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                  << '\n';
        return kExitSuccess;
    } catch (BundleError const& error) {
        nlohmann::json const report = {{"ok", false},
                                       {"error", error_kind(error)},
                                       {"message", error.what()},
                                       {"path", error.path().string()}};
        std::cout << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return kExitFailure;
    } catch (Error const& error) {
        nlohmann::json const report = {
            {"ok", false}, {"error", "Error"}, {"message", error.what()}};
        std::cout << report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
        return kExitFailure;
    }
}

} // namespace

void add_bundle_command(CLI::App& app, Action& action) {
    CLI::App* bundle = app.add_subcommand("bundle", "Inspect cubin bundles");
    bundle->require_subcommand(1);
    CLI::App* inspect = bundle->add_subcommand(
        "inspect", "Check a bundle directory (and optionally its plugin library); print JSON");
    auto options = std::make_shared<InspectOptions>();
    inspect->add_option("directory", options->directory, "Bundle directory holding bundle.json")
        ->required();
    inspect->add_option("--plugin", options->plugin,
                        "Plugin library that must embed exactly this bundle");
    inspect->callback([options, &action] { action = [options] { return run_inspect(*options); }; });
}

} // namespace tensoracle::cli
