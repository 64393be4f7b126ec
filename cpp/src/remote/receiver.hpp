// A remote object received straight into the local store: the download is written to the
// store's temporary file as it arrives, hashed as it is written, and becomes the entry only once
// it passed every check verify_remote_object makes on a whole object in memory.
//
//   RemoteReceiver receiver(store, object_name, file_name, object_size, &identity, trusted);
//   for each piece of the body, in order: receiver.feed(piece);   // judged as it arrives
//   ReceivedEngine received = receiver.finish();                  // verified, then committed
//
// As it arrives: the preamble is checked from its first 20 bytes and, without a trusted key, the
// header as soon as it is complete (check_remote_prefix: it must announce exactly the object's
// size and the conditions asked for; with none asked for, a pull by name, conditions whose
// identity is the entry's file name), so a refused object costs what was read until then. Every
// engine byte is written to "<entry>.tmp-<pid>-<random>" in the store's directory (AtomicFile),
// its plan bytes go through the XXH3-128 plan checksum and each chunk's, and with a trusted key
// what the signature vouches for through SHA-256 (format 2: the preamble and header, and each
// plan chunk; format 1: every engine byte); every 8 MiB the disk writes of what was written are
// started (AtomicFile::start_writeback), so that the fsync at the end has little left to wait for.
// The last 72 bytes are held back until the end: only then is it known whether they are a signature
// trailer or the end of the engine.
//
// finish() checks the signature first (with a trusted key no header byte is decoded before it),
// then the header, the plan checksum, the conditions, and that the file holds exactly the bytes
// Store::save writes for this entry; then fsync, rename over the entry, fsync of the directory
// (AtomicFile::commit, as Store::save). A refusal or any failure removes the temporary file at
// once and leaves the entry as it was; so does abort() or destroying an unfinished receiver.
#pragma once

#include "cache/identity.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "io/atomic_file.hpp"
#include "io/hash.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {

// A received object: what verification found, and the saved entry (held as FileContents mapped
// before the rename and never touched, so that a pull holds none of it in memory; read the
// entry again with Store::read for a verified copy to hand to TensorRT).
struct ReceivedEngine {
    RemoteEngine verified;
    SavedEngine saved;
};

class RemoteReceiver {
public:
    // Receives the object `object_name` (its key, for messages) of `object_size` bytes holding
    // the entry `file_name` of `store`, with the conditions of `expected` (or, when null, those
    // whose identity is `file_name`); `trusted`, when set, must outlive the receiver. Throws
    // CorruptEngineError when `object_size` cannot hold an engine file, InvalidArgument when
    // `file_name` is not a plain file name, FileError when the temporary file cannot be created.
    RemoteReceiver(Store const& store, std::string object_name, std::string file_name,
                   std::uint64_t object_size, EngineIdentity const* expected,
                   VerifyKey const* trusted);
    RemoteReceiver(RemoteReceiver const&) = delete;
    RemoteReceiver& operator=(RemoteReceiver const&) = delete;
    ~RemoteReceiver() = default;

    // The next bytes of the object. Throws CorruptEngineError or EngineConditionError when they
    // refuse it (its preamble or header, or more bytes than announced), FileError when the
    // temporary file cannot be written; either way the receiver is aborted.
    void feed(std::span<std::byte const> bytes);

    // Verifies the whole object and commits it as the entry; throws as verify_remote_object
    // (CorruptEngineError, EngineConditionError, UntrustedEngineError; CorruptEngineError when
    // fewer bytes than announced were fed), or FileError; either way the receiver is aborted.
    ReceivedEngine finish();

    // Removes the temporary file; later calls of feed and finish throw std::logic_error.
    void abort() noexcept;

    std::uint64_t object_size() const noexcept { return object_size_; }
    std::uint64_t received() const noexcept { return received_; }
    // The temporary file while receiving, empty once finished or aborted.
    std::filesystem::path temporary_path() const;

private:
    void judge_prefix(std::span<std::byte const> bytes);
    void settle(std::span<std::byte const> bytes, std::uint64_t offset);
    void write_engine(std::span<std::byte const> piece, std::uint64_t offset);
    ReceivedEngine verify_and_commit();

    std::string object_name_;
    std::string file_name_;
    std::filesystem::path target_;
    std::uint64_t object_size_;
    std::optional<EngineIdentity> expected_;
    VerifyKey const* trusted_;

    std::optional<AtomicFile> file_;
    std::uint64_t received_ = 0;
    std::vector<std::byte> prefix_;         // preamble and header, kept for judging and finish()
    std::uint64_t prefix_wanted_;           // 20, then the preamble and header's length
    bool prefix_judged_ = false;            // the preamble (and header) passed check_remote_prefix
    std::uint64_t plan_offset_ = 0;         // known once the preamble arrived
    std::uint64_t writeback_at_ = 0;        // where the next AtomicFile::start_writeback is due
    std::uint64_t held_back_;               // the trailer's 72 bytes when the object can hold one
    std::vector<std::byte> tail_;           // the last held_back_ bytes
    PlanChecksum plan_checksum_;            // over the plan bytes written
    std::optional<Sha256> engine_sha256_;   // over the engine bytes written, with a trusted key
                                            // (format 1: what its signature is over)
    std::optional<PlanChunkHasher> chunks_; // over the plan bytes written (format 2): XXH3-128,
                                            // and SHA-256 with a trusted key
    mutable std::mutex mutex_;              // calls may come from any thread, one at a time
};

} // namespace tensoracle
