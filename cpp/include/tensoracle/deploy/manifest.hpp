// The deployment manifest `tensoracle build --manifest FILE` writes (docs/deploy.md), read back
// within limits: what an application needs to find, select and check a prebuilt engine without
// the model package's graph code. This header compiles as C++17 and includes no third-party
// header: the conditions and the IO signature are given as the library's own types, and as
// canonical JSON text for an application that reads them with a JSON library of its own.
#pragma once

#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/deploy/selection.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::deploy {

// The manifest version this library reads; a manifest of another version is refused.
inline constexpr int kManifestSchemaVersion = 1;
// A manifest holds a few kilobytes per entry: 64 MiB is far beyond any real one.
inline constexpr std::uint64_t kMaxManifestFileBytes = std::uint64_t{64} << 20U;
// JSON values in all (an entry as build writes it holds 30 to 60): about 40,000 entries. The
// parsed document costs up to ~180 bytes per value whatever the text's shape (an array of empty
// objects is the costliest), so this bounds a parsed manifest to a few hundred MB; without it a
// 64 MiB text of empty objects took 4 GB.
inline constexpr std::size_t kMaxManifestValues = std::size_t{1} << 21U;

// Where a published entry lies in the remote cache.
struct FleetObject {
    std::string key;             // "engines/<file_name>"
    std::string url;             // s3://BUCKET[/PREFIX]/engines/<file_name>
    std::optional<bool> signed_; // absent: published before the build that wrote the manifest
    // The object's Ed25519 signature (remote/object.hpp: over the file name and the SHA-256 of
    // the engine file's preamble and header, which record each plan chunk's SHA-256; of the
    // whole file for format 1), 128 lowercase hex digits; absent for an unsigned object.
    std::optional<std::string> signature;
};

// One prepared entry.
struct ManifestEntry {
    std::string recipe;
    std::string graph_version;
    std::string file_name; // the entry's file name: the identity of `conditions_json`
    // The identity conditions, as the saved header records them: canonical JSON text (keys
    // sorted, no spaces), the text the identity is computed from.
    std::string conditions_json;
    EntryConditions runs_on; // what of them decides where the entry runs
    // The IO signature the header records, read (absent when the entry records none: such an
    // entry cannot be run through tensorrt.hpp), and the same as canonical JSON text ("null"
    // when none), which opening compares with the saved header's.
    std::optional<std::vector<TensorDescription>> io;
    std::string io_json = "null";
    std::uint64_t plan_size = 0;
    std::string plan_xxh3_128; // 32 lowercase hex digits
    std::uint64_t engine_bytes = 0;
    // The SHA-256 of the whole file and of its preamble and header (64 lowercase hex digits),
    // which the build records; absent from manifests written before it did.
    std::optional<std::string> sha256;
    std::optional<std::string> header_sha256;
    std::optional<FleetObject> fleet;
    // The key ids whose signatures of the manifest were verified (signed_manifest.hpp): the
    // entry's file must then be byte for byte what the signed manifest names. Empty for an entry
    // of a plain manifest, or of a signed one read without verifying it.
    std::vector<std::string> manifest_signers;
};

// What a signed manifest says of its release (signed_manifest.hpp).
struct ManifestRelease {
    std::uint64_t version = 0; // raised by the publisher with every release of the spec
    std::string expires;       // "2027-03-01T00:00:00Z": refused from then on
};

struct Manifest {
    std::string spec;                  // the MODULE:ATTRIBUTE the recipes came from
    std::optional<std::string> remote; // the remote cache published to, if any
    std::vector<ManifestEntry> entries;
    // A signed manifest's release; absent for a plain manifest.
    std::optional<ManifestRelease> release;
    // The key ids whose signatures were verified (none when read without verifying them).
    std::vector<std::string> signers;
};

// Reads a plain manifest from its text; `name` (the file) opens every message. A signed
// manifest (a DSSE envelope) is refused with UntrustedEngineError: read it with
// signed_manifest.hpp's read_manifest(path, options). Throws
// tensoracle::InvalidArgument naming the file, the field (such as "entries[1].plan.size") and
// the value when the text is not JSON within limits, the schema version is not 1, a field is
// missing or mistyped (an entry's io included), or an entry's file name is not the identity of
// its conditions.
Manifest parse_manifest(std::string_view text, std::string const& name);

// The same from a file, at most kMaxManifestFileBytes; tensoracle::FileError when it cannot be
// read.
Manifest read_manifest(std::filesystem::path const& path);

// The entry of `recipe` that runs on `device` with `backend`, by select_entry's rule among the
// manifest's entries of that recipe. Throws EngineTargetError with select_entry's refusal (every
// candidate, by file name, and why it cannot run) when none can, and InvalidArgument naming the
// recipes the manifest holds when it has no entry of `recipe`.
ManifestEntry const& select_for_device(Manifest const& manifest, std::string_view recipe,
                                       DeviceDescription const& device,
                                       RuntimeBackend const& backend);

// The same, returning the selection (candidates are the recipe's entries, in the manifest's
// order, as indices into manifest.entries in `indices`), without throwing for a refusal. When an
// entry is chosen only `chosen` and `why` are set (no reason is made for the others, which keeps
// a choice among 10,000 entries well under a millisecond); a refusal has a reason for every
// candidate (its message lists the first ten).
struct RecipeSelection {
    std::vector<std::size_t> indices; // the recipe's entries: indices into manifest.entries
    Selection selection;              // over those entries, in that order
};
RecipeSelection select_recipe(Manifest const& manifest, std::string_view recipe,
                              DeviceDescription const& device, RuntimeBackend const& backend);

// The entry `found` (select_recipe's result for `recipe`) chose, with select_for_device's
// refusals when it chose none: select_for_device is selected_entry of select_recipe.
ManifestEntry const& selected_entry(Manifest const& manifest, std::string_view recipe,
                                    RecipeSelection const& found);

} // namespace tensoracle::deploy
