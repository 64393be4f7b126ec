// The native `tensoracle` command: dispatches to one subcommand per file (cmd_<verb>.cpp).
#include "cmd_bundle.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"tensoracle: manage saved TensorRT engines and cubin bundles"};
    app.require_subcommand(1);
    int exit_code = 0;
    tensoracle::cli::add_bundle_command(app, exit_code);
    try {
        app.parse(argc, argv);
    } catch (CLI::ParseError const& error) {
        return app.exit(error) == 0 ? 0 : 2;
    }
    return exit_code;
}
