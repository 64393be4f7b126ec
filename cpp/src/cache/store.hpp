// The engine cache store: a directory of saved engines named by identity, with per-identity locks.
//
// The open protocol. Every process that reuses or builds an engine follows it (the Python engine
// layer, through the bindings, with the primitives below: lock, read, save), so that concurrent
// processes build each identity once and never see a partial file:
//   1. Take the identity's SHARED lock. If the entry exists and no rebuild is forced, read it
//      (a CorruptEngineError or EngineConditionError propagates: the caller decides whether to
//      rebuild), release the lock and return.
//   2. Otherwise release the shared lock and take the EXCLUSIVE lock. Unless a rebuild is forced,
//      check again: another process may have built the entry meanwhile; if so read it and return.
//   3. Build, save (atomically: readers see the old complete file or the new complete file),
//      release.
// A builder that dies loses its lock to the OS, and its temporary file is never the entry.
// Lock files ("<entry>.lock") are never removed: removing one while a process waits on it would
// let two processes hold "the" lock at once.
#pragma once

#include "cache/engine_file.hpp"
#include "cache/identity.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "encryption/recipient_key.hpp"
#include "io/file_contents.hpp"
#include "io/file_lock.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tensoracle {

// $XDG_CACHE_HOME/tensoracle when XDG_CACHE_HOME is set and non-empty, else
// <home>/.cache/tensoracle (HOME; on Windows USERPROFILE). Throws InvalidArgument when neither
// variable gives a directory.
std::filesystem::path default_cache_directory();

// Creates `directory` and any missing parents with owner-only permissions (0700); existing
// directories are left as they are. Throws FileError naming the directory that failed.
void create_private_directories(std::filesystem::path const& directory);

// Throws EngineConditionError naming `path` and each differing key (saved and requested values)
// unless `saved` equals `requested`.
void check_conditions(nlohmann::json const& saved, nlohmann::json const& requested,
                      std::filesystem::path const& path);

// The checks Store::read makes, on the complete bytes of an engine file wherever they come from
// (a remote cache downloads into memory): header, plan length, plan checksum, and conditions
// equal to identity.conditions. `path` names the bytes in messages. Throws CorruptEngineError or
// EngineConditionError.
DecodedHeader verify_engine_bytes(std::span<std::byte const> bytes, EngineIdentity const& identity,
                                  std::filesystem::path const& path);

// The checks of the plan that verify_engine_bytes makes, on the plan's bytes and the header that
// records them: the whole plan's XXH3-128, then, in format version 2, each chunk's XXH3-128.
// Returns the difference, as a refusal's reason ("the plan's XXH3-128 checksum is <computed>
// but the header records <recorded>", followed in format version 2 by "; the first damaged chunk:"
// and chunk_difference's text, which names the chunk and both digests; chunk_difference's text
// alone when the whole plan's checksum holds), or nothing. `cache verify` judges a plan by the
// same checks (PlanDamageCheck, below), so that what it calls intact is what Store::read accepts.
std::optional<std::string> plan_damage(std::span<std::byte const> plan, EngineHeader const& header);

// plan_damage's checks on a plan given in pieces, in order, however it is split, each hashed as
// it comes, both digests in one pass: `cache verify` reads a file a piece at a time, so that
// checking an engine of any size takes one piece of memory, not the engine's. The reasons are
// plan_damage's, in the same words (one function writes them for both).
class PlanDamageCheck {
public:
    // For the plan that `header` records: each chunk's XXH3-128 is computed too where the header
    // records chunks (format version 2).
    explicit PlanDamageCheck(EngineHeader const& header);
    void update(std::span<std::byte const> piece);
    // plan_damage's answer for the bytes given, against `header` (the constructor's: another that
    // records chunks where it did not, or the reverse, is InvalidArgument); the check is spent
    // afterwards.
    std::optional<std::string> finish(EngineHeader const& header);

private:
    PlanChecksum whole_;
    std::optional<PlanChunkHasher> chunks_;
};

// A verified saved engine: the header and the plan, held as FileContents (copied into this
// process's memory), so that the plan handed on is the bytes verified, whatever is done to the
// file afterwards, and the file stays free to be replaced or removed while it is in use.
class SavedEngine {
public:
    SavedEngine(std::filesystem::path path, EngineHeader header, FileContents contents,
                std::uint64_t plan_offset);
    std::filesystem::path const& path() const noexcept { return path_; }
    EngineHeader const& header() const noexcept { return header_; }
    // The stored body: the plan, or for an encrypted entry (header().encryption) the plan sealed.
    std::span<std::byte const> plan() const noexcept;
    // An encrypted entry's plan, opened with `key` in this process's memory (EngineKeyError when
    // `key` is no recipient, CorruptEngineError when a chunk does not authenticate); the plan
    // itself for a plain one.
    std::vector<std::byte> opened_plan(encryption::DecryptKey const& key) const;

private:
    std::filesystem::path path_;
    EngineHeader header_;
    FileContents contents_;
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

    // Reads the entry (FileContents: the file is closed when this returns), validates the header,
    // verifies the plan checksum and compares the stored conditions with identity.conditions
    // (EngineConditionError when they differ). On success records the read in the file's
    // modification time (failures to do so are ignored; a vanished file is never recreated). Throws
    // CorruptEngineError for damaged or empty files and for a symbolic link, a directory or another
    // special file at the entry's name (naming the path), and FileError when the file cannot be
    // opened. A missing entry is std::nullopt.
    std::optional<SavedEngine> read(EngineIdentity const& identity) const;

    // Atomically writes header (conditions taken from identity; plan size and checksum computed
    // here) and plan as the entry for `identity`; returns its path.
    // With `encrypt_to`, the plan is sealed under a fresh data key for those recipients (engine
    // file format 3): it is written sealed only, one chunk at a time, and never as it is.
    std::filesystem::path save(EngineIdentity const& identity, nlohmann::json references,
                               std::span<std::byte const> plan,
                               std::span<encryption::RecipientKey const> encrypt_to = {}) const;

    // Removes the temporary files an earlier writer of the entry `file_name` left when it was
    // killed (a pull ended by SIGTERM, a build killed while saving): regular files named
    // "<file_name>.tmp-<pid>-..." whose process does not run. Call it holding the entry's
    // exclusive lock, which every writer holds while it writes. Returns how many were removed;
    // a file that cannot be removed is left to `cache prune`.
    std::size_t remove_abandoned_temporaries(std::string_view file_name) const;

private:
    std::filesystem::path directory_;
};

} // namespace tensoracle
