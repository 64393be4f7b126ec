// Handing on a deployed engine's plan chunk by chunk, each checked first (see plan_reader.hpp).
#include "tensoracle/deploy/plan_reader.hpp"

#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "deploy/deployed_engine_state.hpp"
#include "encryption/plan_sealing.hpp"
#include "io/full_read.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

namespace tensoracle::deploy {

namespace {

// Zeroes the bytes it watches when it ends, unless told to keep them.
class ZeroUnlessKept {
public:
    explicit ZeroUnlessKept(std::span<std::byte> bytes) noexcept : bytes_(bytes) {}
    ZeroUnlessKept(ZeroUnlessKept const&) = delete;
    ZeroUnlessKept& operator=(ZeroUnlessKept const&) = delete;
    ZeroUnlessKept(ZeroUnlessKept&&) = delete;
    ZeroUnlessKept& operator=(ZeroUnlessKept&&) = delete;
    ~ZeroUnlessKept() {
        if (!kept_) {
            std::memset(bytes_.data(), 0, bytes_.size());
        }
    }
    void keep() noexcept { kept_ = true; }

private:
    std::span<std::byte> bytes_;
    bool kept_ = false;
};

// What a chunk is read and hashed in: a piece that stays in a core's cache between the two.
constexpr std::size_t kHashedPieceBytes = std::size_t{256} << 10U;

} // namespace

struct PlanReader::State {
    DeployedEngine::State const* engine = nullptr;
    std::vector<std::byte> buffer;      // one chunk, read and checked
    std::uint64_t buffered = 0;         // the chunk the buffer holds,
    bool holds_chunk = false;           // when it holds one
    std::optional<std::string> refused; // why a chunk was refused: every later read is too
    std::vector<bool> checked;          // which chunks a read checked (check_rest reads the rest)
    std::vector<std::byte> sealed;      // encrypted: one chunk as stored, checked, then opened
    std::uint64_t chunk_count() const { return engine->chunks.digests.size(); }

    // The plan handed on is cut in pieces of piece_bytes(), one per chunk of the stored body: the
    // chunks themselves, or for an encrypted engine what each chunk opens to (its tag removed).
    std::uint64_t piece_bytes() const {
        return engine->unsealed.data_key ? encryption::kSealedPieceBytes : kPlanChunkBytes;
    }
    std::uint64_t chunk_size(std::uint64_t index) const {
        return engine->unsealed.data_key
                   ? encryption::sealed_piece_size(index, engine->unsealed.plan_size)
                   : plan_chunk_size(index, engine->plan_size);
    }

    [[noreturn]] void refuse(std::string const& what) {
        refused = "deployed engine '" + engine->path.string() + "' is unusable: " + what +
                  ": the file is damaged, or changed since it was opened, and nothing of that "
                  "chunk was handed on";
        throw CorruptEngineError(*refused, engine->path);
    }

    // Reads chunk `index` from the open file into `into` (its size) and checks it against the
    // verified header (which the manifest bound, by its header_sha256 or its signature, before
    // any chunk was read).
    // Encrypted: the chunk is read and checked in `sealed`, then authenticated and opened into
    // `into` (its piece of the plan); `into` is zeroed when either refuses it.
    void read_checked(std::uint64_t index, std::span<std::byte> into) {
        if (!engine->unsealed.data_key) {
            verify_chunk(index, into);
            return;
        }
        ZeroUnlessKept guard(into);
        sealed.resize(static_cast<std::size_t>(plan_chunk_size(index, engine->plan_size)));
        verify_chunk(index, sealed);
        try {
            encryption::open_sealed_chunk(*engine->unsealed.data_key, index,
                                          engine->unsealed.plan_size, sealed, into, engine->path);
        } catch (CorruptEngineError const& error) {
            refused = error.what();
            throw;
        }
        guard.keep();
    }

    // Reads chunk `index` into `into` and checks it; whatever
    // ends the check early (a refusal, a failed read, no memory for a message) leaves `into`
    // zeroed.
    void verify_chunk(std::uint64_t index, std::span<std::byte> into) {
        ZeroUnlessKept guard(into);
        std::string const& expected = engine->chunks.digests.at(static_cast<std::size_t>(index));
        // The chunk's digest of the kind the header's list holds, hashed as it is read.
        auto const read_hashed = [this, index, into](auto digest) {
            read_chunk(index, into,
                       [&digest](std::span<std::byte const> piece) { digest.update(piece); });
            return digest.hex_digest();
        };
        std::string const observed =
            engine->chunks.sha256 ? read_hashed(Sha256()) : read_hashed(PlanChecksum());
        if (observed != expected) {
            refuse("chunk " + std::to_string(index) + " (" +
                   chunk_range_text(index, engine->plan_size) + ") has the " +
                   (engine->chunks.sha256 ? "SHA-256 " : "XXH3-128 ") + observed +
                   ", the verified header records " + expected);
        }
        guard.keep();
        if (checked.empty()) {
            checked.resize(static_cast<std::size_t>(chunk_count()));
        }
        checked[static_cast<std::size_t>(index)] = true;
    }

    // The bytes of chunk `index` from the open file into `into`, in pieces of kHashedPieceBytes,
    // each given to `hash` as soon as it is read: hashed while it is still in the CPU's cache,
    // the chunk is read from memory once more only when it is handed on.
    template <typename Hash>
    void read_chunk(std::uint64_t index, std::span<std::byte> into, Hash&& hash) {
        std::uint64_t const at = engine->plan_offset + index * kPlanChunkBytes;
        std::size_t done = 0;
        while (done < into.size()) {
            auto const piece = into.subspan(done, std::min(kHashedPieceBytes, into.size() - done));
            std::size_t const got = read_full(engine->file->get(), piece, at + done, engine->path,
                                              "cannot read deployed engine");
            if (got < piece.size()) {
                refuse("chunk " + std::to_string(index) + " (" +
                       chunk_range_text(index, engine->plan_size) + ") ends " +
                       std::to_string(into.size() - done - got) + " bytes early: the file was cut");
            }
            hash(std::span<std::byte const>(piece));
            done += got;
        }
    }

    // The buffer holding chunk `index`, read and checked when it holds another.
    std::span<std::byte const> chunk(std::uint64_t index) {
        if (!holds_chunk || buffered != index) {
            holds_chunk = false;
            buffer.resize(static_cast<std::size_t>(chunk_size(index)));
            read_checked(index, buffer);
            buffered = index;
            holds_chunk = true;
        }
        return buffer;
    }

    void check_usable() const {
        if (refused) {
            throw CorruptEngineError(*refused, engine->path);
        }
    }
};

PlanReader::PlanReader(DeployedEngine const& engine) : state_(std::make_unique<State>()) {
    state_->engine = engine.state_.get();
}
PlanReader::PlanReader(PlanReader&&) noexcept = default;
PlanReader& PlanReader::operator=(PlanReader&&) noexcept = default;
PlanReader::~PlanReader() = default;

std::uint64_t PlanReader::size() const noexcept {
    return state_->engine->handed_size();
}

std::byte const* PlanReader::checked_at(std::uint64_t offset, std::size_t& available) {
    State& state = *state_;
    available = 0;
    state.check_usable();
    std::uint64_t const size = state.engine->handed_size();
    if (offset >= size) {
        return nullptr;
    }
    if (!state.engine->file) { // opened whole: the verified copy, or the plan opened from it
        available = static_cast<std::size_t>(size - offset);
        return state.engine->unsealed.data_key
                   ? state.engine->unsealed.plan.data() + offset
                   : state.engine->held() + state.engine->plan_offset + offset;
    }
    std::uint64_t const index = offset / state.piece_bytes();
    auto const chunk = state.chunk(index);
    auto const skip = static_cast<std::size_t>(offset - index * state.piece_bytes());
    available = chunk.size() - skip;
    return chunk.data() + skip;
}

std::size_t PlanReader::read(std::uint64_t offset, std::byte* destination, std::size_t bytes) {
    State& state = *state_;
    state.check_usable();
    std::size_t copied = 0;
    while (copied < bytes && offset + copied < state.engine->handed_size()) {
        std::uint64_t const at = offset + copied;
        std::uint64_t const index = at / state.piece_bytes();
        std::uint64_t const size = state.engine->file ? state.chunk_size(index) : 0;
        bool const whole_chunk = state.engine->file && at == index * state.piece_bytes() &&
                                 bytes - copied >= size &&
                                 !(state.holds_chunk && state.buffered == index);
        if (whole_chunk) { // straight into the destination, checked there before returning
            state.read_checked(index,
                               std::span(destination + copied, static_cast<std::size_t>(size)));
            copied += static_cast<std::size_t>(size);
            continue;
        }
        std::size_t available = 0;
        std::byte const* const from = checked_at(at, available);
        std::size_t const take = std::min(available, bytes - copied);
        std::memcpy(destination + copied, from, take);
        copied += take;
    }
    return copied;
}

void PlanReader::check_rest() {
    State& state = *state_;
    state.check_usable();
    if (!state.engine->file) {
        return; // opened whole: checked whole before open() returned
    }
    for (std::uint64_t index = 0; index < state.chunk_count(); ++index) {
        if (state.checked.empty() || !state.checked[static_cast<std::size_t>(index)]) {
            (void)state.chunk(index); // into the reader's own buffer: nothing is handed on
        }
    }
}

bool PlanReader::checked_whole() const noexcept {
    State const& state = *state_;
    if (!state.engine->file) {
        return true;
    }
    if (state.refused) {
        return false;
    }
    std::uint64_t const count = state.chunk_count();
    return count == 0 ||
           (state.checked.size() == count && std::all_of(state.checked.begin(), state.checked.end(),
                                                         [](bool done) { return done; }));
}

std::size_t PlanReader::buffer_bytes() const noexcept {
    return state_->buffer.capacity() + state_->sealed.capacity();
}

} // namespace tensoracle::deploy
