// Hands the Python-owned subcommands to the Python package (see python_command.hpp).
#include "python_command.hpp"

#include "process.hpp"

#include <cstdlib>
#include <iostream>
#include <string_view>

namespace tensoracle::cli {
namespace {

namespace fs = std::filesystem;

std::optional<fs::path> beside_this_executable() {
    std::optional<fs::path> const self = this_executable();
    if (!self) {
        return std::nullopt;
    }
    for (char const* name : python_names()) {
        fs::path const candidate = self->parent_path() / name;
        if (is_executable(candidate)) {
            return candidate;
        }
    }
    return std::nullopt;
}

std::optional<fs::path> on_path() {
    char const* path = std::getenv("PATH");
    std::string_view rest = path == nullptr ? std::string_view{} : std::string_view{path};
    while (!rest.empty()) {
        std::size_t const separator = rest.find(path_separator());
        std::string_view const directory = rest.substr(0, separator);
        rest =
            separator == std::string_view::npos ? std::string_view{} : rest.substr(separator + 1);
        if (!directory.empty() && is_executable(fs::path{directory} / python_names()[0])) {
            return fs::path{directory} / python_names()[0];
        }
    }
    return std::nullopt;
}

// What the interpreter runs: tensoracle.cli's main with the subcommand's words (as `python -m
// tensoracle.cli` would), or, where the interpreter lacks the package, one line saying so instead
// of Python's own "Error while finding module specification".
constexpr char const* kBootstrap = R"(import sys
try:
    from tensoracle.cli import main
except ModuleNotFoundError as missing:
    if missing.name not in ("tensoracle", "tensoracle.cli"):
        raise
    sys.exit(
        "tensoracle: this subcommand is part of the Python package, which the interpreter "
        + sys.executable + " cannot import (" + str(missing) + "): install it there "
        "(pip install tensoracle) or set TENSORACLE_PYTHON to an interpreter that has it"
    )
sys.exit(main(sys.argv[1:]))
)";

} // namespace

std::optional<fs::path> python_interpreter() {
    if (char const* chosen = std::getenv("TENSORACLE_PYTHON");
        chosen != nullptr && *chosen != '\0') {
        return fs::path{chosen};
    }
    if (auto found = beside_this_executable()) {
        return found;
    }
    return on_path();
}

int run_python_command(std::vector<std::string> const& arguments) {
    std::optional<fs::path> const python = python_interpreter();
    if (!python) {
        std::cerr << "tensoracle: this subcommand is part of the Python package, and no Python "
                     "interpreter was found next to this command or on PATH; install the package "
                     "(pip install tensoracle) or set TENSORACLE_PYTHON to its interpreter\n";
        return kExitFailure;
    }
    std::vector<std::string> command{python->string(), "-c", kBootstrap};
    command.insert(command.end(), arguments.begin(), arguments.end());
    std::string error;
    int const status = run_in_place_of_this_process(*python, command, error);
    std::cerr << "tensoracle: cannot run the Python interpreter " << *python
              << " (TENSORACLE_PYTHON or the python3 beside this command): " << error << "\n";
    return status;
}

void add_python_subcommand(CLI::App& parent, std::string const& name,
                           std::string const& description, std::vector<std::string> words,
                           Action& action) {
    CLI::App* command = parent.add_subcommand(name, description);
    // Everything after the name, --help included, belongs to the Python side's own parser.
    command->prefix_command();
    command->set_help_flag();
    command->callback([command, words = std::move(words), &action] {
        std::vector<std::string> arguments = words;
        for (std::string const& extra : command->remaining()) {
            arguments.push_back(extra);
        }
        action = [arguments] { return run_python_command(arguments); };
    });
}

} // namespace tensoracle::cli
