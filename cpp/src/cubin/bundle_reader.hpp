// Reading a cubin bundle directory: the limits on what it may hold, the checks of its bundle.json
// in tensoracle 1.x inspection's order, the manifest's digest and an entry's cubin bytes. Used by
// LoadedBundle (tensoracle/cubin/bundle_manifest.hpp), by inspection (bundle_inspect.hpp) and by
// the bindings.
#pragma once

#include "tensoracle/cubin/bundle_manifest.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::cubin {

// Limits on what a bundle directory may hold; larger files are refused before they are read.
inline constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{4} << 20;
// The most JSON values a manifest may hold (each scalar, array and object once), 2^20: an entry
// (name, file, bytes, sha256, sm, its signature of up to kMaxSignatureArgs arguments...) holds a
// few dozen values, so this is room for tens of thousands of kernels, while a hostile manifest of
// kMaxManifestBytes of small values (up to 2 million of them) is refused after its first 3 MiB at
// most.
inline constexpr std::size_t kMaxManifestValues = std::size_t{1} << 20;
inline constexpr std::uint64_t kMaxCubinBytes = std::uint64_t{256} << 20;
// The most public arguments an entry's signature may have.
inline constexpr std::size_t kMaxSignatureArgs = 14;

// The file name of the manifest inside a bundle directory.
inline constexpr char const* manifest_file_name = "bundle.json";

// True when `path` is a relative path that stays inside its base under both POSIX and Windows
// rules: not empty, no NUL, no leading '/' or '\\' (root, UNC share), no drive ("C:x"), and no
// ".." part when split at '/' or at '\\'.
bool is_safe_relative_path(std::string_view path) noexcept;

// The hex SHA-256 of python_canonical_json(manifest) with the top-level "bundle_sha256" member
// left out. Throws BundleError naming `file` for values the canonical form refuses (floats).
std::string bundle_sha256(nlohmann::json const& manifest, std::filesystem::path const& file);

// Called by parse_bundle_manifest() for each entry once its manifest checks passed, before the
// next entry is looked at: inspection reads the entry's cubin here, so that the errors come in
// the entry order.
using EntryVisitor = std::function<void(ManifestEntry const&)>;

// Validates the bytes of a bundle.json; `file` names it in messages. The checks and their order
// are those of tensoracle 1.x inspection up to the cubin files: JSON and schema_version, entries,
// the recorded digest, then for each entry target_sm, hidden parameters, resources, entry symbol
// and signature, specialization, file path (safe, unique). Throws BundleError (BundleAbiError for
// the parameter ABI) naming the file, the field and the value found.
BundleManifest parse_bundle_manifest(std::span<char const> bytes, std::filesystem::path const& file,
                                     EntryVisitor const& visit = {});

// Reads and validates <directory>/bundle.json. Throws FileError (ENOENT) when it is absent, and
// the errors of parse_bundle_manifest().
BundleManifest read_bundle_manifest(std::filesystem::path const& directory,
                                    EntryVisitor const& visit = {});

// The bytes of `entry`'s cubin in the bundle `directory`. Throws MissingCubinError when it is
// absent, CorruptCubinError when it resolves outside the directory (a link) or holds more than
// kMaxCubinBytes. Its contents are not judged here (inspect_bundle does).
std::vector<char> read_bundle_cubin(std::filesystem::path const& directory,
                                    ManifestEntry const& entry);

} // namespace tensoracle::cubin
