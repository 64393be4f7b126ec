// The record of accepted manifest versions (manifest_versions.hpp): one JSON file per cache
// folder, {"schema_version": 1, "specs": {"<spec>": {"version": N, "accepted": "<UTC time>"}}},
// read and replaced under an exclusive lock so that two processes accepting manifests at once
// both land.
#include "deploy/manifest_versions.hpp"

#include "deploy/json_fields.hpp"
#include "io/atomic_file.hpp"
#include "io/file_bytes.hpp"
#include "io/file_lock.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/size_text.hpp"

#include <optional>
#include <system_error>

namespace tensoracle::deploy {
namespace {

constexpr int kRecordSchemaVersion = 1;
constexpr std::uint64_t kMaxRecordBytes = std::uint64_t{16} << 20U;

// The record at `path` (an empty one when there is none).
Json read_record(std::filesystem::path const& path) {
    std::error_code missing;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, missing))) {
        return {{"schema_version", kRecordSchemaVersion}, {"specs", Json::object()}};
    }
    std::string const name = "the record of accepted manifest versions '" + path.string() + "'";
    auto const bytes = read_file_bytes(path, kMaxRecordBytes, Links::refuse);
    if (!bytes) {
        throw InvalidArgument(name + " is larger than " + std::to_string(kMaxRecordBytes) +
                              " bytes: remove it to accept any version again");
    }
    Json record;
    try {
        record = parse_bounded_json(std::string_view(bytes->data(), bytes->size()),
                                    {.max_bytes = kMaxRecordBytes});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument(name + " is not JSON (" + error.what() +
                              "): remove it to accept any version again");
    }
    if (!record.is_object() || record.value("schema_version", Json()) != kRecordSchemaVersion ||
        !record.contains("specs") || !record["specs"].is_object()) {
        throw InvalidArgument(name + " is not a record of version " +
                              std::to_string(kRecordSchemaVersion) +
                              ": remove it to accept any version again");
    }
    return record;
}

// The version `record` holds for `spec`, if any.
std::optional<std::uint64_t> recorded_version(Json const& record, std::string const& spec,
                                              std::filesystem::path const& path) {
    auto const found = record["specs"].find(spec);
    if (found == record["specs"].end()) {
        return std::nullopt;
    }
    Json const version = found->is_object() ? found->value("version", Json()) : Json();
    if (!version.is_number_unsigned()) {
        throw InvalidArgument("the record of accepted manifest versions '" + path.string() +
                              "': specs[" + shown(spec) + "].version is " + shown(version) +
                              ", expected a whole number: remove the file to accept any version "
                              "again");
    }
    return version.get<std::uint64_t>();
}

void refuse_rollback(std::string const& name, std::string const& spec, std::uint64_t version,
                     std::uint64_t accepted, std::filesystem::path const& path) {
    throw UntrustedEngineError(
        name + ": version " + std::to_string(version) + " of " + spec + " is lower than version " +
            std::to_string(accepted) + ", which this cache folder accepted before (" +
            path.string() + "): an older signed manifest is not accepted again",
        Refusal{.subject = name,
                .field = "predicate.version",
                .observed = std::to_string(version),
                .expected = "at least " + std::to_string(accepted) +
                            ", which this cache folder accepted before (" + path.string() + ")"});
}

} // namespace

void accept_manifest_version(std::filesystem::path const& folder, std::string const& spec,
                             std::uint64_t version, std::string const& name) {
    std::filesystem::path const path = folder / kManifestVersionsFile;
    std::optional<FileLock> lock;
    try {
        std::filesystem::create_directories(folder);
        lock.emplace(FileLock::acquire(path.string() + ".lock", LockMode::exclusive));
    } catch (std::exception const&) { // filesystem_error or FileError: a folder we cannot write
        lock.reset();
    }
    Json record = read_record(path);
    if (auto const accepted = recorded_version(record, spec, path); accepted) {
        if (version < *accepted) {
            refuse_rollback(name, spec, version, *accepted, path);
        }
        if (version == *accepted) {
            return;
        }
    }
    if (!lock) {
        return; // read only: checked, not recorded
    }
    record["specs"][spec] = {{"version", version},
                             {"accepted", format_utc_time(now_nanoseconds())}};
    AtomicFile file(path);
    file.write(record.dump(2) + "\n");
    file.commit();
}

void check_manifest_version(std::filesystem::path const& folder, std::string const& spec,
                            std::uint64_t version, std::string const& name) {
    std::filesystem::path const path = folder / kManifestVersionsFile;
    if (auto const accepted = recorded_version(read_record(path), spec, path);
        accepted && version < *accepted) {
        refuse_rollback(name, spec, version, *accepted, path);
    }
}

} // namespace tensoracle::deploy
