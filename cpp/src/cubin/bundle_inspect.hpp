// Inspection of a cubin bundle directory and, optionally, the plugin library built from it: the
// manifest, each cubin's length, SHA-256 and SM, the kernel each cubin must hold, and whether the
// library exports this bundle's digest and the bytes of its cubins.
#pragma once

#include "tensoracle/cubin/bundle_manifest.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cubin {

// What was verified about one entry.
struct EntryCheck {
    std::size_t index;  // of the entry in BundleInspection::manifest.entries
    std::size_t params; // parameters the cubin declares for entry_symbol (public + hidden)
    std::optional<bool> in_plugin; // with a plugin: whether it exports the cubin's bytes
};

struct BundleInspection {
    std::filesystem::path directory;
    BundleManifest manifest;
    std::vector<EntryCheck> entries;
    std::optional<std::filesystem::path> plugin;

    std::string const& digest() const noexcept { return manifest.digest; }
    // The report printed by `tensoracle bundle inspect --json` and returned to Python.
    nlohmann::json to_json() const;
};

// The checks of tensoracle 1.x, in its order: the manifest (parse_bundle_manifest), and for each
// entry as soon as its manifest checks passed, its cubin: absent (MissingCubinError), length or
// SHA-256 (CorruptCubinError), cubin_sm() against target_sm (CubinArchitectureError). Then, for
// every entry, what 1.x does not check: the cubin holds entry_symbol (CorruptCubinError) with the
// signature's parameters followed by the two 8-byte scratch pointers (BundleAbiError). With
// `plugin`, the library must export tensoracle_bundle_sha256 equal to the digest and, for each
// entry with embedded_symbol, that symbol holding exactly the cubin's bytes
// (PluginBundleMismatchError). bundle.json absent: FileError (ENOENT).
BundleInspection inspect_bundle(std::filesystem::path const& directory,
                                std::optional<std::filesystem::path> const& plugin = std::nullopt);

} // namespace tensoracle::cubin
