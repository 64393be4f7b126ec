// `tensoracle cache verify`: reads every saved engine completely and checks its header and plan
// checksums as Store::read does, without changing any file or its recorded time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tensoracle {

// unrecognized: not a saved engine at all, whatever its bytes: a symbolic link, a directory or
// another special file at an engine's name, or an engine whose file name is not the one its
// header gives (a copy or hard link under another name, which no open reads).
enum class VerifyStatus { intact, damaged, skipped, unrecognized };

struct VerifiedEntry {
    std::string name;
    std::uint64_t size_bytes = 0;
    VerifyStatus status = VerifyStatus::skipped;
    std::string reason; // why it is damaged, skipped or unrecognized
};

struct CacheVerification {
    std::filesystem::path directory;
    std::vector<VerifiedEntry> entries; // by name
    std::size_t damaged_count = 0;
    std::size_t unrecognized_count = 0;
    // No entry damaged or unrecognized (the command's exit status 0).
    bool passed() const noexcept { return damaged_count == 0 && unrecognized_count == 0; }
};

// Checks one file as Store::read does, but for the conditions (no identity is asked for): header
// fields, file length, the XXH3-128 checksum of the plan and, in format version 2, that of each
// chunk (a chunk's damage names the chunk and both digests). The file is opened without following
// a symbolic link and without blocking (a FIFO), and only a regular file is read, a piece at a
// time into one buffer, its plan hashed as it is read: an engine of any size takes a piece and
// its header of memory. It is never mapped: a file cut short meanwhile is reported, not a SIGBUS.
// Returns an empty string when intact, else the reason.
std::string engine_file_damage(std::filesystem::path const& path);

// Empty and temporary files are skipped (building or leftover); links, directories, special
// files and misnamed engines are unrecognized; every other entry is checked.
CacheVerification verify_cache(std::filesystem::path const& directory);

// {"directory", "entries": [{"file_name", "size_bytes", "status", "reason"?}],
//  "damaged": [{"file_name", "reason"}], "unrecognized": [{"file_name", "reason"}],
//  "intact_count", "damaged_count", "skipped_count", "unrecognized_count"}.
nlohmann::json verification_json(CacheVerification const& verification);

} // namespace tensoracle
