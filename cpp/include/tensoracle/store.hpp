// The engine cache store: a directory of saved engines named by identity, with per-identity locks.
#pragma once

#include "tensoracle/engine_file.hpp"
#include "tensoracle/file_lock.hpp"
#include "tensoracle/identity.hpp"
#include "tensoracle/mapped_file.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>

namespace tensoracle {

// $XDG_CACHE_HOME/tensoracle when XDG_CACHE_HOME is set and non-empty, else
// <home>/.cache/tensoracle (HOME; on Windows USERPROFILE). Throws InvalidArgument when neither
// variable gives a directory.
std::filesystem::path default_cache_directory();

// A verified saved engine: the header and a zero-copy view of the plan (kept mapped).
class SavedEngine {
public:
    SavedEngine(std::filesystem::path path, EngineHeader header, MappedFile mapping,
                std::uint64_t plan_offset);
    std::filesystem::path const& path() const noexcept { return path_; }
    EngineHeader const& header() const noexcept { return header_; }
    std::span<std::byte const> plan() const noexcept;

private:
    std::filesystem::path path_;
    EngineHeader header_;
    MappedFile mapping_;
    std::uint64_t plan_offset_;
};

class Store {
public:
    // Creates the directory (and parents) with owner-only permissions when it is missing.
    explicit Store(std::filesystem::path directory);

    std::filesystem::path const& directory() const noexcept { return directory_; }
    std::filesystem::path entry_path(EngineIdentity const& identity) const;
    // "<file name>.lock" beside the entry; lock files are never listed or pruned as engines.
    std::filesystem::path lock_path(EngineIdentity const& identity) const;
    // Also used by the pruner, which only knows file names.
    std::filesystem::path lock_path_for(std::filesystem::path const& entry_file) const;

    FileLock lock(EngineIdentity const& identity, LockMode mode) const;

    bool contains(EngineIdentity const& identity) const;

    // Maps the entry, validates the header, verifies the plan checksum and compares the stored
    // conditions with identity.conditions (EngineConditionError when they differ). On success
    // records the read in the file's modification time (failures to do so are ignored; a vanished
    // file is never recreated). Throws CorruptEngineError for damaged or empty files and FileError
    // when the file cannot be opened. A missing entry is std::nullopt.
    std::optional<SavedEngine> read(EngineIdentity const& identity) const;

    // Atomically writes header (conditions taken from identity; plan size and checksum computed
    // here) and plan as the entry for `identity`; returns its path.
    std::filesystem::path save(EngineIdentity const& identity, nlohmann::json references,
                               std::span<std::byte const> plan) const;

private:
    std::filesystem::path directory_;
};

} // namespace tensoracle
