// Helpers for the `tensoracle cache` tests: saved engine files with chosen headers, plan sizes
// and modification times.
#pragma once

#include "support/test_support.hpp"
#include "tensoracle/cache/engine_file.hpp"
#include "tensoracle/cache/plan_checksum.hpp"

#include <cstdint>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace tensoracle::testing {

inline void set_mtime(std::filesystem::path const& path, std::int64_t nanoseconds) {
    timespec times[2];
    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_OMIT;
    times[1].tv_sec = static_cast<time_t>(nanoseconds / 1'000'000'000);
    times[1].tv_nsec = static_cast<long>(nanoseconds % 1'000'000'000);
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) {
        throw std::runtime_error("utimensat failed for " + path.string());
    }
}

inline std::int64_t mtime_ns(std::filesystem::path const& path) {
    struct stat status {};
    if (::lstat(path.c_str(), &status) != 0) {
        throw std::runtime_error("lstat failed for " + path.string());
    }
    return static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 +
           static_cast<std::int64_t>(status.st_mtim.tv_nsec);
}

inline void write_file(std::filesystem::path const& path, std::string const& text,
                       std::int64_t time_ns) {
    write_all(path, to_bytes(text));
    set_mtime(path, time_ns);
}

inline void append_bytes(std::filesystem::path const& path, std::string const& text) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << text;
}

// A valid saved engine with a random plan of `plan_size` bytes; returns the file size.
inline std::uint64_t write_engine(std::filesystem::path const& path, nlohmann::json conditions,
                                  nlohmann::json references, std::size_t plan_size,
                                  std::int64_t time_ns) {
    EngineHeader header;
    header.conditions = std::move(conditions);
    header.references = references.is_null() ? nlohmann::json::object() : std::move(references);
    std::vector<std::byte> const plan =
        random_bytes(plan_size, static_cast<std::uint32_t>(plan_size));
    header.plan_size = plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(plan);
    std::vector<std::byte> bytes = encode_engine_prefix(header);
    bytes.insert(bytes.end(), plan.begin(), plan.end());
    write_all(path, bytes);
    set_mtime(path, time_ns);
    return bytes.size();
}

} // namespace tensoracle::testing
