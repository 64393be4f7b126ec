// Scans a cache directory for saved engines and describes them as JSON or as a text table,
// reading only directory entries, file metadata, engine headers and weight digest records.
#include "cache/listing.hpp"

#include "cache/entry_workers.hpp"
#include "cache/file.hpp"
#include "cache/identity.hpp"
#include "io/atomic_file.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "text/size_text.hpp"
#include "text/table_text.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

constexpr std::string_view kEngineSuffix = ".engine";
constexpr std::string_view kTemporaryInfix = ".engine.tmp-";

std::string text_or_dash(nlohmann::json const& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_null()) {
        return "-";
    }
    return value.dump();
}

// conditions["hardware_compatibility"] (with the targets, if any, after it), else
// conditions["targets"] joined with ",", else conditions["gpu"]["name"], else "-".
std::string targets_text(CacheEntry const& entry) {
    if (!entry.header) {
        return "-";
    }
    nlohmann::json const& conditions = entry.header->conditions;
    if (auto const level = conditions.find("hardware_compatibility");
        level != conditions.end() && level->is_string()) {
        std::string text = level->get<std::string>();
        if (auto const targets = conditions.find("targets");
            targets != conditions.end() && targets->is_array() && !targets->empty()) {
            text += " (" + text_or_dash(targets->front()) + ")";
        }
        return text;
    }
    if (auto const targets = conditions.find("targets"); targets != conditions.end()) {
        if (targets->is_array()) {
            std::string joined;
            for (nlohmann::json const& target : *targets) {
                joined += (joined.empty() ? "" : ",") + text_or_dash(target);
            }
            return joined.empty() ? "-" : joined;
        }
        return text_or_dash(*targets);
    }
    if (auto const gpu = conditions.find("gpu"); gpu != conditions.end() && gpu->is_object()) {
        if (auto const name = gpu->find("name"); name != gpu->end()) {
            return text_or_dash(*name);
        }
    }
    return "-";
}

std::string graph_version_text(CacheEntry const& entry) {
    if (!entry.header) {
        return "-";
    }
    auto const version = entry.header->conditions.find("graph_version");
    return version == entry.header->conditions.end() ? "-" : text_or_dash(*version);
}

} // namespace

std::string_view status_text(EntryStatus status) noexcept {
    switch (status) {
    case EntryStatus::recognized:
        return "recognized";
    case EntryStatus::building_or_leftover:
        return "building or leftover";
    case EntryStatus::unrecognized:
        return "unrecognized";
    }
    return "unrecognized";
}

bool is_engine_file_name(std::string_view file_name) noexcept {
    return file_name.size() > kEngineSuffix.size() && file_name.ends_with(kEngineSuffix);
}

bool is_temporary_engine_name(std::string_view file_name) noexcept {
    std::size_t const infix = file_name.rfind(kTemporaryInfix);
    return infix != std::string_view::npos && infix > 0 && is_temporary_name(file_name);
}

bool DistinctFiles::add(std::uint64_t device, std::uint64_t inode, std::uint64_t size_bytes) {
    if (inode != 0 && !seen_.emplace(device, inode).second) {
        return false;
    }
    total_ += size_bytes;
    return true;
}

std::uint64_t distinct_size_bytes(std::span<CacheEntry const> entries) {
    DistinctFiles files;
    for (CacheEntry const& entry : entries) {
        files.add(entry);
    }
    return files.total_bytes();
}

std::optional<std::string> entry_name_mismatch(std::string_view file_name,
                                               nlohmann::json const& conditions,
                                               std::string_view canonical_conditions) {
    std::string expected;
    try {
        // As recorded: an entry saved before targets were sorted keeps its name.
        expected = canonical_conditions.empty()
                       ? recorded_file_name(conditions)
                       : recorded_file_name(conditions, canonical_conditions);
    } catch (Error const& error) {
        return std::string("its header's conditions name no saved engine (") + error.what() + ")";
    }
    if (expected == file_name) {
        return std::nullopt;
    }
    return "the file name does not match its header: a saved engine with these conditions is "
           "named '" +
           expected + "' (a copy or link under another name, which open_engine never reads)";
}

bool read_entry_header(std::filesystem::path const& directory, CacheEntry& entry) {
    std::filesystem::path const path = directory / entry.name;
    try {
        DecodedHeader decoded = read_engine_header(path);
        entry.header = std::move(decoded.header);
        entry.conditions_json = std::move(decoded.conditions_json);
        entry.status = EntryStatus::recognized;
        if (auto mismatch =
                entry_name_mismatch(entry.name, entry.header->conditions, entry.conditions_json)) {
            entry.header.reset();
            entry.conditions_json = std::string();
            entry.status = EntryStatus::unrecognized;
            entry.reason = std::move(*mismatch);
        }
    } catch (CorruptEngineError const& error) {
        entry.status = EntryStatus::unrecognized;
        entry.reason = error.what();
    } catch (FileError const& error) {
        std::error_code ignored;
        if (!std::filesystem::exists(std::filesystem::symlink_status(path, ignored))) {
            return false;
        }
        entry.status = EntryStatus::unrecognized;
        entry.reason = error.what();
    }
    return true;
}

namespace {

// A name the scan keeps: an engine's, or a temporary file of a save.
struct ListedName {
    std::string name;
    bool temporary = false;
};

// The entry at `listed` from its metadata (never following a link) and, when asked, its header.
// Returns nullopt when the file has disappeared since the directory was read.
std::optional<CacheEntry> describe_entry(std::filesystem::path const& directory,
                                         ListedName const& listed, bool read_headers) {
    auto const status = platform::status(directory / listed.name, platform::Follow::no_links);
    if (!status) {
        if (errno == ENOENT) {
            return std::nullopt; // removed since the directory was read
        }
        throw_file_error("cannot read the metadata of", directory / listed.name, errno);
    }
    CacheEntry entry;
    entry.name = listed.name;
    entry.size_bytes = status->size;
    entry.recorded_at_ns = status->modified_ns;
    entry.inode = status->identity;
    entry.device = status->device;
    entry.temporary = listed.temporary;
    if (status->kind != platform::FileKind::regular) {
        // Never opened: a link, a directory or a FIFO is listed as unrecognized with the
        // reason, so `cache verify` reports it and `prune` leaves it alone like any other
        // file it cannot judge. It holds no engine bytes.
        entry.regular = false;
        entry.size_bytes = 0;
        entry.status = EntryStatus::unrecognized;
        entry.reason = status->kind == platform::FileKind::link
                           ? link_refusal(directory / entry.name)
                           : not_regular_refusal(directory / entry.name,
                                                 status->kind == platform::FileKind::directory);
    } else if (listed.temporary || entry.size_bytes == 0) {
        entry.status = EntryStatus::building_or_leftover;
    } else if (!read_headers) {
        entry.status = EntryStatus::unrecognized;
    } else if (!read_entry_header(directory, entry)) {
        return std::nullopt;
    }
    return entry;
}

} // namespace

CacheScan scan_cache(std::filesystem::path const& directory, bool read_headers) {
    CacheScan scan;
    scan.directory = directory;
    auto const names = platform::list_directory(directory);
    if (!names) {
        if (errno == ENOENT) {
            return scan;
        }
        throw_file_error("cannot list the cache directory", directory, errno);
    }
    scan.exists = true;
    std::vector<ListedName> listed;
    for (std::string const& name : *names) {
        bool const temporary = is_temporary_engine_name(name);
        if (temporary || is_engine_file_name(name)) {
            listed.push_back({name, temporary});
        }
    }
    std::vector<std::optional<CacheEntry>> described(listed.size());
    detail::for_each_entry(listed.size(), [&](std::size_t index) {
        described[index] = describe_entry(directory, listed[index], read_headers);
    });
    for (std::optional<CacheEntry>& entry : described) {
        if (entry) {
            scan.entries.push_back(std::move(*entry));
        }
    }
    std::sort(scan.entries.begin(), scan.entries.end(),
              [](CacheEntry const& a, CacheEntry const& b) { return a.name < b.name; });
    scan.total_size_bytes = distinct_size_bytes(scan.entries);
    return scan;
}

nlohmann::json workspace_limit_json(EngineHeader const& header) {
    if (!header.references.is_object()) {
        return "unknown";
    }
    auto const limit = header.references.find("workspace_limit");
    if (limit == header.references.end()) {
        return "unknown";
    }
    if (limit->is_null()) {
        return nullptr;
    }
    if (limit->is_number_unsigned() && limit->get<std::uint64_t>() > 0) {
        return *limit;
    }
    if (limit->is_number_integer() && limit->get<std::int64_t>() > 0) {
        return *limit;
    }
    return "unknown";
}

WeightPathIndex::WeightPathIndex(std::span<WeightRecord const> records) {
    for (WeightRecord const& record : records) {
        paths_by_digest_[record.sha256].push_back(record.path.string());
    }
    for (auto& [digest, paths] : paths_by_digest_) {
        std::sort(paths.begin(), paths.end());
        paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    }
}

nlohmann::json WeightPathIndex::paths_for(std::string const& digest) const {
    auto const found = paths_by_digest_.find(digest);
    if (found == paths_by_digest_.end()) {
        return nlohmann::json::array();
    }
    return found->second;
}

nlohmann::json weight_paths_json(nlohmann::json const& conditions, WeightPathIndex const& index) {
    nlohmann::json result = nlohmann::json::array();
    if (!conditions.is_object()) {
        return result;
    }
    auto const weights = conditions.find("weights");
    if (weights == conditions.end() || !weights->is_array()) {
        return result;
    }
    for (nlohmann::json const& digest : *weights) {
        if (digest.is_string()) {
            result.push_back(
                {{"sha256", digest}, {"paths", index.paths_for(digest.get<std::string>())}});
        }
    }
    return result;
}

namespace {

// entry_json's object, less "conditions" when `conditions` is null.
nlohmann::json entry_json_with(CacheEntry const& entry, WeightPathIndex const& weights,
                               nlohmann::json const* conditions) {
    nlohmann::json json = {{"file_name", entry.name},
                           {"size_bytes", entry.size_bytes},
                           {"recorded_at", format_utc_time(entry.recorded_at_ns)},
                           {"recorded_at_ns", entry.recorded_at_ns},
                           {"status", status_text(entry.status)},
                           {"temporary", entry.temporary}};
    if (entry.status == EntryStatus::unrecognized) {
        json["reason"] = entry.reason;
    }
    if (entry.header) {
        json["workspace_limit"] = workspace_limit_json(*entry.header);
        json["weight_paths"] = weight_paths_json(entry.header->conditions, weights);
        if (conditions != nullptr) {
            json["conditions"] = *conditions;
        }
    }
    return json;
}

// Compact JSON, invalid UTF-8 replaced: how the listing writes names and what headers say.
std::string listing_text(nlohmann::json const& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// listing_text(entry_json(entry, weights)), made without writing the conditions again: they are
// the first member ("conditions" sorts before every other key), and their text is the header's
// own canonical text of them, which is how dump() writes them (valid UTF-8, sorted keys, compact).
std::string entry_line(CacheEntry const& entry, WeightPathIndex const& weights) {
    if (!entry.header || entry.conditions_json.empty()) {
        return listing_text(entry_json(entry, weights));
    }
    std::string const others = listing_text(entry_json_with(entry, weights, nullptr));
    std::string line;
    line.reserve(entry.conditions_json.size() + others.size() + 16);
    line += R"({"conditions":)";
    line += entry.conditions_json;
    line += ',';
    line.append(others, 1); // without its "{"
    return line;
}

} // namespace

nlohmann::json entry_json(CacheEntry const& entry, WeightPathIndex const& weights) {
    return entry_json_with(entry, weights, entry.header ? &entry.header->conditions : nullptr);
}

nlohmann::json listing_json(CacheScan const& scan, std::span<WeightRecord const> records) {
    WeightPathIndex const weights{records};
    nlohmann::json entries = nlohmann::json::array();
    for (CacheEntry const& entry : scan.entries) {
        entries.push_back(entry_json(entry, weights));
    }
    return {{"directory", scan.directory.string()},
            {"entries", std::move(entries)},
            {"total_size_bytes", scan.total_size_bytes}};
}

void write_listing_json(std::ostream& out, std::filesystem::path const& directory) {
    CacheScan scan = scan_cache(directory, false);
    std::vector<WeightRecord> records;
    if (scan.exists) {
        records = read_weight_records(directory);
    }
    WeightPathIndex const weights{records};
    out << "{\n  \"directory\": " << listing_text(scan.directory.string()) << ",\n  \"entries\": [";
    DistinctFiles files;
    bool first = true;
    // A batch of entries at a time: their headers read and their lines made on the entry
    // workers, then written in order and released, so memory stays flat however many there are.
    constexpr std::size_t batch_entries = 1024;
    std::vector<std::optional<std::string>> lines;
    for (std::size_t start = 0; start < scan.entries.size(); start += batch_entries) {
        std::size_t const count = std::min(batch_entries, scan.entries.size() - start);
        lines.assign(count, std::nullopt);
        detail::for_each_entry(count, [&](std::size_t index) {
            CacheEntry& entry = scan.entries[start + index];
            bool const needs_header = entry.regular && !entry.temporary && entry.size_bytes > 0;
            if (needs_header && !read_entry_header(directory, entry)) {
                return; // removed since the directory was read
            }
            lines[index] = entry_line(entry, weights);
            entry.header.reset();
            entry.conditions_json = std::string();
        });
        for (std::size_t index = 0; index < count; ++index) {
            if (!lines[index]) {
                continue;
            }
            out << (first ? "\n    " : ",\n    ") << *lines[index];
            first = false;
            files.add(scan.entries[start + index]);
        }
    }
    out << (first ? "],\n" : "\n  ],\n") << "  \"total_size_bytes\": " << files.total_bytes()
        << "\n}\n";
}

std::string listing_table(CacheScan const& scan) {
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"NAME", "GRAPH_VERSION", "SIZE", "RECORDED_AT", "STATUS", "TARGETS"});
    for (CacheEntry const& entry : scan.entries) {
        rows.push_back({entry.name, graph_version_text(entry), format_size_human(entry.size_bytes),
                        format_utc_time(entry.recorded_at_ns),
                        std::string(status_text(entry.status)), targets_text(entry)});
    }
    // aligned_rows escapes the cells: names and what headers say are not ours.
    std::string text = aligned_rows(rows);
    text += std::to_string(scan.entries.size()) +
            (scan.entries.size() == 1 ? " entry, " : " entries, ") +
            format_size_human(scan.total_size_bytes) + " in " +
            escape_for_terminal(scan.directory.string()) + "\n";
    for (CacheEntry const& entry : scan.entries) {
        if (entry.status == EntryStatus::unrecognized && !entry.reason.empty()) {
            text += "unrecognized " + escape_for_terminal(entry.name) + ": " +
                    escape_for_terminal(entry.reason) + "\n";
        }
    }
    return text;
}

} // namespace tensoracle
