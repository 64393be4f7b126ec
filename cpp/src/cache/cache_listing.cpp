// Scans a cache directory for saved engines and describes them as JSON or as a text table,
// reading only directory entries, file metadata, engine headers and weight digest records.
#include "tensoracle/cache/cache_listing.hpp"

#include "io/platform.hpp"
#include "tensoracle/cache/cache_file.hpp"
#include "tensoracle/cache/identity.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/atomic_file.hpp"
#include "tensoracle/text/size_text.hpp"
#include "tensoracle/text/table_text.hpp"
#include "tensoracle/text/utf8_text.hpp"

#include <algorithm>
#include <cerrno>
#include <map>
#include <memory>
#include <ostream>

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
                                               nlohmann::json const& conditions) {
    std::string expected;
    try {
        // As recorded: an entry saved before targets were sorted keeps its name.
        expected = recorded_identity(conditions).file_name;
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
        entry.header = read_engine_header(path).header;
        entry.status = EntryStatus::recognized;
        if (auto mismatch = entry_name_mismatch(entry.name, entry.header->conditions)) {
            entry.header.reset();
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
    for (std::string const& name : *names) {
        bool const temporary = is_temporary_engine_name(name);
        if (!temporary && !is_engine_file_name(name)) {
            continue;
        }
        auto const status = platform::status(directory / name, platform::Follow::no_links);
        if (!status) {
            if (errno == ENOENT) {
                continue; // removed since the directory was read
            }
            throw_file_error("cannot read the metadata of", directory / name, errno);
        }
        CacheEntry entry;
        entry.name = name;
        entry.size_bytes = status->size;
        entry.recorded_at_ns = status->modified_ns;
        entry.inode = status->identity;
        entry.device = status->device;
        entry.temporary = temporary;
        if (status->kind != platform::FileKind::regular) {
            // Never opened: a link, a directory or a FIFO is listed as unrecognized with the
            // reason, so `cache verify` reports it and `prune` leaves it alone like any other
            // file it cannot judge. It holds no engine bytes.
            entry.regular = false;
            entry.size_bytes = 0;
            entry.status = EntryStatus::unrecognized;
            entry.reason = status->kind == platform::FileKind::link
                               ? link_refusal(directory / name)
                               : not_regular_refusal(directory / name,
                                                     status->kind == platform::FileKind::directory);
        } else if (temporary || entry.size_bytes == 0) {
            entry.status = EntryStatus::building_or_leftover;
        } else if (!read_headers) {
            entry.status = EntryStatus::unrecognized;
        } else if (!read_entry_header(directory, entry)) {
            continue;
        }
        scan.entries.push_back(std::move(entry));
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

nlohmann::json entry_json(CacheEntry const& entry, WeightPathIndex const& weights) {
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
        json["conditions"] = entry.header->conditions;
        json["workspace_limit"] = workspace_limit_json(*entry.header);
        json["weight_paths"] = weight_paths_json(entry.header->conditions, weights);
    }
    return json;
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
    auto const text = [](nlohmann::json const& value) {
        return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    out << "{\n  \"directory\": " << text(scan.directory.string()) << ",\n  \"entries\": [";
    DistinctFiles files;
    bool first = true;
    for (CacheEntry& entry : scan.entries) {
        bool const needs_header = entry.regular && !entry.temporary && entry.size_bytes > 0;
        if (needs_header && !read_entry_header(directory, entry)) {
            continue; // removed since the directory was read
        }
        out << (first ? "\n    " : ",\n    ") << text(entry_json(entry, weights));
        first = false;
        files.add(entry);
        entry.header.reset(); // keep memory flat: one header at a time
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
    text += std::to_string(scan.entries.size()) + " entries, " +
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
