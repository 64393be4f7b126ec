// bundle.json, the manifest of a cubin bundle directory, read into typed records; and a bundle
// directory loaded whole (manifest and cubin bytes) so the runtime can use it without a plugin.
#pragma once

#include "tensoracle/cubin_bundle.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tensoracle::cubin {

struct ManifestArg {
    std::string name;
    std::string type; // Triton's spelling: "*fp32", "i32", "fp32", ...
    ArgType kind;
    std::uint32_t divisibility;
};

struct ManifestCubin {
    std::uint32_t sm;
    std::string path; // relative to the bundle directory: "sm<sm>/<kernel>.cubin"
    std::string sha256;
    std::uint64_t size;
    std::uint32_t registers;
    std::uint32_t shared_bytes;
};

struct ManifestKernel {
    std::string name;
    std::string function;
    std::string source_sha256;
    std::uint32_t num_warps;
    std::vector<std::string> hidden_args;
    std::uint64_t global_scratch_bytes;
    std::uint64_t profile_scratch_bytes;
    std::vector<ManifestArg> args;
    std::vector<ManifestCubin> cubins;
};

struct BundleManifest {
    std::string sha256; // of the bundle.json bytes
    std::string triton_version;
    std::string ptxas_version;
    std::vector<std::uint32_t> targets;
    std::vector<ManifestKernel> kernels;
};

// Limits on what a bundle directory may hold; larger files are refused before they are read.
inline constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{4} << 20;
inline constexpr std::uint64_t kMaxCubinBytes = std::uint64_t{256} << 20;

// The file name of the manifest inside a bundle directory.
inline constexpr char const* manifest_file_name = "bundle.json";

// Reads and validates <directory>/bundle.json. Throws BundleError naming the file and the field
// when it is missing or malformed.
BundleManifest read_bundle_manifest(std::filesystem::path const& directory);

// Validates the bytes of a bundle.json; `file` names it in messages. Every cubin path must be
// "sm<sm>/<kernel>.cubin" for its own entry, so a manifest cannot point outside its directory.
// Refused besides malformed fields: more than kMaxManifestBytes, nesting beyond kMaxJsonDepth, no
// target or no kernel, a target or a kernel name given twice, two cubins of one kernel for one SM.
// Throws BundleError (BundleAbiError for an unsupported argument type) naming the field.
BundleManifest parse_bundle_manifest(std::span<char const> bytes,
                                     std::filesystem::path const& file);

// The bytes of `cubin` (an entry of `kernel`) in the bundle `directory`. Throws MissingCubinError
// when it is absent, CorruptCubinError when its path resolves outside the directory (a link) or
// it holds more than kMaxCubinBytes. Its contents are not judged here (inspect_bundle does).
std::vector<char> read_bundle_cubin(std::filesystem::path const& directory,
                                    ManifestKernel const& kernel, ManifestCubin const& cubin);

// Maps Triton's argument spelling to the runtime's kinds; throws BundleAbiError for others.
ArgType parse_arg_type(std::string const& triton_type, std::filesystem::path const& where);

// A bundle directory held in memory, exposing the same BundleRecord a generated bundle.cpp
// would. Cubins are read as they are; inspect_bundle is the place that checks them.
class LoadedBundle {
public:
    // Throws BundleError (MissingCubinError for an absent cubin) naming the path.
    explicit LoadedBundle(std::filesystem::path const& directory);
    LoadedBundle(LoadedBundle const&) = delete;
    LoadedBundle& operator=(LoadedBundle const&) = delete;

    BundleManifest const& manifest() const noexcept { return manifest_; }
    BundleRecord const& record() const noexcept { return record_; }

private:
    BundleManifest manifest_;
    std::vector<std::vector<unsigned char>> bytes_;
    std::vector<std::vector<ArgSpec>> args_;
    std::vector<std::vector<CubinImage>> images_;
    std::vector<KernelRecord> kernels_;
    BundleRecord record_{};
};

} // namespace tensoracle::cubin
