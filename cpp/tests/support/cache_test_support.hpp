// Helpers for the `tensoracle cache` tests: saved engine files with chosen headers, plan sizes
// and modification times.
#pragma once

#include "cache/engine_file.hpp"
#include "cache/identity.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "support/test_support.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace tensoracle::testing {

// The modification time in nanoseconds since the Unix epoch, of `path` itself (a link is not
// followed); per OS in support/posix/file_times.cpp and support/windows/file_times.cpp (where
// times have 100 ns steps).
void set_mtime(std::filesystem::path const& path, std::int64_t nanoseconds);
std::int64_t mtime_ns(std::filesystem::path const& path);

inline void write_file(std::filesystem::path const& path, std::string const& text,
                       std::int64_t time_ns) {
    write_all(path, to_bytes(text));
    set_mtime(path, time_ns);
}

inline void append_bytes(std::filesystem::path const& path, std::string const& text) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << text;
}

// The file name the store gives the engine of these conditions ("<name>-<digest>.engine"): the
// only name under which a listing recognizes it.
inline std::string engine_name(nlohmann::json const& conditions) {
    return make_identity(conditions).file_name;
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
    header.chunks = plan_chunks_of(plan); // format version 2, as Store::save writes
    std::vector<std::byte> bytes = encode_engine_prefix(header);
    bytes.insert(bytes.end(), plan.begin(), plan.end());
    write_all(path, bytes);
    set_mtime(path, time_ns);
    return bytes.size();
}

} // namespace tensoracle::testing
