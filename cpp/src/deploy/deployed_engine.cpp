// Opening a deployed engine (see deployed_engine.hpp): the file held once, hashed in one pass
// (SHA-256 of every byte for the signature when a verify key is set, XXH3-128 of the plan), the
// signature judged before any header byte is decoded, then the header and the manifest compared.
#include "tensoracle/deploy/deployed_engine.hpp"

#include "cache/engine_file.hpp"
#include "cache/entry_file.hpp"
#include "cache/identity.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "deploy/deployed_engine_state.hpp"
#include "deploy/io_difference.hpp"
#include "deploy/io_signature.hpp"
#include "deploy/json_forms.hpp"
#include "deploy/plan_unsealing.hpp"
#include "deploy/verify_key_option.hpp"
#include "io/file_contents.hpp"
#include "io/hash.hpp"
#include "io/hex_digits.hpp"
#include "io/piece_worker.hpp"
#include "io/platform.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace tensoracle::deploy {

namespace {

using Json = nlohmann::json;

// One of an entry's JSON texts (conditions_json, io_json) read back, for comparing with the
// saved header's.
Json entry_json(ManifestEntry const& entry, std::string const& text, char const* field) {
    try {
        return parse_bounded_json(text, {.max_bytes = text.size()});
    } catch (JsonLimitError const& error) {
        throw InvalidArgument("manifest entry " + entry.file_name + ": " + field +
                              " is not JSON: " + error.what());
    }
}

[[noreturn]] void corrupt(std::filesystem::path const& path, std::string const& what) {
    throw CorruptEngineError("deployed engine '" + path.string() + "' is unusable: " + what, path);
}

// The same refusal, with its fields; `refusal`'s subject is set to `path`.
[[noreturn]] void corrupt(std::filesystem::path const& path, std::string const& what,
                          Refusal refusal) {
    refusal.subject = path.string();
    throw CorruptEngineError("deployed engine '" + path.string() + "' is unusable: " + what,
                             refusal);
}

// The entry's member `field` records `recorded`, the file holds `found`.
[[noreturn]] void corrupt_member(std::filesystem::path const& path, char const* field,
                                 std::string const& found, std::string const& recorded) {
    corrupt(path, std::string(field) + " is " + found + ", the manifest records " + recorded,
            Refusal{.field = field, .observed = found, .expected = recorded});
}

[[noreturn]] void corrupt_size(std::filesystem::path const& path, std::uint64_t size,
                               std::uint64_t engine_bytes) {
    corrupt(path,
            "the file is " + std::to_string(size) + " bytes, the manifest records engine_bytes " +
                std::to_string(engine_bytes),
            Refusal{.field = "engine_bytes",
                    .observed = std::to_string(size),
                    .expected = std::to_string(engine_bytes)});
}

// The entry's file, opened as Store::read opens an entry (open_regular_entry): without following
// a link, a regular file only, of the manifest's size (refused before any of it is read).
std::shared_ptr<platform::Descriptor const> open_entry(std::filesystem::path const& path,
                                                       std::uint64_t engine_bytes) {
    auto entry = open_regular_entry(path, {"deployed engine", "deployed engine "});
    if (!entry) {
        throw FileError("deployed engine '" + path.string() +
                            "' is not in the cache folder: fetch it first with "
                            "`tensoracle cache pull --manifest MANIFEST`",
                        path, ENOENT);
    }
    if (entry->status.size != engine_bytes) {
        corrupt_size(path, entry->status.size, engine_bytes);
    }
    return std::make_shared<platform::Descriptor const>(std::move(entry->file));
}

Signature signature_of(std::string const& hex) {
    Signature signature{};
    tensoracle::detail::from_lower_hex(hex, signature);
    return signature;
}

// The fingerprint of `trusted` when it accepts the manifest's signature of the entry over
// `statement`; UntrustedEngineError otherwise.
std::string check_signature(ManifestEntry const& entry, VerifyKey const& trusted,
                            std::string const& statement, std::filesystem::path const& path) {
    if (!entry.fleet || !entry.fleet->signature) {
        throw UntrustedEngineError(
            "deployed engine '" + path.string() +
                "' has no signature in the manifest (fleet.signature "
                "is null), and the verify key " +
                trusted.fingerprint() + " is set: only signed engines are opened",
            Refusal{.subject = path.string(),
                    .field = "fleet.signature",
                    .observed = "null",
                    .expected = "a signature by the verify key " + trusted.fingerprint()});
    }
    Signature const signature = signature_of(*entry.fleet->signature);
    if (!trusted.verify(std::as_bytes(std::span(statement)), signature)) {
        throw UntrustedEngineError(
            "deployed engine '" + path.string() +
                "' has a signature (fleet.signature) that "
                "the verify key " +
                trusted.fingerprint() +
                " does not accept: signed by another key, or the file changed after signing",
            Refusal{.subject = path.string(),
                    .field = "fleet.signature",
                    .observed = *entry.fleet->signature,
                    .expected =
                        "a signature of this file by the verify key " + trusted.fingerprint()});
    }
    return trusted.fingerprint();
}

// The key ids that signed the manifest, as signer() reports them.
std::string manifest_signer(ManifestEntry const& entry) {
    return joined(entry.manifest_signers, ", ");
}

// Refuses the file of an entry whose digest `observed` (of its preamble and header when
// `header`, else of the whole file) is not the one the manifest records for it: for an entry of a
// verified signed manifest an UntrustedEngineError, else (a plain manifest's record) a
// CorruptEngineError.
void check_recorded_digest(ManifestEntry const& entry, bool header, std::string const& observed,
                           std::filesystem::path const& path) {
    std::optional<std::string> const& recorded = header ? entry.header_sha256 : entry.sha256;
    char const* const field = header ? "header_sha256" : "sha256";
    if (!recorded) {
        throw UntrustedEngineError("deployed engine '" + path.string() +
                                       "': the manifest records no " + field +
                                       " for it, which its signature must bind",
                                   Refusal{.subject = path.string(),
                                           .field = field,
                                           .observed = "null",
                                           .expected = "the SHA-256 its signature binds"});
    }
    if (observed == *recorded) {
        return;
    }
    std::string const what = std::string("the SHA-256 of its ") +
                             (header ? "preamble and header" : "whole file") + " is " + observed +
                             ", the manifest records " + field + " " + *recorded;
    Refusal refusal{
        .subject = path.string(), .field = field, .observed = observed, .expected = *recorded};
    if (!entry.manifest_signers.empty()) {
        throw UntrustedEngineError("deployed engine '" + path.string() +
                                       "' is not the file the signed manifest names: " + what,
                                   refusal);
    }
    throw CorruptEngineError("deployed engine '" + path.string() + "' is unusable: " + what,
                             refusal);
}

// The preamble and header `prefix` of a format 2 file judged before any of it is decoded, as
// what vouches for it says: a verified signed manifest's header_sha256, else the entry's
// signature under the key `trusted`, else the plain manifest's header_sha256. Returns who
// vouched (signer()), none for a plain manifest.
std::optional<std::string> judge_header(ManifestEntry const& entry,
                                        std::optional<VerifyKey> const& trusted,
                                        std::span<std::byte const> prefix,
                                        std::filesystem::path const& path) {
    std::string const digest = sha256_hex(prefix);
    if (!entry.manifest_signers.empty()) {
        check_recorded_digest(entry, true, digest, path);
        return manifest_signer(entry);
    }
    if (trusted) {
        return check_signature(entry, *trusted, signed_header_statement(entry.file_name, digest),
                               path);
    }
    check_recorded_digest(entry, true, digest, path);
    return std::nullopt;
}

// The saved header's IO signature against the manifest entry's, compared as the IO they
// describe (first_io_difference): EngineIOError naming where they first differ.
void check_header_io(Json const& observed, Json const& expected,
                     std::filesystem::path const& path) {
    auto const refuse = [&path](std::string const& field, std::string const& seen,
                                std::string const& recorded) {
        throw EngineIOError(
            "deployed engine '" + path.string() +
                "': the saved header's IO signature differs from the "
                "manifest's at " +
                field + ": " + seen + ", the manifest records " + recorded,
            Refusal{
                .subject = path.string(), .field = field, .observed = seen, .expected = recorded});
    };
    if (observed.is_null() || expected.is_null()) {
        if (observed.is_null() != expected.is_null()) {
            refuse("io", observed.is_null() ? "absent" : "an IO signature",
                   expected.is_null() ? "none" : "an IO signature");
        }
        return;
    }
    JsonPlace const header = JsonPlace(path.string()).member("references").member("io");
    std::vector<TensorDescription> const saved = io_from_json(observed, header);
    std::vector<TensorDescription> const recorded =
        io_from_json(expected, JsonPlace(path.string() + " (its manifest entry)").member("io"));
    if (auto const difference = first_io_difference(saved, recorded)) {
        refuse(io_field(*difference, recorded), difference->observed, difference->expected);
    }
}

// The checks of the verified header against the manifest entry (plan checksum, conditions, IO
// signature); then what the engine is run by is what the header records.
void check_header(DecodedHeader const& decoded, ManifestEntry const& entry,
                  std::filesystem::path const& path, ManifestEntry& opened) {
    EngineHeader const& header = decoded.header;
    if (header.plan_xxh3_128 != entry.plan_xxh3_128) {
        corrupt_member(path, "plan.xxh3_128", header.plan_xxh3_128, entry.plan_xxh3_128);
    }
    check_conditions(header.conditions, entry_json(entry, entry.conditions_json, "conditions_json"),
                     path);
    Json const observed_io =
        header.references.contains("io") ? header.references.at("io") : Json(nullptr);
    check_header_io(observed_io, entry_json(entry, entry.io_json, "io_json"), path);
    // What the engine is run by from here on is what the verified header records, whatever an
    // application that built the entry itself put in its typed members.
    opened.runs_on =
        conditions_from_json(header.conditions, JsonPlace(path.string()).member("conditions"));
    opened.io = std::nullopt;
    if (!observed_io.is_null()) {
        opened.io =
            io_from_json(observed_io, JsonPlace(path.string()).member("references").member("io"));
    }
}

// Files from this size on have what the signature is over hashed on a thread of its own while
// the reading thread copies and computes the XXH3-128: on two cores the open then costs about
// the SHA-256 alone. (Below it, starting a thread costs more than it saves.)
constexpr std::uint64_t kSignedHashWorkerBytes = std::uint64_t{8} << 20U;

// The digests of a file, computed piece by piece as it is read into the process's memory (the
// pieces stay valid and unchanged while the digests are computed): XXH3-128 of the bytes from
// `plan_offset` on and, when asked for, what the signature is over: for format version 2 the
// SHA-256 of the preamble and header and of each plan chunk, for version 1 of every byte.
class Digests {
public:
    Digests(Digests const&) = delete; // the worker's work refers to this object
    Digests& operator=(Digests const&) = delete;
    Digests(Digests&&) = delete;
    Digests& operator=(Digests&&) = delete;
    ~Digests() = default;
    Digests(std::size_t plan_offset, bool with_sha256, std::uint64_t file_bytes)
        : plan_offset_(plan_offset), with_sha256_(with_sha256) {
        if (with_sha256 && file_bytes >= kSignedHashWorkerBytes) {
            worker_ = std::make_unique<PieceWorker>(
                [this](std::span<std::byte const> piece) { hash_signed(piece); });
        }
    }

    void add(std::span<std::byte const> piece) {
        if (piece.empty()) { // the copy is complete or abandoned: no piece is used after this
            if (worker_) {
                try {
                    worker_->finish();
                } catch (...) { // reported by signed_statement, not into the copy's own failure
                    failure_ = std::current_exception();
                }
                worker_.reset();
            }
            return;
        }
        if (worker_) {
            worker_->add(piece);
        } else if (with_sha256_) {
            hash_signed(piece);
        }
        if (at_ == 0 && !with_sha256_ && has_chunk_digests(engine_format_version(piece))) {
            // Without a key, each chunk's XXH3-128 as well: a file opened whole is the one a
            // streamed open would hand on.
            chunk_xxh3_.emplace(ChunkDigestKinds{.sha256 = false, .xxh3_128 = true});
        }
        if (at_ + piece.size() > plan_offset_) {
            std::size_t const skip = plan_offset_ > at_ ? plan_offset_ - at_ : 0;
            plan_.update(piece.subspan(skip));
            if (chunk_xxh3_) {
                chunk_xxh3_->update(piece.subspan(skip));
            }
        }
        at_ += piece.size();
    }
    // After the copy's end (FileContents's empty piece): the statement the signature of the
    // entry `file_name` must be over.
    std::string signed_statement(std::string_view file_name) {
        if (failure_) {
            std::rethrow_exception(failure_);
        }
        if (chunks_) {
            return signed_header_statement(file_name, prefix_sha256_.hex_digest());
        }
        return signed_statement_of_digest(file_name, sha256_.hex_digest());
    }
    // What a signed manifest binds, after the copy's end: for format version 2 the SHA-256 of the
    // preamble and header (true), for version 1 of the whole file (false).
    std::pair<bool, std::string> bound_digest() {
        if (failure_) {
            std::rethrow_exception(failure_);
        }
        if (chunks_) {
            return {true, prefix_sha256_.hex_digest()};
        }
        return {false, sha256_.hex_digest()};
    }
    // The SHA-256 of each plan chunk (format version 2 with a key), after the copy's end.
    std::optional<PlanChunks> chunk_sha256() {
        if (!chunks_) {
            return std::nullopt;
        }
        return chunks_->finish();
    }
    // The XXH3-128 of each plan chunk (format version 2 without a key), after the copy's end.
    std::optional<PlanChunks> chunk_xxh3_128() {
        if (!chunk_xxh3_) {
            return std::nullopt;
        }
        return chunk_xxh3_->finish();
    }
    std::string plan_xxh3_128() const { return plan_.hex_digest(); }

private:
    // What the signature is over, from the pieces in order (on the worker's thread, if any).
    void hash_signed(std::span<std::byte const> piece) {
        if (signed_at_ == 0 && has_chunk_digests(engine_format_version(piece))) {
            // The signature is over the header, which records each chunk's SHA-256.
            prefix_end_ = engine_prefix_bytes(piece);
            chunks_.emplace(ChunkDigestKinds{.sha256 = true, .xxh3_128 = false});
        }
        if (chunks_) {
            if (signed_at_ < prefix_end_) {
                prefix_sha256_.update(piece.first(static_cast<std::size_t>(
                    std::min<std::uint64_t>(piece.size(), prefix_end_ - signed_at_))));
            }
            if (signed_at_ + piece.size() > prefix_end_) {
                std::size_t const skip = prefix_end_ > signed_at_ ? prefix_end_ - signed_at_ : 0;
                chunks_->update(piece.subspan(skip));
            }
        } else {
            sha256_.update(piece);
        }
        signed_at_ += piece.size();
    }

    std::size_t plan_offset_;
    bool with_sha256_;
    std::size_t at_ = 0;
    PlanChecksum plan_;
    std::optional<PlanChunkHasher> chunk_xxh3_; // format version 2 without a key
    // What the signature is over, written only by hash_signed.
    std::uint64_t signed_at_ = 0;
    Sha256 sha256_;                // format version 1: every byte
    std::uint64_t prefix_end_ = 0; // format version 2: the preamble and header's SHA-256,
    Sha256 prefix_sha256_;         // and each chunk's
    std::optional<PlanChunkHasher> chunks_;
    std::exception_ptr failure_;
    std::unique_ptr<PieceWorker> worker_; // last: stopped before what its work writes goes
};

} // namespace

OpenOptions options_from_environment() {
    OpenOptions options;
    options.cache_directory = default_cache_directory();
    if (char const* policy = std::getenv(kTrustPolicyVariable);
        policy != nullptr && *policy != '\0') {
        // The policy lists every key it trusts: the fleet's verify key, which may be set as
        // well for `cache pull`, is then not the manifest's.
        options.trust_policy = policy;
        return options;
    }
    if (char const* key = std::getenv(kVerifyKeyVariable); key != nullptr && *key != '\0') {
        if (std::string_view(key).starts_with("-----BEGIN")) {
            options.verify_key_pem = key;
        } else {
            options.verify_key = key;
        }
    }
    return options;
}

DeployedEngine DeployedEngine::open(ManifestEntry const& entry, OpenOptions const& options) {
    std::filesystem::path const folder =
        options.cache_directory.empty() ? default_cache_directory() : options.cache_directory;
    std::filesystem::path const path = folder / entry.file_name;
    // An entry of a verified signed manifest: the manifest's signature binds its file's digests,
    // which are checked instead of the entry's own signature.
    bool const bound = !entry.manifest_signers.empty();
    // The key is read first: a key that cannot be used is the caller's error, whatever the file.
    std::optional<VerifyKey> const trusted =
        verify_key_of(options.verify_key, options.verify_key_pem, "OpenOptions");
    std::optional<encryption::DecryptKey> const decrypt_key =
        decrypt_key_of(options.decrypt_key, options.decrypt_key_pem, "OpenOptions");
    if (!trusted && !bound && entry.fleet && entry.fleet->signature &&
        !options.skip_signature_verification) {
        refuse_unverified("deployed engine '" + path.string() +
                              "': the manifest records a signature for it (fleet.signature)",
                          std::string("OpenOptions::verify_key or verify_key_pem, ") +
                              kVerifyKeyVariable +
                              " with options_from_environment(), or open_deployed(verify_key=...) "
                              "in Python",
                          "OpenOptions::skip_signature_verification, "
                          "open_deployed(skip_signature_verification=True)",
                          path);
    }
    if (entry.plan_size > entry.engine_bytes) {
        throw InvalidArgument("manifest entry " + entry.file_name + ": plan.size " +
                              std::to_string(entry.plan_size) + " exceeds engine_bytes " +
                              std::to_string(entry.engine_bytes));
    }
    // Where the plan starts by the manifest; the header must agree (checked below).
    auto const plan_offset = static_cast<std::size_t>(entry.engine_bytes - entry.plan_size);
    auto state = std::make_unique<State>();
    state->entry = entry;
    state->path = path;
    state->plan_offset = plan_offset;
    state->plan_size = entry.plan_size;
    std::shared_ptr<platform::Descriptor const> const file = open_entry(path, entry.engine_bytes);
    std::optional<std::string> plan_xxh3_128; // computed over the plan when it is read whole
    std::optional<DecodedHeader> decoded;
    // The preamble and header, read first where they are judged before the plan is read: for a
    // streamed open, and wherever a signature or a signed manifest vouches for the header.
    std::vector<std::byte> prefix;
    if (options.stream_plan || bound || trusted) {
        prefix = read_engine_prefix(file->get(), entry.engine_bytes, path);
    }
    if (options.stream_plan) {
        // The plan stays in the file until a PlanReader reads it.
        // Without a key, a manifest that records no header digest leaves nothing to check the
        // header's chunk list against before chunks are handed on: such an entry is read whole.
        bool const header_bound = bound || trusted || entry.header_sha256.has_value();
        if (has_chunk_digests(engine_format_version(prefix)) && header_bound) {
            // The header, which records each chunk's digests, is the manifest's before a byte of
            // it is decoded.
            state->signer = judge_header(entry, trusted, prefix, path);
            // The header's plan length against the file's (the manifest's) size, then the
            // manifest's plan size.
            decoded = decode_engine_header(prefix, entry.engine_bytes, path);
            if (decoded->header.plan_size != entry.plan_size) {
                corrupt_member(path, "plan.size", std::to_string(decoded->header.plan_size),
                               std::to_string(entry.plan_size));
            }
            bool const sha256 = bound || trusted.has_value();
            state->chunks.sha256 = sha256;
            state->plan_xxh3_128 = decoded->header.plan_xxh3_128;
            state->chunks.digests =
                sha256 ? decoded->header.chunks->sha256 : decoded->header.chunks->xxh3_128;
            state->file = file;
        }
    }
    if (!state->file) {
        // Where the format lets the header alone be judged (format 2: it records every chunk's
        // digests), it is judged before any of the plan is read: a file the manifest or the key
        // does not vouch for costs the reading of its header, not of engine_bytes. The copy
        // below is judged again, since the file may change meanwhile.
        if ((bound || trusted) && has_chunk_digests(engine_format_version(prefix))) {
            (void)judge_header(entry, trusted, prefix, path);
        }
        // One pass: each piece is hashed as it is copied, and only the copy is judged and
        // handed on.
        Digests digests(plan_offset, bound || trusted.has_value(), entry.engine_bytes);
        // Never more than engine_bytes + 1 bytes, however the file grows after it was measured.
        state->contents.emplace(
            file->get(), path, [&digests](std::span<std::byte const> piece) { digests.add(piece); },
            entry.engine_bytes);
        auto const bytes = state->contents->bytes();
        if (bytes.size() > entry.engine_bytes) {
            corrupt(path, "the file grew past the manifest's engine_bytes " +
                              std::to_string(entry.engine_bytes) + " while it was read");
        }
        if (bytes.size() != entry.engine_bytes) { // it shrank while it was read
            corrupt_size(path, bytes.size(), entry.engine_bytes);
        }
        plan_xxh3_128 = digests.plan_xxh3_128();
        if (bound) {
            auto const [header, digest] = digests.bound_digest();
            check_recorded_digest(entry, header, digest, path);
            state->signer = manifest_signer(entry);
        } else if (trusted) {
            state->signer =
                check_signature(entry, *trusted, digests.signed_statement(entry.file_name), path);
        }
        decoded = decode_engine_header(bytes, bytes.size(), path);
        if (auto const chunks = digests.chunk_sha256(); chunks && decoded->header.chunks) {
            if (auto const difference =
                    chunk_difference(*chunks, *decoded->header.chunks, entry.plan_size,
                                     {.sha256 = true, .xxh3_128 = false})) {
                throw UntrustedEngineError("deployed engine '" + path.string() +
                                               "' does not hold what its signature vouches for: " +
                                               *difference + " (the file changed after signing)",
                                           path);
            }
        }
        if (*plan_xxh3_128 != decoded->header.plan_xxh3_128 ||
            decoded->plan_offset != plan_offset) {
            // A header that announces another plan length than the manifest's leaves the plan's
            // checksum computed over other bytes: report what the header itself says.
            if (decoded->header.plan_size != entry.plan_size) {
                corrupt_member(path, "plan.size", std::to_string(decoded->header.plan_size),
                               std::to_string(entry.plan_size));
            }
            corrupt(path, "the plan's XXH3-128 checksum is " + *plan_xxh3_128 +
                              " but the header records " + decoded->header.plan_xxh3_128);
        }
        if (auto const chunks = digests.chunk_xxh3_128(); chunks && decoded->header.chunks) {
            if (auto const difference =
                    chunk_difference(*chunks, *decoded->header.chunks, entry.plan_size,
                                     {.sha256 = false, .xxh3_128 = true})) {
                corrupt(path, *difference);
            }
        }
    }
    (void)platform::touch(file->get()); // a read, for `cache prune`'s least recently used order
    check_header(*decoded, entry, path, state->entry);
    if (state->contents && !bound && !trusted && entry.header_sha256 && decoded->header.chunks) {
        // Without a key the copy's header is the manifest's too (after the checks above, which
        // name the field that differs): the chunk list it records is the one a streamed open
        // would check chunks against.
        check_recorded_digest(
            entry, true,
            sha256_hex(state->contents->bytes().first(static_cast<std::size_t>(plan_offset))),
            path);
    }
    state->unsealed = unseal_plan(
        path, decoded->header, decrypt_key,
        "OpenOptions::decrypt_key or decrypt_key_pem, or open_deployed(decrypt_key=...) in Python",
        state->file ? std::nullopt
                    : std::optional(std::span(state->held() + plan_offset,
                                              static_cast<std::size_t>(entry.plan_size))));
    if (state->unsealed.data_key && !state->file) {
        state->contents.reset(); // the sealed copy: what is handed on is the plan opened from it
    }
    return DeployedEngine(std::move(state));
}

DeployedEngine::DeployedEngine(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
DeployedEngine::DeployedEngine(DeployedEngine&& other) noexcept = default;
DeployedEngine& DeployedEngine::operator=(DeployedEngine&& other) noexcept = default;
DeployedEngine::~DeployedEngine() = default;

ManifestEntry const& DeployedEngine::entry() const noexcept {
    return state_->entry;
}
std::filesystem::path const& DeployedEngine::path() const noexcept {
    return state_->path;
}
std::byte const* DeployedEngine::plan_data() const noexcept {
    if (state_->unsealed.data_key) {
        return state_->file ? nullptr : state_->unsealed.plan.data();
    }
    std::byte const* const held = state_->held();
    return held == nullptr ? nullptr : held + state_->plan_offset;
}
std::size_t DeployedEngine::plan_size() const noexcept {
    return static_cast<std::size_t>(state_->handed_size());
}
bool DeployedEngine::streamed() const noexcept {
    return state_->file != nullptr;
}
std::optional<std::string> const& DeployedEngine::signer() const noexcept {
    return state_->signer;
}

} // namespace tensoracle::deploy
