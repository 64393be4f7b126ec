// bundle.json, the manifest of a cubin bundle directory (tensoracle 1.x schema, version 1), read
// into typed records; its digest; and a bundle directory loaded whole (manifest and cubin bytes)
// so that the core's cubin runtime can use it without a plugin.
#pragma once

#include "tensoracle/cubin/bundle.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::cubin {

// One public argument of an entry's signature, with the divisor its specialization assumes.
struct ManifestArg {
    std::string name;
    std::string type; // "*fp16", "*fp32", "*i8", "*i32", "i32" or "fp32"
    ArgType kind;
    std::uint32_t divisibility; // 1 when the specialization lists no divisor
};

struct ManifestResources {
    std::uint64_t compiled_shared_memory_bytes;
    std::uint64_t launch_dynamic_shared_memory_bytes;
    std::uint64_t registers_per_thread;
};

// One (SM, kernel) entry of the manifest.
struct ManifestEntry {
    std::size_t index; // position in the manifest's "entries"
    std::optional<std::string> id;
    std::string file; // relative to the bundle directory, e.g. "cubins/sm86/dot.cubin"
    std::uint32_t sm; // from target_sm
    std::string target_sm;
    std::string entry_symbol;
    std::optional<std::string> embedded_symbol;
    std::string sha256;
    std::uint64_t bytes;
    std::vector<ManifestArg> signature;
    ManifestResources resources;
    std::optional<std::string> source_sha256;

    // The kernel this entry is an image of: `id` after its "sm<SM>." prefix, else the stem of
    // `file`.
    std::string kernel_name() const;
};

struct BundleManifest {
    std::string digest; // bundle_sha256 of the document, whether or not it records one
    std::optional<std::string> triton_version;
    std::optional<std::string> ptxas_version;
    std::vector<ManifestEntry> entries;
};

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

// A bundle directory held in memory as runtime records: its entries grouped by kernel name (in
// the order kernels first appear), one image per SM. Cubins are read as they are; inspect_bundle
// is the place that checks them.
class LoadedBundle {
public:
    // Throws BundleError (MissingCubinError for an absent cubin) naming the path, and BundleError
    // when two entries of one kernel share an SM or differ in signature.
    explicit LoadedBundle(std::filesystem::path const& directory);
    LoadedBundle(LoadedBundle const&) = delete;
    LoadedBundle& operator=(LoadedBundle const&) = delete;

    BundleManifest const& manifest() const noexcept { return manifest_; }
    BundleRecord const& record() const noexcept { return record_; }

private:
    struct Kernel {
        std::string name;
        std::vector<ArgSpec> args;
        std::vector<CubinImage> images;
    };
    BundleManifest manifest_;
    std::vector<std::vector<unsigned char>> bytes_;
    std::vector<Kernel> groups_;
    std::vector<KernelRecord> kernels_;
    BundleRecord record_{};
};

} // namespace tensoracle::cubin
