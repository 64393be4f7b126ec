// The plugin libraries a deployed engine was built with: each read into this process, its SHA-256
// checked against the digests the manifest entry's conditions record, and offered to the loader
// (TensorRT's IPluginRegistry::loadLibrary) from a sealed in-memory file holding exactly the bytes
// verified, so that what is loaded is what was checked, whatever happens to the file afterwards.
// This header compiles as C++17.
#pragma once

#include "tensoracle/deploy/manifest.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::deploy {

// The SHA-256 digests (64 lowercase hex digits) of the plugin libraries an entry was built with,
// as its conditions record them ("plugins"), in build order; none when the entry records none.
// Throws InvalidArgument naming the field when it is not a list of digests.
std::vector<std::string> recorded_plugins(ManifestEntry const& entry);

// One verified plugin library. Movable, not copyable; the in-memory copy lives as long as it
// does, and must outlive the library's use by TensorRT (tensorrt::open_engine keeps it with the
// engine).
class VerifiedPluginLibrary {
public:
    // Reads the library at `path` (links followed, as a loader follows them; anything but a
    // regular file refused at once, never waited on) and hashes it. Throws FileError naming the
    // file when it cannot be read, EngineConditionError naming the file, its SHA-256 and the
    // digests `entry` records when it is not one of them, Error on a system without sealed
    // in-memory files (only Linux has them; elsewhere load the libraries yourself).
    static VerifiedPluginLibrary open(std::filesystem::path const& path,
                                      ManifestEntry const& entry);

    VerifiedPluginLibrary(VerifiedPluginLibrary&& other) noexcept;
    VerifiedPluginLibrary& operator=(VerifiedPluginLibrary&& other) noexcept;
    VerifiedPluginLibrary(VerifiedPluginLibrary const&) = delete;
    VerifiedPluginLibrary& operator=(VerifiedPluginLibrary const&) = delete;
    ~VerifiedPluginLibrary();

    std::filesystem::path const& path() const noexcept { return path_; }
    std::string const& sha256() const noexcept { return sha256_; }
    // What to hand the loader: "/proc/self/fd/N" of the sealed copy (it can no longer be written,
    // grown or shrunk by anyone).
    std::string const& loader_path() const noexcept { return loader_path_; }

private:
    VerifiedPluginLibrary(std::filesystem::path path, std::string sha256, int descriptor);

    std::filesystem::path path_;
    std::string sha256_;
    std::string loader_path_;
    int descriptor_ = -1;
};

// The libraries `paths` name, each verified (VerifiedPluginLibrary::open), and every digest the
// entry records among them: EngineConditionError naming the entry and the digest of a recorded
// library none of `paths` is, and telling to pass it in `passed_in` (where the caller takes the
// libraries from: the Python binding names open_deployed's plugins=). Nothing is loaded.
std::vector<VerifiedPluginLibrary>
verify_plugins(ManifestEntry const& entry, std::vector<std::filesystem::path> const& paths,
               std::string_view passed_in = "EngineOptions::plugins");

} // namespace tensoracle::deploy
