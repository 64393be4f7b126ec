// Chunk digests of a plan (see plan_chunks.hpp).
#include "cache/plan_chunks.hpp"

#include "cache/plan_checksum.hpp"
#include "io/hash.hpp"

#include <algorithm>

namespace tensoracle {

struct PlanChunkHasher::State {
    ChunkDigestKinds kinds;
    std::uint64_t in_chunk = 0; // bytes of the current chunk given so far
    Sha256 sha256;
    PlanChecksum xxh3;
    PlanChunks done;

    void end_chunk() {
        if (kinds.sha256) {
            done.sha256.push_back(sha256.hex_digest());
            sha256 = Sha256();
        }
        if (kinds.xxh3_128) {
            done.xxh3_128.push_back(xxh3.hex_digest());
            xxh3 = PlanChecksum();
        }
        in_chunk = 0;
    }
};

PlanChunkHasher::PlanChunkHasher(ChunkDigestKinds kinds) : state_(std::make_unique<State>()) {
    state_->kinds = kinds;
}
PlanChunkHasher::~PlanChunkHasher() = default;
PlanChunkHasher::PlanChunkHasher(PlanChunkHasher&&) noexcept = default;
PlanChunkHasher& PlanChunkHasher::operator=(PlanChunkHasher&&) noexcept = default;

void PlanChunkHasher::update(std::span<std::byte const> bytes) {
    State& state = *state_;
    while (!bytes.empty()) {
        std::size_t const take = static_cast<std::size_t>(
            std::min<std::uint64_t>(bytes.size(), kPlanChunkBytes - state.in_chunk));
        auto const piece = bytes.first(take);
        if (state.kinds.sha256) {
            state.sha256.update(piece);
        }
        if (state.kinds.xxh3_128) {
            state.xxh3.update(piece);
        }
        state.in_chunk += take;
        bytes = bytes.subspan(take);
        if (state.in_chunk == kPlanChunkBytes) {
            state.end_chunk();
        }
    }
}

PlanChunks PlanChunkHasher::finish() {
    if (state_->in_chunk > 0) {
        state_->end_chunk();
    }
    PlanChunks chunks = std::move(state_->done);
    state_.reset();
    return chunks;
}

PlanChunks plan_chunks_of(std::span<std::byte const> plan) {
    PlanChunkHasher hasher;
    hasher.update(plan);
    return hasher.finish();
}

std::string chunk_range_text(std::uint64_t index, std::uint64_t plan_size) {
    std::uint64_t const first = index * kPlanChunkBytes;
    std::uint64_t const end = std::min(plan_size, first + kPlanChunkBytes);
    return "bytes " + std::to_string(first) + " to " + std::to_string(end == 0 ? 0 : end - 1) +
           " of the plan";
}

std::optional<std::string> chunk_difference(PlanChunks const& observed, PlanChunks const& recorded,
                                            std::uint64_t plan_size, ChunkDigestKinds kinds) {
    struct Kind {
        bool compared;
        char const* name;
        std::vector<std::string> const& seen;
        std::vector<std::string> const& kept;
    };
    for (Kind const kind :
         {Kind{kinds.sha256, "SHA-256", observed.sha256, recorded.sha256},
          Kind{kinds.xxh3_128, "XXH3-128", observed.xxh3_128, recorded.xxh3_128}}) {
        if (!kind.compared) {
            continue;
        }
        if (kind.seen.size() != kind.kept.size()) {
            return "the plan has " + std::to_string(kind.seen.size()) +
                   " chunks, the header records " + std::to_string(kind.kept.size()) + " " +
                   kind.name + " digests";
        }
        for (std::size_t index = 0; index < kind.seen.size(); ++index) {
            if (kind.seen[index] != kind.kept[index]) {
                return "chunk " + std::to_string(index) + " (" +
                       chunk_range_text(index, plan_size) + "): " + kind.name + " " +
                       kind.seen[index] + ", the header records " + kind.kept[index];
            }
        }
    }
    return std::nullopt;
}

} // namespace tensoracle
