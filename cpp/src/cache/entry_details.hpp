// What `tensoracle cache show` and `cache diff` read about single entries: an entry named by its
// file name or a path, and its whole header with sizes and times, as JSON or a table for people.
#pragma once

#include "cache/condition_difference.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tensoracle {

// The entry `entry` names, as `cache show`, `cache diff` and `cache export` take it: a path
// (a text with a directory separator, '/') as given; otherwise a name looked up in `directory`
// alone, in this order: the file of that name, the one engine file whose name starts with it (a
// unique prefix), and the one entry whose conditions' "name" (its recipe's name) it is. Only an
// engine file's name ("<anything>.engine") that no entry matches is then taken from the working
// directory. Throws InvalidArgument listing the candidates (the first ten, then how many more)
// when it is a prefix of several entries' names and not the name of exactly one, and FileError
// when nothing matches.
std::filesystem::path resolve_entry(std::filesystem::path const& directory, std::string_view entry);

// {"file_name", "path", "format_version", "size_bytes", "header_bytes", "plan_bytes",
//  "plan_xxh3_128", "last_used_at", "last_used_at_ns", "built_at", "build_milliseconds",
//  "conditions", "io", "targets", "rebuild_reason", "references", "weight_paths"} of a recognized
// entry; the plan body is not read. Throws CorruptEngineError or FileError.
nlohmann::json entry_details_json(std::filesystem::path const& path);

// The same details as aligned "field  value" lines in sections.
std::string entry_details_table(nlohmann::json const& details);

// {"a", "b", "differences": [...], "same": bool} for two entries' conditions.
nlohmann::json entry_diff_json(std::filesystem::path const& a, std::filesystem::path const& b);

// One line per differing key ("KEY  DESCRIPTION"), or a line saying the conditions are equal.
std::string entry_diff_table(nlohmann::json const& diff);

} // namespace tensoracle
