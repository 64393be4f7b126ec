// What `tensoracle cache list` sees in a cache directory: every saved engine file and every
// temporary file of a save, described from filesystem metadata and engine headers only.
#pragma once

#include "cache/engine_file.hpp"
#include "cache/weight_digest.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tensoracle {

enum class EntryStatus { recognized, building_or_leftover, unrecognized };

// "recognized", "building or leftover", "unrecognized".
std::string_view status_text(EntryStatus status) noexcept;

// "<anything>.engine", the name of a saved engine.
bool is_engine_file_name(std::string_view file_name) noexcept;
// The AtomicFile temporary file of a saved engine: "<anything>.engine.tmp-<pid>-<random>".
bool is_temporary_engine_name(std::string_view file_name) noexcept;

struct CacheEntry {
    std::string name;                // file name inside the cache directory
    std::uint64_t size_bytes = 0;    // 0 for what is not a regular file
    std::int64_t recorded_at_ns = 0; // modification time, nanoseconds since the Unix epoch
    std::uint64_t inode = 0;
    std::uint64_t device = 0; // with the inode, tells hard links of one file apart from copies
    bool temporary = false;
    // False for a symbolic link, a directory or another special file at the name: never opened,
    // always unrecognized with the reason.
    bool regular = true;
    EntryStatus status = EntryStatus::building_or_leftover;
    std::string reason;                 // why the header is unrecognized
    std::optional<EngineHeader> header; // set for recognized entries
    std::string conditions_json;        // with header: its canonical text of header->conditions
};

struct CacheScan {
    std::filesystem::path directory;
    bool exists = false;             // false: the directory has not been created yet
    std::vector<CacheEntry> entries; // sorted by name (byte order)
    // Every listed file, temporary ones included, each file once: the names of one file (hard
    // links, the same device and inode) count once.
    std::uint64_t total_size_bytes = 0;
};

// The size of `entries` with each file counted once: entries of the same device and inode
// (hard links of one file) count once. An inode of 0 (unknown) is never taken for another's.
class DistinctFiles {
public:
    // Adds the entry; returns true (and counts its size) when its file was not seen before.
    bool add(std::uint64_t device, std::uint64_t inode, std::uint64_t size_bytes);
    bool add(CacheEntry const& entry) { return add(entry.device, entry.inode, entry.size_bytes); }
    std::uint64_t total_bytes() const noexcept { return total_; }

private:
    struct FileHash {
        std::size_t operator()(std::pair<std::uint64_t, std::uint64_t> const& file) const noexcept {
            return std::hash<std::uint64_t>{}(file.first * 0x9E3779B97F4A7C15ULL ^ file.second);
        }
    };
    std::unordered_set<std::pair<std::uint64_t, std::uint64_t>, FileHash> seen_; // (device, inode)
    std::uint64_t total_ = 0;
};

std::uint64_t distinct_size_bytes(std::span<CacheEntry const> entries);

// Why the file name `file_name` is not the one a saved engine with these header conditions has
// ("<safe name>-<digest>.engine", make_identity), or nullopt when it is. A copy or hard link of an
// entry under another name is never opened by open_engine, so it is unrecognized.
// `canonical_conditions`, when not empty, is canonical_json(conditions) (the header's own text).
std::optional<std::string> entry_name_mismatch(std::string_view file_name,
                                               nlohmann::json const& conditions,
                                               std::string_view canonical_conditions = {});

// Lists the directory without following symbolic links or reading any plan body. A link, a
// directory or another special file at an engine's name is `unrecognized` with the reason, as is
// an entry whose name does not match its header (entry_name_mismatch). With `read_headers` false
// every other non-empty, non-temporary entry is left `unrecognized` with an empty reason (metadata
// only). A missing directory is an empty scan; other failures throw FileError.
CacheScan scan_cache(std::filesystem::path const& directory, bool read_headers = true);

// A positive integer, null (TensorRT's default), or "unknown" when the header has no valid
// "workspace_limit" reference.
nlohmann::json workspace_limit_json(EngineHeader const& header);

// Reads the header of a non-empty, non-temporary regular entry scanned without headers and sets
// its status, header or reason (a name that does not match the header is unrecognized). Returns
// false when the file has disappeared meanwhile.
bool read_entry_header(std::filesystem::path const& directory, CacheEntry& entry);

// The paths of valid weight digest records, by SHA-256 (sorted, without duplicates).
class WeightPathIndex {
public:
    explicit WeightPathIndex(std::span<WeightRecord const> records);
    nlohmann::json paths_for(std::string const& digest) const; // [] when unknown

private:
    std::map<std::string, std::vector<std::string>, std::less<>> paths_by_digest_;
};

// For each SHA-256 string of conditions["weights"], in order: {"sha256", "paths"} with the
// paths of the records whose digest matches (empty when unknown).
nlohmann::json weight_paths_json(nlohmann::json const& conditions, WeightPathIndex const& index);

// {"file_name", "size_bytes", "recorded_at", "recorded_at_ns", "status", "temporary"}, plus
// "reason" for unrecognized entries and "conditions", "workspace_limit", "weight_paths" for
// recognized ones.
nlohmann::json entry_json(CacheEntry const& entry, WeightPathIndex const& weights);

// {"directory", "entries", "total_size_bytes"} for an already scanned directory.
nlohmann::json listing_json(CacheScan const& scan, std::span<WeightRecord const> records);

// Writes the same object as listing_json for `directory`, streaming: the headers of a batch of
// entries (1,024) are read on a few worker threads, written in the directory's order (one entry
// per line) and released before the next batch, so memory stays flat however many entries there
// are and the output starts after the first batch. The total counts the entries written.
void write_listing_json(std::ostream& out, std::filesystem::path const& directory);

// An aligned text table for people: name, graph version, size, recorded time, status, targets;
// after the total, one line per unrecognized entry with its reason.
std::string listing_table(CacheScan const& scan);

} // namespace tensoracle
