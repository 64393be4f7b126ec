// Receiving a remote object into the store as it arrives (see remote/receiver.hpp).
#include "remote/receiver.hpp"

#include "cache/file.hpp"
#include "io/hash.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <stdexcept>
#include <utility>

namespace tensoracle {
namespace {

// How often the disk writes of what was received are started, so that finish()'s fsync has
// little left to wait for.
constexpr std::uint64_t kWritebackBytes = std::uint64_t{8} << 20;

[[noreturn]] void refuse(std::string const& object_name, std::string const& reason) {
    throw CorruptEngineError("remote engine '" + object_name + "' is unusable: " + reason,
                             std::filesystem::path(object_name));
}

// The temporary file is made beside the entry before any byte is judged, so the name must not
// reach out of the store's directory.
void check_file_name(std::string const& file_name) {
    std::filesystem::path const path(file_name);
    if (file_name.empty() || file_name == "." || file_name == ".." ||
        path.filename().string() != file_name || file_name.find('\0') != std::string::npos) {
        throw InvalidArgument("RemoteReceiver: '" + file_name +
                              "' is not the file name of an entry");
    }
}

} // namespace

RemoteReceiver::RemoteReceiver(Store const& store, std::string object_name, std::string file_name,
                               std::uint64_t object_size, EngineIdentity const* expected,
                               VerifyKey const* trusted)
    : object_name_(std::move(object_name)), file_name_(std::move(file_name)),
      object_size_(object_size), trusted_(trusted), prefix_wanted_(kEnginePreambleBytes),
      held_back_(object_size >= kEnginePreambleBytes + kSignatureTrailerBytes
                     ? kSignatureTrailerBytes
                     : 0) {
    check_file_name(file_name_);
    if (expected != nullptr) {
        expected_ = *expected;
    }
    // Refuses an object too small for a preamble before a byte of it is read.
    (void)check_remote_prefix({}, object_size_, object_name_, expected, trusted_ == nullptr);
    if (trusted_ != nullptr) {
        engine_sha256_.emplace();
    }
    target_ = store.directory() / file_name_;
    file_.emplace(target_);
}

std::filesystem::path RemoteReceiver::temporary_path() const {
    std::lock_guard const lock(mutex_);
    return file_ ? file_->temporary_path() : std::filesystem::path{};
}

void RemoteReceiver::abort() noexcept {
    std::lock_guard const lock(mutex_);
    file_.reset(); // an uncommitted AtomicFile removes its temporary file
}

void RemoteReceiver::feed(std::span<std::byte const> bytes) {
    std::lock_guard const lock(mutex_);
    if (!file_) {
        throw std::logic_error("RemoteReceiver::feed after finish or abort");
    }
    try {
        if (bytes.size() > object_size_ - received_) {
            refuse(object_name_,
                   "it sent more than the " + std::to_string(object_size_) + " bytes it announced");
        }
        judge_prefix(bytes);
        settle(bytes, received_);
        received_ += bytes.size();
    } catch (...) {
        file_.reset();
        throw;
    }
}

// Collects the preamble, then the header, and judges each once complete (check_remote_prefix, and
// for a pull by name that the header's conditions are the entry's); with a trusted key the header
// is collected but not decoded before the signature.
void RemoteReceiver::judge_prefix(std::span<std::byte const> bytes) {
    EngineIdentity const* const expected = expected_ ? &*expected_ : nullptr;
    while (!prefix_judged_) {
        std::size_t const take = static_cast<std::size_t>(
            std::min<std::uint64_t>(prefix_wanted_ - prefix_.size(), bytes.size()));
        prefix_.insert(prefix_.end(), bytes.begin(),
                       bytes.begin() + static_cast<std::ptrdiff_t>(take));
        bytes = bytes.subspan(take);
        if (prefix_.size() < prefix_wanted_) {
            return;
        }
        if (plan_offset_ == 0) { // the preamble is complete
            (void)check_remote_prefix(prefix_, object_size_, object_name_, expected,
                                      trusted_ == nullptr);
            plan_offset_ = engine_prefix_bytes(prefix_);
            prefix_wanted_ = plan_offset_;
            if (has_chunk_digests(engine_format_version(prefix_))) {
                // Its signature is over the header, which records each chunk's SHA-256.
                chunks_.emplace(ChunkDigestKinds{.sha256 = trusted_ != nullptr, .xxh3_128 = true});
                engine_sha256_.reset();
            }
            continue;
        }
        if (trusted_ == nullptr) { // the header is complete
            (void)check_remote_prefix(prefix_, object_size_, object_name_, expected, true);
            if (expected == nullptr) { // a pull by name: its conditions must hash to the name
                DecodedHeader const decoded = decode_engine_prefix(
                    prefix_, object_size_, std::filesystem::path(object_name_));
                (void)remote_entry_identity(decoded.header, nullptr, object_name_, file_name_);
            }
        }
        prefix_judged_ = true;
    }
}

// Writes and hashes engine bytes that start at `offset` of the object.
void RemoteReceiver::write_engine(std::span<std::byte const> piece, std::uint64_t offset) {
    file_->write(piece);
    if (offset + piece.size() >= writeback_at_) { // the disk writes overlap the download
        file_->start_writeback();
        writeback_at_ = offset + piece.size() + kWritebackBytes;
    }
    if (engine_sha256_) {
        engine_sha256_->update(piece);
    }
    // The plan starts after the header; until the preamble arrived, no byte is plan.
    std::uint64_t const plan_start = std::max<std::uint64_t>(plan_offset_, kEnginePreambleBytes);
    if (offset + piece.size() > plan_start) {
        std::uint64_t const skip = offset < plan_start ? plan_start - offset : 0;
        auto const plan = piece.subspan(static_cast<std::size_t>(skip));
        plan_checksum_.update(plan);
        if (chunks_) {
            chunks_->update(plan);
        }
    }
}

// Writes what is certainly engine; keeps the last held_back_ bytes of the object (perhaps a
// signature trailer) aside.
void RemoteReceiver::settle(std::span<std::byte const> bytes, std::uint64_t offset) {
    std::uint64_t const settled_end = object_size_ - held_back_;
    if (offset < settled_end) {
        std::size_t const count =
            static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), settled_end - offset));
        write_engine(bytes.first(count), offset);
        bytes = bytes.subspan(count);
    }
    tail_.insert(tail_.end(), bytes.begin(), bytes.end());
}

ReceivedEngine RemoteReceiver::finish() {
    std::lock_guard const lock(mutex_);
    if (!file_) {
        throw std::logic_error("RemoteReceiver::finish after finish or abort");
    }
    try {
        return verify_and_commit();
    } catch (...) {
        file_.reset();
        throw;
    }
}

ReceivedEngine RemoteReceiver::verify_and_commit() {
    std::filesystem::path const label(object_name_);
    if (received_ < object_size_) {
        refuse(object_name_, "truncated: " + std::to_string(received_) + " of the " +
                                 std::to_string(object_size_) + " bytes announced arrived");
    }
    RemoteEngine result;
    result.is_signed = has_signature_trailer(object_size_, tail_);
    result.engine_bytes = object_size_ - (result.is_signed ? kSignatureTrailerBytes : 0);
    if (!result.is_signed) { // the held-back bytes end the engine
        write_engine(tail_, object_size_ - tail_.size());
    }
    if (trusted_ != nullptr) {
        std::span<std::byte const> const trailer =
            result.is_signed ? std::span<std::byte const>(tail_) : std::span<std::byte const>{};
        std::string const statement =
            chunks_ ? signed_header_statement(file_name_, sha256_hex(prefix_))
                    : signed_statement_of_digest(file_name_, engine_sha256_->hex_digest());
        result.signer = check_statement_signature(trailer, statement, object_name_, *trusted_);
    }
    if (prefix_.size() > result.engine_bytes) {
        refuse(object_name_, "truncated: its header needs " + std::to_string(prefix_.size()) +
                                 " bytes, the engine holds " + std::to_string(result.engine_bytes));
    }
    DecodedHeader decoded = decode_engine_header(prefix_, result.engine_bytes, label);
    result.identity = remote_entry_identity(decoded.header, expected_ ? &*expected_ : nullptr,
                                            object_name_, file_name_);
    // With a key, what the signature vouches for first (as verify_remote_object does); then the
    // checksums, the whole plan's before each chunk's.
    std::optional<PlanChunks> observed;
    if (chunks_ && decoded.header.chunks) {
        observed = chunks_->finish();
        if (trusted_ != nullptr) {
            check_signed_chunks(PlanChunks{observed->sha256, {}}, decoded, object_name_);
        }
    }
    std::string const actual = plan_checksum_.hex_digest();
    if (actual != decoded.header.plan_xxh3_128) {
        throw CorruptEngineError("saved engine '" + object_name_ +
                                     "' is unusable: the plan's XXH3-128 checksum is " + actual +
                                     " but the header records " + decoded.header.plan_xxh3_128,
                                 label);
    }
    if (observed) {
        if (auto const difference =
                chunk_difference(PlanChunks{{}, observed->xxh3_128}, *decoded.header.chunks,
                                 decoded.header.plan_size, {.sha256 = false, .xxh3_128 = true})) {
            refuse(object_name_, *difference);
        }
    }
    check_conditions(decoded.header.conditions, result.identity.conditions, label);
    // The file must be the one Store::save writes for this entry (conditions from the identity,
    // the object's references, plan size and checksum), byte for byte.
    EngineHeader saved_header;
    saved_header.conditions = result.identity.conditions;
    saved_header.references = decoded.header.references;
    saved_header.plan_size = decoded.header.plan_size;
    saved_header.plan_xxh3_128 = decoded.header.plan_xxh3_128;
    saved_header.chunks = decoded.header.chunks;
    saved_header.encryption = decoded.header.encryption;
    std::vector<std::byte> saved_prefix;
    try {
        saved_prefix = encode_engine_prefix(saved_header);
    } catch (InvalidArgument const& error) {
        refuse(object_name_, std::string("this node would not save its header: ") + error.what());
    }
    if (saved_prefix != prefix_) {
        refuse(object_name_,
               "its header is not the one this node saves for the entry '" + file_name_ + "'");
    }

    // Opened before the rename, from the file this receiver wrote (created O_EXCL, owner-only),
    // so that what is held is that file whatever the target's name points to afterwards.
    std::filesystem::path const& temporary = file_->temporary_path();
    platform::Descriptor const file{open_cache_file(temporary, O_RDONLY)};
    if (!file.valid()) {
        throw_file_error("cannot open", temporary, errno);
    }
    // Held before the rename, mapped and untouched: a pull hands nothing on and so holds none of
    // the object in memory (bench/remote_pull_memory.py). A caller that hands the plan to
    // TensorRT reads the committed entry again with Store::read, into a verified copy of its own.
    FileContents contents(file.get(), target_, Holding::mapped);
    if (contents.bytes().size() != result.engine_bytes) {
        throw FileError("'" + temporary.string() + "' holds " +
                            std::to_string(contents.bytes().size()) + " bytes after receiving " +
                            std::to_string(result.engine_bytes),
                        temporary);
    }
    file_->commit();
    file_.reset();
    result.decoded = decoded;
    std::uint64_t const plan_offset = decoded.plan_offset;
    return {std::move(result),
            SavedEngine(target_, std::move(decoded.header), std::move(contents), plan_offset)};
}

} // namespace tensoracle
