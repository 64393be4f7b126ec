// Inspection of a cubin bundle directory and, optionally, the plugin library built from it:
// manifest, cubin digests, the SM each cubin really targets, the kernel parameter ABI, and
// whether the library embeds exactly these cubins.
#pragma once

#include "tensoracle/bundle_manifest.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tensoracle::cubin {

// What was verified about one cubin.
struct CubinCheck {
    std::string kernel;
    std::uint32_t sm;       // claimed by bundle.json and the directory name, equal to the ELF's
    std::string path;       // relative to the bundle directory
    std::string sha256;     // computed, equal to bundle.json's
    std::uint64_t size;     // bytes
    std::size_t params;     // parameters the cubin declares (public + hidden)
    bool in_plugin = false; // found verbatim in the plugin library
};

struct BundleInspection {
    std::filesystem::path directory;
    BundleManifest manifest;
    std::vector<CubinCheck> cubins;
    std::optional<std::filesystem::path> plugin;

    // The report printed by `tensoracle bundle inspect` and returned to Python.
    nlohmann::json to_json() const;
};

// Checks, in this order for every cubin: present (MissingCubinError), a CUDA ELF image holding
// the kernel's function (CorruptCubinError), built for the SM it is filed under
// (FalseSmClaimError), the SHA-256 bundle.json records (CorruptCubinError), and the parameter
// count: public arguments plus the two hidden scratch pointers with zero scratch sizes
// (BundleAbiError). With `plugin`, the library must carry this bundle's digest marker and every
// cubin's bytes (PluginBundleMismatchError). A malformed manifest raises BundleError.
BundleInspection inspect_bundle(std::filesystem::path const& directory,
                                std::optional<std::filesystem::path> const& plugin = std::nullopt);

} // namespace tensoracle::cubin
