// Reads one saved entry's header (never its plan) and describes it, alone or against another.
#include "cache/entry_details.hpp"

#include "cache/listing.hpp"
#include "cache/weight_digest.hpp"
#include "encryption/plan_encryption.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"
#include "text/size_text.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <system_error>
#include <utility>
#include <vector>

namespace tensoracle {
namespace {

// How many candidates an ambiguous entry's refusal names.
constexpr std::size_t kListedCandidates = 10;

std::string compact(nlohmann::json const& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return "-";
    }
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json member_or_null(nlohmann::json const& object, char const* key) {
    if (!object.is_object()) {
        return nullptr;
    }
    auto const found = object.find(key);
    return found == object.end() ? nlohmann::json() : *found;
}

using Rows = std::vector<std::pair<std::string, std::string>>;

void append_section(std::string& text, std::string const& title, Rows const& rows) {
    std::size_t width = 0;
    for (auto const& row : rows) {
        width = std::max(width, row.first.size());
    }
    if (!text.empty()) {
        text += "\n";
    }
    text += title;
    text += "\n";
    for (auto const& [field, value] : rows) {
        text.append("  ").append(field).append(width - field.size() + 2, ' ');
        text.append(value).append("\n");
    }
}

std::string io_line(nlohmann::json const& tensor) {
    std::string line =
        compact(member_or_null(tensor, "dtype")) + " " + compact(member_or_null(tensor, "shape"));
    for (char const* key : {"min", "opt", "max"}) {
        nlohmann::json const value = member_or_null(tensor, key);
        if (!value.is_null()) {
            line += std::string(" ") + key + "=" + compact(value);
        }
    }
    return line;
}

nlohmann::json tensors_of(nlohmann::json const& io) {
    if (io.is_object() && io.contains("tensors") && io["tensors"].is_array()) {
        return io["tensors"];
    }
    return io.is_array() ? io : nlohmann::json::array();
}

// The engine files of `directory` (not temporary ones) whose name starts with `prefix`, sorted;
// none when the directory cannot be listed.
std::vector<std::string> entries_named_by_prefix(std::filesystem::path const& directory,
                                                 std::string_view prefix) {
    std::vector<std::string> names;
    std::error_code error;
    for (std::filesystem::directory_iterator it(directory, error), end; !error && it != end;
         it.increment(error)) {
        std::string name = it->path().filename().string();
        // A link or another special file is never an entry (cache list calls it unrecognized).
        std::error_code gone;
        bool const regular = it->symlink_status(gone).type() == std::filesystem::file_type::regular;
        if (regular && is_engine_file_name(name) && name.starts_with(prefix)) {
            names.push_back(std::move(name));
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

// The engine files of `directory` whose header's conditions have the "name" `recipe`, sorted;
// a file whose header cannot be read is not one.
std::vector<std::string> entries_of_recipe(std::filesystem::path const& directory,
                                           std::string_view recipe) {
    std::vector<std::string> names;
    for (std::string const& name : entries_named_by_prefix(directory, "")) {
        try {
            nlohmann::json const& conditions =
                read_engine_header(directory / name).header.conditions;
            auto const found = conditions.find("name");
            if (found != conditions.end() && found->is_string() &&
                found->get<std::string>() == recipe) {
                names.push_back(name);
            }
        } catch (Error const&) { // damaged or gone: not an entry of the recipe
        }
    }
    return names;
}

} // namespace

std::filesystem::path resolve_entry(std::filesystem::path const& directory,
                                    std::string_view entry) {
    if (entry.empty()) {
        throw InvalidArgument("the entry is empty: give its file name, a prefix of it, its "
                              "recipe's name or a path");
    }
    std::filesystem::path given{entry};
    if (given.has_parent_path()) { // a path: it holds a separator ('/', '\\' on Windows)
        return given;
    }
    // A bare name is looked up in the cache directory alone: a file or folder of the same name
    // in the working directory (a serving system's model folder is often named as the recipe)
    // never shadows an entry.
    std::error_code ignored;
    if (std::filesystem::exists(directory / given, ignored)) {
        return directory / given;
    }
    std::vector<std::string> const prefixed = entries_named_by_prefix(directory, entry);
    if (prefixed.size() == 1) {
        return directory / prefixed.front();
    }
    std::vector<std::string> const named = entries_of_recipe(directory, entry);
    if (named.size() == 1) {
        return directory / named.front();
    }
    std::vector<std::string> candidates = prefixed;
    for (std::string const& name : named) {
        if (std::find(candidates.begin(), candidates.end(), name) == candidates.end()) {
            candidates.push_back(name);
        }
    }
    if (!candidates.empty()) {
        std::sort(candidates.begin(), candidates.end());
        std::string message = "'" + std::string(entry) + "' names " +
                              std::to_string(candidates.size()) +
                              " entries in the cache directory " + directory.string() +
                              " (by a prefix of their file names or their recipe's name): ";
        std::size_t const listed = std::min(candidates.size(), kListedCandidates);
        message += joined(
            std::vector<std::string>(candidates.begin(),
                                     candidates.begin() + static_cast<std::ptrdiff_t>(listed)),
            ", ");
        if (candidates.size() > kListedCandidates) {
            message += " and " + std::to_string(candidates.size() - kListedCandidates) + " more";
        }
        message += "; give more of the file name";
        throw InvalidArgument(escape_for_terminal(message));
    }
    // An engine file's name that no entry has: the file of that name in the working directory.
    if (is_engine_file_name(entry) && std::filesystem::exists(given, ignored)) {
        return given;
    }
    throw FileError("no entry named '" + std::string(entry) + "' in the cache directory " +
                        directory.string() +
                        " (by its file name, a prefix of it or its recipe's name); to name a file "
                        "elsewhere, give its path (./" +
                        std::string(entry) + ")",
                    directory / given);
}

namespace {

// An encrypted entry's cipher, plan size and recipients' key ids (null for a plain entry).
nlohmann::json encryption_summary(EngineHeader const& header) {
    if (!header.encryption) {
        return nullptr;
    }
    return {{"cipher", encryption::kCipherName},
            {"plan_size", header.encryption->plan_size},
            {"recipients", encryption::recipient_ids(*header.encryption)}};
}

} // namespace

nlohmann::json entry_details_json(std::filesystem::path const& path) {
    DecodedHeader const decoded = read_engine_header(path);
    EngineHeader const& header = decoded.header;
    auto const status = platform::status(path, platform::Follow::no_links);
    if (!status) {
        throw_file_error("cannot read the metadata of", path, errno);
    }
    std::int64_t const used_ns = status->modified_ns;
    std::vector<WeightRecord> const records =
        read_weight_records(std::filesystem::absolute(path).parent_path());
    WeightPathIndex const weights{records};
    return {{"file_name", path.filename().string()},
            {"path", std::filesystem::absolute(path).lexically_normal().string()},
            {"format_version", decoded.format_version},
            {"size_bytes", status->size},
            {"header_bytes", decoded.plan_offset - kEnginePreambleBytes},
            {"plan_bytes", header.plan_size},
            {"plan_xxh3_128", header.plan_xxh3_128},
            {"last_used_at", format_utc_time(used_ns)},
            {"last_used_at_ns", used_ns},
            {"built_at", member_or_null(header.references, "built_at")},
            {"build_milliseconds", member_or_null(header.references, "build_milliseconds")},
            {"conditions", header.conditions},
            {"io", member_or_null(header.references, "io")},
            {"targets", member_or_null(header.references, "targets")},
            {"rebuild_reason", member_or_null(header.references, "rebuild_reason")},
            {"references", header.references},
            {"weight_paths", weight_paths_json(header.conditions, weights)},
            {"encryption", encryption_summary(header)}};
}

namespace {

// "3d1f0a9b2c4e5d6f, 8a7b6c5d4e3f2a1b" for an encrypted entry, "no one (plain)" for a plain one.
std::string encrypted_for(nlohmann::json const& details) {
    nlohmann::json const encryption = member_or_null(details, "encryption");
    if (!encryption.is_object()) {
        return "no one (plain)";
    }
    std::string text;
    for (auto const& id : encryption["recipients"]) {
        text += (text.empty() ? "" : ", ") + id.get<std::string>().substr(0, 16);
    }
    return text;
}

} // namespace

std::string entry_details_table(nlohmann::json const& details) {
    std::string text;
    auto const size = [&](char const* key) {
        nlohmann::json const value = member_or_null(details, key);
        return value.is_number_unsigned() ? format_size_human(value.get<std::uint64_t>())
                                          : compact(value);
    };
    append_section(text, "Entry",
                   {{"file", compact(details["file_name"])},
                    {"path", compact(details["path"])},
                    {"size", size("size_bytes")},
                    {"plan", size("plan_bytes")},
                    {"header", size("header_bytes")},
                    {"plan xxh3_128", compact(details["plan_xxh3_128"])},
                    {"encrypted for", encrypted_for(details)},
                    {"built at", compact(details["built_at"])},
                    {"build time ms", compact(details["build_milliseconds"])},
                    {"last used at", compact(details["last_used_at"])}});
    Rows conditions;
    for (auto const& item : details["conditions"].items()) {
        conditions.emplace_back(item.key(), compact(item.value()));
    }
    append_section(text, "Conditions", conditions);
    Rows io;
    for (nlohmann::json const& tensor : tensors_of(details["io"])) {
        io.emplace_back(compact(member_or_null(tensor, "mode")) + " " +
                            compact(member_or_null(tensor, "name")),
                        io_line(tensor));
    }
    if (!io.empty()) {
        append_section(text, "IO", io);
    }
    Rows weights;
    for (nlohmann::json const& weight : details["weight_paths"]) {
        nlohmann::json const paths = member_or_null(weight, "paths");
        weights.emplace_back(compact(weight["sha256"]).substr(0, 16),
                             paths.empty() ? "(no record of its path)" : compact(paths));
    }
    if (!weights.empty()) {
        append_section(text, "Weights", weights);
    }
    Rows references;
    for (auto const& item : details["references"].items()) {
        if (item.key() != "io" && item.key() != "rebuild_reason") {
            references.emplace_back(item.key(), compact(item.value()));
        }
    }
    append_section(text, "References", references);
    nlohmann::json const reason = details["rebuild_reason"];
    if (reason.is_object()) {
        Rows rows{{"compared with", compact(member_or_null(reason, "compared_with"))}};
        for (nlohmann::json const& difference : member_or_null(reason, "differences")) {
            rows.emplace_back(compact(member_or_null(difference, "key")),
                              compact(member_or_null(difference, "description")));
        }
        if (auto const problem = reason.find("cannot_run_here");
            problem != reason.end() && problem->is_string()) {
            rows.emplace_back("cannot run here", problem->get<std::string>());
        }
        append_section(text, "Built because", rows);
    }
    return escape_lines_for_terminal(text);
}

nlohmann::json entry_diff_json(std::filesystem::path const& a, std::filesystem::path const& b) {
    EngineHeader const first = read_engine_header(a).header;
    EngineHeader const second = read_engine_header(b).header;
    std::vector<WeightRecord> records =
        read_weight_records(std::filesystem::absolute(a).parent_path());
    std::vector<WeightRecord> more =
        read_weight_records(std::filesystem::absolute(b).parent_path());
    records.insert(records.end(), more.begin(), more.end());
    WeightPathIndex const weights{records};
    auto const differences = condition_differences(first.conditions, second.conditions, weights);
    return {{"a", std::filesystem::absolute(a).lexically_normal().string()},
            {"b", std::filesystem::absolute(b).lexically_normal().string()},
            {"same", differences.empty()},
            {"differences", differences_json(differences)}};
}

std::string entry_diff_table(nlohmann::json const& diff) {
    if (diff["differences"].empty()) {
        return "the conditions of the two entries are equal\n";
    }
    Rows rows;
    for (nlohmann::json const& difference : diff["differences"]) {
        rows.emplace_back(compact(difference["key"]), compact(difference["description"]));
    }
    std::string text;
    append_section(text, "a: " + compact(diff["a"]) + "\nb: " + compact(diff["b"]), rows);
    return escape_lines_for_terminal(text);
}

} // namespace tensoracle
