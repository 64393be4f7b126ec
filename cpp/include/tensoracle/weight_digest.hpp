// SHA-256 of weight files, remembered across processes in self-checksummed records
// "weight-<sha256 of the absolute path>.json" in the cache directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tensoracle {

struct WeightRecord {
    std::filesystem::path path; // absolute
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t inode = 0;
    std::string sha256;
};

struct WeightDigest {
    std::string sha256;
    bool from_record = false; // true when a matching record made reading the file unnecessary
};

// Returns the digest of `weight_file`, reusing the record when absolute path, size, mtime (ns)
// and inode all match and the record's own checksum is valid; otherwise (or with `force`) reads
// the file and rewrites the record atomically. A damaged record is ignored and rewritten.
WeightDigest weight_digest(std::filesystem::path const& cache_directory,
                           std::filesystem::path const& weight_file, bool force = false);

// Every valid record in the directory (damaged ones are skipped), for `cache list`.
std::vector<WeightRecord> read_weight_records(std::filesystem::path const& cache_directory);

} // namespace tensoracle
