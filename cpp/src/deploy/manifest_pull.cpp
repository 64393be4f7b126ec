// Pulling a deployment manifest's entries from the remote cache (see manifest_pull.hpp): one
// streamed GET per entry missing from the cache folder, judged by the manifest's checks
// (manifest_entry_check.hpp) and then by the store's receiver (remote/receiver.hpp), which
// commits it.
#include "tensoracle/deploy/manifest_pull.hpp"

#include "cache/identity.hpp"
#include "cache/store.hpp"
#include "deploy/manifest_entry_check.hpp"
#include "io/file_lock.hpp"
#include "remote/receiver.hpp"
#include "remote/s3_client.hpp"
#include "remote/s3_location.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <variant>

namespace tensoracle::deploy {

namespace {

using tensoracle::detail::RemoteLocation;
using tensoracle::detail::S3Client;

constexpr std::string_view kEnginesFolder = "engines/";

// The remote cache: the one asked for, else $TENSORACLE_REMOTE, else the manifest's.
RemoteLocation remote_location(Manifest const& manifest, std::string const& manifest_name,
                               PullOptions const& pull) {
    std::string url = pull.remote;
    if (url.empty()) {
        char const* variable = std::getenv(kRemoteVariable); // NOLINT(concurrency-mt-unsafe)
        url = variable == nullptr ? std::string() : std::string(variable);
    }
    if (!url.empty()) {
        return tensoracle::detail::parse_remote_url(url);
    }
    if (!manifest.remote) {
        throw InvalidArgument("no remote cache: " + manifest_name +
                              " records none (it was written without --push); pass --remote "
                              "s3://BUCKET[/PREFIX] or set " +
                              kRemoteVariable);
    }
    try {
        return tensoracle::detail::parse_remote_url(*manifest.remote);
    } catch (InvalidArgument const& error) {
        throw InvalidArgument(manifest_name + ": remote: " + error.what());
    }
}

// The object streamed through the manifest's checks into the store's receiver.
class EntrySink : public tensoracle::detail::ObjectSink {
public:
    EntrySink(Store const& store, detail::ExpectedEntry const& expected, std::string url,
              EngineIdentity const& identity, VerifyKey const* trusted,
              std::uint64_t max_engine_bytes)
        : store_(store), expected_(expected), url_(std::move(url)), identity_(identity),
          trusted_(trusted), max_engine_bytes_(max_engine_bytes) {}

    void start(std::uint64_t size) override {
        if (size > max_engine_bytes_) {
            throw CorruptEngineError(url_ + " holds " + std::to_string(size) +
                                         " bytes, more than the limit of " +
                                         std::to_string(max_engine_bytes_) + " bytes",
                                     url_);
        }
        check_.emplace(expected_, url_, size);
        receiver_.emplace(store_, url_, expected_.entry->file_name, size, &identity_, trusted_);
    }

    void feed(std::span<std::byte const> bytes) override {
        check_->feed(bytes);
        receiver_->feed(bytes);
    }

    ReceivedEngine finish() {
        check_->finish();
        return receiver_->finish();
    }

    void abort() noexcept {
        if (receiver_) {
            receiver_->abort();
        }
    }

private:
    Store const& store_;
    detail::ExpectedEntry const& expected_;
    std::string url_;
    EngineIdentity const& identity_;
    VerifyKey const* trusted_;
    std::uint64_t max_engine_bytes_;
    std::optional<detail::ObjectCheck> check_;
    std::optional<RemoteReceiver> receiver_;
};

// Downloads the entry (the caller holds its lock): pulled, or the reason it was refused.
std::variant<PulledEntry, RefusedEntry> fetch(detail::ExpectedEntry const& expected,
                                              RemoteLocation const& location,
                                              S3Client const& client, Store const& store,
                                              VerifyKey const* trusted) {
    std::string const& name = expected.entry->file_name;
    std::string const key = std::string(kEnginesFolder) + name;
    std::string const url = tensoracle::detail::object_url(location, key);
    EngineIdentity const identity =
        recorded_identity(nlohmann::json(expected.conditions)); // the conditions asked for
    EntrySink sink(store, expected, url, identity, trusted, client.settings().max_engine_bytes);
    try {
        if (!client.get(location.bucket, tensoracle::detail::full_key(location, key), url, sink)) {
            return RefusedEntry{name, url + " does not exist"};
        }
        ReceivedEngine const received = sink.finish();
        return PulledEntry{name, received.verified.engine_bytes, received.verified.is_signed};
    } catch (EngineCacheError const& error) {
        sink.abort();
        return RefusedEntry{name, error.what()};
    } catch (...) {
        sink.abort();
        throw;
    }
}

bool exists_without_following(std::filesystem::path const& path) {
    std::error_code error;
    return std::filesystem::exists(std::filesystem::symlink_status(path, error));
}

} // namespace

PullReport pull_entries(Manifest const& manifest, std::string const& manifest_name,
                        OpenOptions const& options, PullOptions const& pull) {
    std::set<std::string> held;
    for (ManifestEntry const& entry : manifest.entries) {
        held.insert(entry.recipe);
    }
    for (std::string const& recipe : pull.recipes) {
        if (!held.contains(recipe)) {
            std::string message = manifest_name;
            message += " has no entry of the recipe '" + recipe + "' (it holds ";
            message += joined(std::vector<std::string>(held.begin(), held.end()), ", ");
            message += ")";
            throw InvalidArgument(message);
        }
    }
    RemoteLocation const location = remote_location(manifest, manifest_name, pull);
    // The key that checks each object's signature, read before anything is fetched.
    std::optional<VerifyKey> trusted;
    if (!options.verify_key.empty()) {
        trusted = VerifyKey::from_pem_file(options.verify_key);
    } else if (!options.verify_key_pem.empty()) {
        trusted = VerifyKey::from_pem(options.verify_key_pem, "verify_key_pem");
    }
    S3Client const client(
        tensoracle::detail::s3_settings(tensoracle::detail::process_environment()));
    PullReport report;
    report.remote = location.url;
    report.directory =
        std::filesystem::absolute(options.cache_directory.empty() ? default_cache_directory()
                                                                  : options.cache_directory)
            .lexically_normal();
    Store const store(report.directory);
    for (std::size_t index = 0; index < manifest.entries.size(); ++index) {
        ManifestEntry const& entry = manifest.entries[index];
        if (!pull.recipes.empty() && std::find(pull.recipes.begin(), pull.recipes.end(),
                                               entry.recipe) == pull.recipes.end()) {
            continue;
        }
        detail::ExpectedEntry const expected = detail::expected_entry(
            entry, manifest_name + ": entries[" + std::to_string(index) + "]");
        std::filesystem::path const path = report.directory / entry.file_name;
        if (!exists_without_following(path)) { // a link, even a dangling one, is judged below
            FileLock const lock = FileLock::acquire(store.lock_path_for(path), LockMode::exclusive);
            store.remove_abandoned_temporaries(entry.file_name); // left by a pull killed
            if (!exists_without_following(path)) { // else saved by another process meanwhile
                auto outcome =
                    fetch(expected, location, client, store, trusted ? &*trusted : nullptr);
                if (auto* pulled = std::get_if<PulledEntry>(&outcome)) {
                    report.pulled.push_back(std::move(*pulled));
                } else {
                    report.refused.push_back(std::get<RefusedEntry>(std::move(outcome)));
                }
                continue;
            }
        }
        try {
            detail::check_saved_entry(path, expected);
        } catch (EngineCacheError const& error) {
            report.refused.push_back({entry.file_name, error.what()});
            continue;
        } catch (FileError const& error) {
            report.refused.push_back({entry.file_name, error.what()});
            continue;
        }
        report.already_present.push_back(entry.file_name);
    }
    return report;
}

PullReport pull_manifest(std::filesystem::path const& path, OpenOptions const& options,
                         PullOptions const& pull) {
    return pull_entries(read_manifest(path, options), path.string(), options, pull);
}

} // namespace tensoracle::deploy
