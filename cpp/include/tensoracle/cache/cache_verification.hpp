// `tensoracle cache verify`: reads every saved engine completely and checks its header and plan
// checksum, without changing any file or its recorded time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tensoracle {

enum class VerifyStatus { intact, damaged, skipped };

struct VerifiedEntry {
    std::string name;
    std::uint64_t size_bytes = 0;
    VerifyStatus status = VerifyStatus::skipped;
    std::string reason; // why it is damaged or skipped
};

struct CacheVerification {
    std::filesystem::path directory;
    std::vector<VerifiedEntry> entries; // by name
    std::size_t damaged_count = 0;
};

// Checks one file: header fields, file length and the XXH3-128 checksum of the plan. Returns an
// empty string when intact, else the reason.
std::string engine_file_damage(std::filesystem::path const& path);

// Empty and temporary files are skipped (building or leftover); every other entry is checked.
CacheVerification verify_cache(std::filesystem::path const& directory);

// {"directory", "entries": [{"file_name", "size_bytes", "status", "reason"?}],
//  "damaged": [{"file_name", "reason"}], "intact_count", "damaged_count", "skipped_count"}.
nlohmann::json verification_json(CacheVerification const& verification);

} // namespace tensoracle
