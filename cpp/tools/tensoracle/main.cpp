// The native `tensoracle` command: dispatches to one subcommand per file (cmd_<verb>.cpp).
#include <CLI/CLI.hpp>
#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"tensoracle: manage saved TensorRT engines and cubin bundles"};
    app.require_subcommand(1);
    try {
        app.parse(argc, argv);
    } catch (CLI::ParseError const& error) {
        return app.exit(error) == 0 ? 0 : 2;
    }
    return 0;
}
