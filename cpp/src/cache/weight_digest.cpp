// Weight-file digests remembered across processes in small self-checksummed JSON records.
#include "cache/weight_digest.hpp"

#include "cache/store.hpp"
#include "io/atomic_file.hpp"
#include "io/file_bytes.hpp"
#include "io/hash.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace tensoracle {
namespace {

constexpr std::size_t kMaxRecordBytes = std::size_t{64} * 1024;
// A record is one object of six members (7 values); 1,024 leaves room for members a later
// version adds, and refuses a 64 KiB record of many small values after its first 3 KiB.
constexpr std::size_t kMaxRecordValues = 1024;
constexpr std::string_view kRecordPrefix = "weight-";
constexpr std::string_view kRecordSuffix = ".json";

// What identifies one version of a file without reading it.
struct FileStamp {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t inode = 0;
    bool operator==(FileStamp const&) const = default;
};

FileStamp stamp_of(std::filesystem::path const& path) {
    auto const status = platform::status(path, platform::Follow::links);
    if (!status) {
        throw_file_error("cannot stat weight file", path, errno);
    }
    if (status->kind != platform::FileKind::regular) {
        throw FileError("weight file '" + path.string() + "' is not a regular file", path);
    }
    FileStamp stamp;
    stamp.size = status->size;
    stamp.mtime_ns = status->modified_ns;
    stamp.inode = status->identity;
    return stamp;
}

nlohmann::json fields_of(WeightRecord const& record) {
    return {{"path", record.path.string()},
            {"size", record.size},
            {"mtime_ns", record.mtime_ns},
            {"inode", record.inode},
            {"sha256", record.sha256}};
}

[[noreturn]] void bad_record(std::string const& reason) {
    throw InvalidArgument("invalid weight digest record: " + reason);
}

std::uint64_t unsigned_member(nlohmann::json const& json, char const* name) {
    auto const& value = json.at(name);
    if (!value.is_number_unsigned()) {
        bad_record(std::string("\"") + name + "\" must be a non-negative integer, not " +
                   value.dump());
    }
    return value.get<std::uint64_t>();
}

std::int64_t signed_member(nlohmann::json const& json, char const* name) {
    auto const& value = json.at(name);
    if (value.is_number_unsigned()) {
        if (value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            bad_record(std::string("\"") + name + "\" is out of range: " + value.dump());
        }
        return static_cast<std::int64_t>(value.get<std::uint64_t>());
    }
    if (!value.is_number_integer()) {
        bad_record(std::string("\"") + name + "\" must be an integer, not " + value.dump());
    }
    return value.get<std::int64_t>();
}

std::string sha_member(nlohmann::json const& json, char const* name) {
    auto const& value = json.at(name);
    if (!value.is_string() || !is_sha256_hex(value.get_ref<std::string const&>())) {
        bad_record(std::string("\"") + name + "\" must be 64 lowercase hex digits, not " +
                   value.dump());
    }
    return value.get<std::string>();
}

// A record file's text; std::nullopt when it is missing, too large, unreadable, or not a regular
// file (a symbolic link planted in the cache is not followed).
std::optional<std::string> read_small_file(std::filesystem::path const& path) {
    try {
        auto const bytes = read_file_bytes(path, kMaxRecordBytes, Links::refuse);
        if (!bytes) {
            return std::nullopt;
        }
        return std::string(bytes->begin(), bytes->end());
    } catch (FileError const&) {
        return std::nullopt;
    }
}

} // namespace

WeightRecord parse_weight_record(std::string_view text) {
    if (text.size() > kMaxRecordBytes) {
        bad_record("larger than " + std::to_string(kMaxRecordBytes) + " bytes");
    }
    nlohmann::json json;
    try {
        json = parse_bounded_json(text,
                                  {.max_bytes = kMaxRecordBytes, .max_values = kMaxRecordValues});
    } catch (JsonLimitError const& error) {
        bad_record(std::string("not valid JSON: ") + error.what());
    }
    if (!json.is_object()) {
        bad_record(std::string("a JSON ") + json.type_name() + ", not an object");
    }
    static constexpr std::array<char const*, 6> kMembers = {"inode",         "mtime_ns", "path",
                                                            "record_sha256", "sha256",   "size"};
    for (char const* name : kMembers) {
        if (!json.contains(name)) {
            bad_record(std::string("lacks the member \"") + name + "\"");
        }
    }
    if (json.size() != kMembers.size()) {
        for (auto const& item : json.items()) {
            if (std::find_if(kMembers.begin(), kMembers.end(), [&](char const* name) {
                    return item.key() == name;
                }) == kMembers.end()) {
                bad_record("unexpected member \"" + item.key() + "\"");
            }
        }
    }
    auto const& path = json.at("path");
    // Absolute as the OS spells it: "/..." on POSIX, "C:\\..." on Windows.
    if (!path.is_string() ||
        !std::filesystem::path(path.get_ref<std::string const&>()).is_absolute()) {
        bad_record("\"path\" must be an absolute path string, not " + path.dump());
    }
    WeightRecord record;
    record.path = path.get<std::string>();
    record.size = unsigned_member(json, "size");
    record.mtime_ns = signed_member(json, "mtime_ns");
    record.inode = unsigned_member(json, "inode");
    record.sha256 = sha_member(json, "sha256");
    std::string const recorded = sha_member(json, "record_sha256");
    std::string const expected = sha256_hex(canonical_json(fields_of(record)));
    if (recorded != expected) {
        bad_record("\"record_sha256\" is " + recorded + " but the other members hash to " +
                   expected);
    }
    return record;
}

std::string encode_weight_record(WeightRecord const& record) {
    if (!record.path.is_absolute()) {
        throw InvalidArgument("weight record path must be absolute, not '" + record.path.string() +
                              "'");
    }
    if (!is_sha256_hex(record.sha256)) {
        throw InvalidArgument("weight record sha256 must be 64 lowercase hex digits, not '" +
                              record.sha256 + "'");
    }
    nlohmann::json json = fields_of(record);
    json["record_sha256"] = sha256_hex(canonical_json(json));
    return canonical_json(json);
}

std::filesystem::path weight_record_path(std::filesystem::path const& cache_directory,
                                         std::filesystem::path const& absolute_weight_file) {
    return cache_directory /
           (std::string(kRecordPrefix) + sha256_hex(absolute_weight_file.string()) +
            std::string(kRecordSuffix));
}

WeightDigest weight_digest(std::filesystem::path const& cache_directory,
                           std::filesystem::path const& weight_file, bool force) {
    auto const absolute = std::filesystem::absolute(weight_file).lexically_normal();
    auto const record_path = weight_record_path(cache_directory, absolute);
    FileStamp before = stamp_of(absolute);
    if (!force) {
        if (auto const text = read_small_file(record_path)) {
            try {
                auto const record = parse_weight_record(*text);
                FileStamp const recorded{record.size, record.mtime_ns, record.inode};
                if (record.path == absolute && recorded == before) {
                    return {record.sha256, true};
                }
            } catch (InvalidArgument const&) {
                // A damaged record is as good as none: it is rewritten below.
            }
        }
    }
    // A file rewritten while it is hashed would pair a stamp with bytes it never held; hash until
    // the stamp is stable across the read.
    std::string digest;
    for (int attempt = 0;; ++attempt) {
        digest = sha256_file_hex(absolute);
        FileStamp const after = stamp_of(absolute);
        if (after == before) {
            break;
        }
        if (attempt == 2) {
            throw FileError("weight file '" + absolute.string() +
                                "' kept changing while it was being read",
                            absolute);
        }
        before = after;
    }
    WeightRecord record{absolute, before.size, before.mtime_ns, before.inode, digest};
    // The record only saves time later: a cache that cannot be written (read-only, full) still
    // yields the correct digest now.
    try {
        create_private_directories(cache_directory);
        AtomicFile file(record_path);
        file.write(encode_weight_record(record));
        file.commit();
    } catch (FileError const&) {
    }
    return {digest, false};
}

std::vector<WeightRecord> read_weight_records(std::filesystem::path const& cache_directory) {
    std::vector<WeightRecord> records;
    std::error_code error;
    std::filesystem::directory_iterator entries(cache_directory, error);
    if (error) {
        return records;
    }
    for (auto const& entry : entries) {
        std::string const name = entry.path().filename().string();
        if (name.size() != kRecordPrefix.size() + 64 + kRecordSuffix.size() ||
            !name.starts_with(kRecordPrefix) || !name.ends_with(kRecordSuffix)) {
            continue;
        }
        auto const text = read_small_file(entry.path());
        if (!text) {
            continue;
        }
        try {
            auto record = parse_weight_record(*text);
            // A record copied under another name does not describe the path it claims.
            if (weight_record_path(cache_directory, record.path) != entry.path()) {
                continue;
            }
            records.push_back(std::move(record));
        } catch (InvalidArgument const&) {
        }
    }
    std::sort(records.begin(), records.end(),
              [](WeightRecord const& a, WeightRecord const& b) { return a.path < b.path; });
    return records;
}

} // namespace tensoracle
