// Private to the deploy library: what `cache pull --manifest` checks of an entry's object as it
// arrives, and of a file already saved at the entry's name, against the manifest's entry (see
// manifest_pull.hpp). Each refusal names the object or file and the manifest's field, as
// "deploy.json: entries[0].plan.xxh3_128".
#pragma once

#include "remote/signature.hpp"
#include "tensoracle/deploy/manifest.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tensoracle::deploy::detail {

// One entry of a manifest, as a pull checks it.
struct ExpectedEntry {
    ManifestEntry const* entry = nullptr;
    std::string where;                  // "deploy.json: entries[0]"
    nlohmann::json conditions;          // the entry's conditions
    std::optional<Signature> signature; // the object's, when the manifest records it
    bool bound =
        false; // a verified signed manifest names the file: its digests are the publisher's
};

ExpectedEntry expected_entry(ManifestEntry const& entry, std::string where);

// Judges the saved entry at `path` from its header: EngineConditionError (UntrustedEngineError
// for the header's SHA-256 of a verified signed manifest's entry) naming the field that differs,
// CorruptEngineError for a link, anything but a regular file, or a damaged header, FileError when
// it cannot be read. The file is only read.
void check_saved_entry(std::filesystem::path const& path, ExpectedEntry const& expected);

// The manifest's checks of one download of `object_size` bytes, named `url`: its size when made,
// its header once fed, its signature trailer at finish(). Each throws EngineConditionError (or
// CorruptEngineError, UntrustedEngineError) naming the object and the field.
class ObjectCheck {
public:
    ObjectCheck(ExpectedEntry const& expected, std::string url, std::uint64_t object_size);
    // The object's next bytes (before the store's receiver takes them).
    void feed(std::span<std::byte const> bytes);
    // After the last byte.
    void finish() const;

private:
    ExpectedEntry const& expected_;
    std::string url_;
    std::vector<std::byte> prefix_;
    std::uint64_t needed_;
    bool header_checked_ = false;
    std::vector<std::byte> tail_; // the last kSignatureTrailerBytes bytes received
};

} // namespace tensoracle::deploy::detail
