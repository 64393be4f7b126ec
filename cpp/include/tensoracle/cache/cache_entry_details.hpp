// What `tensoracle cache show` and `cache diff` read about single entries: an entry named by its
// file name or a path, and its whole header with sizes and times, as JSON or a table for people.
#pragma once

#include "tensoracle/cache/condition_difference.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tensoracle {

// `entry` as a path: a text with a '/' is a path as given; a bare file name is looked up in
// `directory` first, then in the working directory. Throws FileError naming both places when
// neither holds it.
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
