// The native `tensoracle` command: dispatches to one subcommand per file (cmd_<verb>.cpp).
// Exit status: 0 success, 1 failure (see each subcommand), 2 invalid usage.
#include "cmd_bundle.hpp"
#include "commands.hpp"
#include "python_command.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
    using namespace tensoracle::cli;
    CLI::App app{"tensoracle: manage saved TensorRT engines and cubin bundles", "tensoracle"};
    // The package's version, as `pip show tensoracle` and importlib.metadata give it.
    app.set_version_flag("--version", std::string("tensoracle ") + TENSORACLE_VERSION);
    app.require_subcommand(1);
    Action action;
    add_cache_command(app, action);
    add_bundle_command(app, action);
    add_manifest_command(app, action);
    add_python_subcommand(app, "convert",
                          "Convert a PyTorch .pth checkpoint to safetensors (Python package)",
                          {"convert"}, action);
    add_python_subcommand(app, "doctor",
                          "Report what this machine can build and run (Python package)", {"doctor"},
                          action);
    add_python_subcommand(app, "build",
                          "Prepare a model package's engines ahead of time (Python package)",
                          {"build"}, action);
    // A group, as `cache` is: `tensoracle deploy --help` lists its targets, and each target's
    // own help is its Python parser's.
    CLI::App* deploy =
        app.add_subcommand("deploy", "Lay out a manifest's engines for a model server");
    deploy->require_subcommand(1);
    add_python_subcommand(*deploy, "triton",
                          "Write a Triton model repository of a manifest (Python package)",
                          {"deploy", "triton"}, action);
    try {
        app.parse(argc, argv);
    } catch (CLI::ParseError const& error) {
        return app.exit(error) == 0 ? kExitSuccess : kExitUsage;
    }
    return action ? action() : kExitUsage;
}
