// `tensoracle bundle inspect DIR [--plugin LIB]`: checks a cubin bundle and prints a JSON report.
#pragma once

#include <CLI/CLI.hpp>

namespace tensoracle::cli {

// Adds the `bundle` command to `app`. When it runs, `exit_code` becomes 0 when every check
// passed, 1 when one failed (the JSON report then names the error), 2 for misuse.
void add_bundle_command(CLI::App& app, int& exit_code);

} // namespace tensoracle::cli
