// `--format json|table`: the one output switch of every `tensoracle` command that prints data
// (the same spelling, values and help everywhere), the hidden `--json` that `bundle inspect`
// took before it, and the aligned text columns of the tables.
#pragma once

#include "text/table_text.hpp"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::cli {

inline constexpr std::string_view kJson = "json";
inline constexpr std::string_view kTable = "table";

// The help of --format on every command: "Print json (for scripts) or table (for people);
// default: <default_format>".
std::string format_help(std::string_view default_format);

// Adds `--format json|table` to `command`; `format` holds the command's default on entry. Any
// other value is a usage error naming the option, the value and the two formats (CLI::IsMember).
CLI::Option* add_format_option(CLI::App& command, std::string& format);

// Adds the deprecated `--json` flag, hidden from the help; see apply_deprecated_json.
CLI::Option* add_deprecated_json_flag(CLI::App& command);

// When `json` was given: sets `format` to json and prints on stderr that --json is deprecated
// (use --format json). Returns kExitUsage after printing a usage error when `--format table` was
// given as well, else nullopt (go on).
std::optional<int> apply_deprecated_json(CLI::Option const& json, CLI::Option const& format_option,
                                         std::string& format, std::string_view command,
                                         std::string_view usage);

// The table layout of the core (escaped cells, aligned columns).
using tensoracle::aligned_rows;

// `text` with every run of whitespace (newlines included) made one space, for a table cell.
std::string one_line(std::string_view text);

} // namespace tensoracle::cli
