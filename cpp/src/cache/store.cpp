// The engine cache store: naming, locking, verified reads and atomic saves of engine files.
#include "cache/store.hpp"

#include "cache/engine_writing.hpp"
#include "cache/entry_file.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "encryption/plan_encryption.hpp"
#include "io/atomic_file.hpp"
#include "io/platform.hpp"
#include "tensoracle/errors.hpp"
#include "text/utf8_text.hpp"

#include <cerrno>
#include <cstdlib>
#include <set>
#include <system_error>

namespace tensoracle {
namespace {

std::string environment(char const* name) {
    char const* value = std::getenv(name);
    return value == nullptr ? std::string{} : std::string{value};
}

// A condition's key or value as JSON text, ASCII only (every other character escaped, so that a
// cut cannot split one), at most kConditionTextLimit bytes: a refusal stays readable however long
// or strange what a file records.
constexpr std::size_t kConditionTextLimit = 120;
std::string shortened(nlohmann::json const* value) {
    if (value == nullptr) {
        return "absent";
    }
    std::string text = value->dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    if (text.size() > kConditionTextLimit) {
        text = text.substr(0, kConditionTextLimit) + "...";
    }
    return text;
}

// How many differing keys a refusal names before it only counts the rest.
constexpr std::size_t kDifferingKeysShown = 10;

} // namespace

void check_conditions(nlohmann::json const& saved, nlohmann::json const& requested,
                      std::filesystem::path const& path) {
    if (saved == requested) {
        return;
    }
    std::set<std::string> keys;
    for (auto const& item : saved.items()) {
        keys.insert(item.key());
    }
    for (auto const& item : requested.items()) {
        keys.insert(item.key());
    }
    std::string differences;
    std::size_t differing = 0;
    for (auto const& key : keys) {
        auto const s = saved.find(key);
        auto const r = requested.find(key);
        nlohmann::json const* saved_value = s == saved.end() ? nullptr : &*s;
        nlohmann::json const* requested_value = r == requested.end() ? nullptr : &*r;
        if (saved_value != nullptr && requested_value != nullptr &&
            *saved_value == *requested_value) {
            continue;
        }
        if (++differing > kDifferingKeysShown) {
            continue;
        }
        nlohmann::json const key_text(key);
        differences += differences.empty() ? "" : "; ";
        differences += shortened(&key_text) + " (saved " + shortened(saved_value) + ", requested " +
                       shortened(requested_value) + ")";
    }
    if (differing > kDifferingKeysShown) {
        differences +=
            "; and " + std::to_string(differing - kDifferingKeysShown) + " more differing keys";
    }
    throw EngineConditionError(
        "saved engine '" + path.string() +
            "' was built under other conditions; differing keys: " + differences,
        Refusal{.subject = path.string(),
                .field = "conditions",
                .observed = "other conditions; differing keys: " + differences,
                .expected = "the requested conditions"});
}

namespace {

// Store::read compares the chunks' XXH3-128 only: damage, not authorship (no key to check).
constexpr ChunkDigestKinds kChunkChecks{.sha256 = false, .xxh3_128 = true};

// The reasons of plan_damage and PlanDamageCheck, one text for both: the whole plan's checksum
// first; then, where the header records chunks (`chunks`, the plan's own chunk digests), the
// first chunk that differs, named by chunk_difference: which part of the plan is damaged.
std::optional<std::string> plan_difference(std::string const& actual,
                                           std::optional<PlanChunks> const& chunks,
                                           EngineHeader const& header) {
    std::optional<std::string> damaged_chunk =
        chunks && header.chunks
            ? chunk_difference(*chunks, *header.chunks, header.plan_size, kChunkChecks)
            : std::nullopt;
    if (actual == header.plan_xxh3_128) {
        return damaged_chunk;
    }
    std::string reason = "the plan's XXH3-128 checksum is " + actual + " but the header records " +
                         header.plan_xxh3_128;
    if (damaged_chunk) {
        reason += "; the first damaged chunk: " + *damaged_chunk;
    }
    return reason;
}

} // namespace

std::optional<std::string> plan_damage(std::span<std::byte const> plan,
                                       EngineHeader const& header) {
    std::optional<PlanChunks> chunks;
    if (header.chunks) {
        PlanChunkHasher hasher(kChunkChecks);
        hasher.update(plan);
        chunks = hasher.finish();
    }
    return plan_difference(plan_checksum_hex(plan), chunks, header);
}

PlanDamageCheck::PlanDamageCheck(EngineHeader const& header) {
    if (header.chunks) {
        chunks_.emplace(kChunkChecks);
    }
}

void PlanDamageCheck::update(std::span<std::byte const> piece) {
    whole_.update(piece);
    if (chunks_) {
        chunks_->update(piece);
    }
}

std::optional<std::string> PlanDamageCheck::finish(EngineHeader const& header) {
    if (header.chunks.has_value() != chunks_.has_value()) {
        throw InvalidArgument("PlanDamageCheck::finish: a header other than the one the check "
                              "was made for (chunk digests recorded in one only)");
    }
    std::optional<PlanChunks> chunks;
    if (chunks_) {
        chunks = chunks_->finish();
    }
    return plan_difference(whole_.hex_digest(), chunks, header);
}

DecodedHeader verify_engine_bytes(std::span<std::byte const> bytes, EngineIdentity const& identity,
                                  std::filesystem::path const& path) {
    if (bytes.empty()) {
        throw CorruptEngineError("saved engine '" + path.string() +
                                     "' is unusable: empty file (a build in progress or an "
                                     "interrupted save)",
                                 path);
    }
    auto decoded = decode_engine_header(bytes, bytes.size(), path);
    auto const plan = bytes.subspan(static_cast<std::size_t>(decoded.plan_offset));
    if (auto const damage = plan_damage(plan, decoded.header)) {
        throw CorruptEngineError("saved engine '" + path.string() + "' is unusable: " + *damage,
                                 path);
    }
    check_conditions(decoded.header.conditions, identity.conditions, path);
    return decoded;
}

namespace {

// The cache folder's name becomes part of messages and of Python's str: refuse bytes that are
// not text at once, naming the variable, rather than fail later elsewhere.
void check_text_variable(char const* name, std::string const& value) {
    if (!is_valid_utf8(value)) {
        throw InvalidArgument(std::string(name) + "='" + escape_invalid_utf8(value) +
                              "' is not valid UTF-8; set it to a directory whose name is text");
    }
}

} // namespace

std::filesystem::path default_cache_directory() {
    std::string const xdg = environment("XDG_CACHE_HOME");
    check_text_variable("XDG_CACHE_HOME", xdg);
    if (!xdg.empty()) {
        return std::filesystem::path(xdg) / "tensoracle";
    }
    auto const [home, home_variable] = platform::home_directory();
    check_text_variable(home_variable, home);
    if (home.empty()) {
        throw InvalidArgument(
            std::string("cannot locate the cache directory: XDG_CACHE_HOME and ") + home_variable +
            " are both unset or empty, and the user has no home directory");
    }
    return std::filesystem::path(home) / ".cache" / "tensoracle";
}

void create_private_directories(std::filesystem::path const& directory) {
    if (directory.empty()) {
        throw InvalidArgument("the cache directory must not be an empty path");
    }
    std::filesystem::path partial;
    for (auto const& component : directory) {
        partial /= component;
        if (platform::make_directory(partial) != 0 && errno != EEXIST) {
            throw_file_error("cannot create directory", partial, errno);
        }
    }
    auto const status = platform::status(directory, platform::Follow::links);
    if (!status) {
        throw_file_error("cannot use directory", directory, errno);
    }
    if (status->kind != platform::FileKind::directory) {
        throw FileError("cannot use '" + directory.string() + "' as a directory: not a directory",
                        directory);
    }
}

SavedEngine::SavedEngine(std::filesystem::path path, EngineHeader header, FileContents contents,
                         std::uint64_t plan_offset)
    : path_(std::move(path)), header_(std::move(header)), contents_(std::move(contents)),
      plan_offset_(plan_offset) {}

std::span<std::byte const> SavedEngine::plan() const noexcept {
    return contents_.bytes().subspan(static_cast<std::size_t>(plan_offset_),
                                     static_cast<std::size_t>(header_.plan_size));
}

std::vector<std::byte> SavedEngine::opened_plan(encryption::DecryptKey const& key) const {
    if (!header_.encryption) {
        auto const body = plan();
        return {body.begin(), body.end()};
    }
    return encryption::opened_plan(*header_.encryption, key, plan(), path_);
}

Store::Store(std::filesystem::path directory) : directory_(std::move(directory)) {
    create_private_directories(directory_);
}

std::filesystem::path Store::entry_path(EngineIdentity const& identity) const {
    return directory_ / identity.file_name;
}

std::filesystem::path Store::lock_path(EngineIdentity const& identity) const {
    return lock_path_for(identity.file_name);
}

std::filesystem::path Store::lock_path_for(std::filesystem::path const& entry_file) const {
    return directory_ / (entry_file.filename().string() + ".lock");
}

FileLock Store::lock(EngineIdentity const& identity, LockMode mode) const {
    return FileLock::acquire(lock_path(identity), mode);
}

bool Store::contains(EngineIdentity const& identity) const {
    auto const status = platform::status(entry_path(identity), platform::Follow::no_links);
    return status && status->kind == platform::FileKind::regular;
}

std::optional<SavedEngine> Store::read(EngineIdentity const& identity) const {
    auto const path = entry_path(identity);
    auto const entry = open_regular_entry(path, {"saved engine", "saved engine "});
    if (!entry) {
        return std::nullopt;
    }
    platform::Descriptor const& file = entry->file;
    FileContents contents(file.get(), path); // closed below: only the contents are kept
    contents.advise_sequential();            // the checksum reads the plan once, front to back
    auto decoded = verify_engine_bytes(contents.bytes(), identity, path);
    // Record the successful read in the modification time. The update acts on the file we read,
    // so a file replaced or removed meanwhile is neither touched nor recreated; a read-only
    // cache must not turn a good read into a failure, so errors are ignored.
    (void)platform::touch(file.get());
    return SavedEngine(path, std::move(decoded.header), std::move(contents), decoded.plan_offset);
}

std::size_t Store::remove_abandoned_temporaries(std::string_view file_name) const {
    std::size_t removed = 0;
    std::error_code error;
    std::filesystem::directory_iterator found(directory_, error);
    for (; !error && found != std::filesystem::directory_iterator(); found.increment(error)) {
        std::filesystem::path const& path = found->path();
        std::string const name = path.filename().string();
        if (temporary_target_name(name) != file_name) {
            continue;
        }
        auto const writer = temporary_writer_pid(name);
        auto const status = platform::status(path, platform::Follow::no_links);
        if (!writer || platform::process_alive(*writer) || !status ||
            status->kind != platform::FileKind::regular) {
            continue;
        }
        if (platform::remove_file(path) == 0) {
            ++removed;
        }
    }
    return removed;
}

std::filesystem::path Store::save(EngineIdentity const& identity, nlohmann::json references,
                                  std::span<std::byte const> plan,
                                  std::span<encryption::RecipientKey const> encrypt_to) const {
    auto path = entry_path(identity);
    AtomicFile file(path);
    write_engine(file, identity.conditions, std::move(references), plan, encrypt_to);
    try {
        file.commit();
    } catch (FileError const& error) {
        if (error.error_number() != EACCES || error.path() != path) {
            throw;
        }
        // The rename over the entry was refused (on Windows: another process keeps the file
        // open); the temporary file is removed, and the saved engine stays as it was.
        throw FileError(std::string(error.what()) + "; the saved engine is unchanged: close it " +
                            "where it is open, then save again (open_engine(..., " +
                            "force_rebuild=True))",
                        path, EACCES);
    }
    return path;
}

} // namespace tensoracle
