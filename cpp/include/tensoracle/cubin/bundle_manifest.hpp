// bundle.json, the manifest of a cubin bundle directory (tensoracle 1.x schema, version 1), as
// typed records, and a bundle directory loaded whole (manifest and cubin bytes) so that the core's
// cubin runtime (runtime.hpp) can use it without a plugin. The header includes no third-party
// header.
#pragma once

#include "tensoracle/cubin/bundle.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
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
