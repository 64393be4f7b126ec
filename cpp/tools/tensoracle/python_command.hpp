// Subcommands that belong to the Python package (they need TensorRT's Python modules or an
// object-store client) still live under the one `tensoracle` command: the native command hands
// them to `python -m tensoracle.cli WORD...`, which runs the module tensoracle.cli.<words joined
// by '_'> (`tensoracle cache push` runs tensoracle.cli.cache_push).
//
// The interpreter is $TENSORACLE_PYTHON when set, else the python3 (or python) next to this
// executable, which is where pip puts both for a virtual environment or a prefix install, else
// the first python3 on PATH.
#pragma once

#include "commands.hpp"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cli {

// The interpreter the Python subcommands run with, or nothing when none is found.
std::optional<std::filesystem::path> python_interpreter();

// Replaces this process with `python -m tensoracle.cli <arguments...>`. Returns only when that
// fails, after printing why on stderr (kExitFailure).
int run_python_command(std::vector<std::string> const& arguments);

// Adds the subcommand `name` to `parent`, run by the Python package: every argument after it is
// passed on unparsed (its own --help included), after `words` (the command path, e.g.
// {"cache", "push"}).
void add_python_subcommand(CLI::App& parent, std::string const& name,
                           std::string const& description, std::vector<std::string> words,
                           Action& action);

} // namespace tensoracle::cli
