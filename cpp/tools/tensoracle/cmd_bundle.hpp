// `tensoracle bundle inspect DIR [--plugin LIB] [--format json|table]`: checks a cubin bundle,
// prints a table (the default) or the JSON report. The deprecated `--json` is `--format json`.
#pragma once

#include "commands.hpp"

#include <CLI/CLI.hpp>

namespace tensoracle::cli {

// Adds the `bundle` command to `app`. Its action exits 0 when every check passed and 1 when one
// failed (the JSON report then names the error); misuse exits 2 like every subcommand.
void add_bundle_command(CLI::App& app, Action& action);

} // namespace tensoracle::cli
