// Filling a cache folder with a deployment manifest's entries from the remote cache the build
// published them to, with no Python: what `tensoracle cache pull --manifest FILE` does.
//
//   auto options = tensoracle::deploy::options_from_environment();
//   auto const report = tensoracle::deploy::pull_manifest("deploy.json", options);
//   // report.refused empty: every entry is in options.cache_directory, checked
//   auto const manifest = tensoracle::deploy::read_manifest("deploy.json", options);
//   ... DeployedEngine::open(entry, options) ...
//
// The manifest is read with read_manifest(path, options) (signed_manifest.hpp): the same trust
// policy, verify key, minimum version and cache folder record as opening its entries. Each
// entry's object ("engines/<file name>" under the remote cache s3://BUCKET[/PREFIX]) is fetched
// with one GET, signed with the credentials the AWS CLI would use (AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, else the profile AWS_PROFILE of ~/.aws/credentials or
// AWS_SHARED_CREDENTIALS_FILE), from AWS_ENDPOINT_URL (path-style; AWS itself when unset) in
// AWS_REGION; libcurl 7.75 or later must be installed (it is loaded when the first object is
// fetched). Each object is streamed into a temporary file of the cache folder, under the entry's
// lock, and judged as it arrives:
// - its size, before any of its body is read: engine_bytes, or engine_bytes and a 72-byte
//   signature trailer (at most TENSORACLE_REMOTE_MAX_ENGINE_BYTES, default 64 GiB); without a
//   trailer when the manifest records the object's signature;
// - its header, before its plan: the entry's conditions, plan.size, plan.xxh3_128, engine_bytes,
//   and the SHA-256 of the preamble and header where the manifest records header_sha256;
// - at the end, every check of the remote cache's own receiver (remote/receiver.hpp: the plan's
//   checksums; with a verify key, the object's signature before its header is decoded), and the
//   signature trailer against the manifest's fleet.signature.
// Only then is the temporary file renamed to the entry (never through a link). A refusal names
// the object and the manifest's field ("deploy.json: entries[0].plan.xxh3_128"), leaves no file,
// and leaves any entry already saved as it was. An entry already in the folder is judged from its
// header the same way (a link, a FIFO or a folder at its name is refused, never followed), and
// left as it is either way. This header compiles as C++17.
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/manifest.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tensoracle::deploy {

// The environment variable naming the remote cache (as for the Python package).
inline constexpr char const* kRemoteVariable = "TENSORACLE_REMOTE";

struct PullOptions {
    // The remote cache, s3://BUCKET[/PREFIX]; empty: $TENSORACLE_REMOTE, else the manifest's.
    std::string remote;
    // Only the entries of these recipes; empty: every entry.
    std::vector<std::string> recipes;
};

struct PulledEntry {
    std::string file_name;
    std::uint64_t size_bytes = 0; // the engine file's
    bool is_signed = false;       // the object carried a signature trailer
};

struct RefusedEntry {
    std::string file_name;
    std::string reason; // names the object or file, and the manifest's field
};

struct PullReport {
    std::string remote;                       // the remote cache pulled from
    std::filesystem::path directory;          // the cache folder
    std::vector<PulledEntry> pulled;          // saved by this pull
    std::vector<std::string> already_present; // file names of entries saved before, checked
    std::vector<RefusedEntry> refused;        // neither: the folder holds no checked entry of it
};

// Pulls the entries of `manifest`, read from the file `manifest_name` (which messages name), into
// options.cache_directory (empty: the default folder); an object's signature is checked with the
// verify key of `options` when one is set. Throws InvalidArgument when no remote cache is given
// and the manifest records none, when the remote cache's URL is not s3://BUCKET[/PREFIX], or when
// a recipe asked for has no entry; tensoracle::Error naming the object when the store cannot be
// reached or refuses a request (credentials, bucket, server error): a refused object is reported,
// not thrown.
PullReport pull_entries(Manifest const& manifest, std::string const& manifest_name,
                        OpenOptions const& options, PullOptions const& pull = {});

// read_manifest(path, options), then pull_entries; throws as both do.
PullReport pull_manifest(std::filesystem::path const& path, OpenOptions const& options,
                         PullOptions const& pull = {});

} // namespace tensoracle::deploy
