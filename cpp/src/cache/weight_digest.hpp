// SHA-256 of weight files, remembered across processes in self-checksummed records
// "weight-<sha256 of the absolute path>.json" in the cache directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
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

// Parses and validates one record file's text: a JSON object with exactly the members "path"
// (absolute), "size", "mtime_ns", "inode", "sha256" and "record_sha256", the last being the
// SHA-256 of the canonical JSON of the other five. Throws InvalidArgument saying what is wrong.
WeightRecord parse_weight_record(std::string_view text);

// The record's file text (canonical JSON, with "record_sha256").
std::string encode_weight_record(WeightRecord const& record);

// "weight-<sha256 of the absolute path>.json" in `cache_directory`.
std::filesystem::path weight_record_path(std::filesystem::path const& cache_directory,
                                         std::filesystem::path const& absolute_weight_file);

// Every valid record in the directory (damaged ones are skipped), for `cache list`.
std::vector<WeightRecord> read_weight_records(std::filesystem::path const& cache_directory);

} // namespace tensoracle
