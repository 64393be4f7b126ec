// The `--format json|table` option and the table layout shared by the commands (output_format.hpp).
#include "output_format.hpp"

#include "commands.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>

namespace tensoracle::cli {

std::string format_help(std::string_view default_format) {
    return "Print json (for scripts) or table (for people); default: " +
           std::string(default_format);
}

CLI::Option* add_format_option(CLI::App& command, std::string& format) {
    return command.add_option("--format", format, format_help(format))
        ->type_name("json|table")
        // No description of its own: CLI11 writes a validator's beside the type name in the help.
        ->check(CLI::IsMember({std::string(kJson), std::string(kTable)}).description(""));
}

CLI::Option* add_deprecated_json_flag(CLI::App& command) {
    // The empty group keeps it out of the help.
    std::string const description = "Deprecated: the same as --format json";
    return command.add_flag("--json", description)->group("");
}

std::optional<int> apply_deprecated_json(CLI::Option const& json, CLI::Option const& format_option,
                                         std::string& format, std::string_view command,
                                         std::string_view usage) {
    if (json.count() == 0) {
        return std::nullopt;
    }
    if (format_option.count() > 0 && format != kJson) {
        return usage_error(command,
                           "--json (deprecated, the same as --format json) cannot be combined "
                           "with --format " +
                               format,
                           usage);
    }
    std::cerr << command << ": --json is deprecated; use --format json\n";
    format = kJson;
    return std::nullopt;
}

std::string one_line(std::string_view text) {
    std::string line;
    bool space = false;
    for (char const c : text) {
        if (std::isspace(static_cast<unsigned char>(c)) != 0) {
            space = !line.empty();
            continue;
        }
        if (space) {
            line += ' ';
            space = false;
        }
        line += c;
    }
    return line;
}

} // namespace tensoracle::cli
