// The chunk digests of a saved engine's plan (format version 2, engine_file.hpp): the plan cut
// into pieces of kPlanChunkBytes (the last one shorter), each with its SHA-256 and its XXH3-128,
// recorded in the header. They let a reader hand the plan on piece by piece, each piece checked
// just before, so that the plan need not be held whole: XXH3-128 detects damage at memory speed,
// SHA-256 binds every byte to a signature over the header alone (remote/object.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {

// The size of every chunk but the last: fixed by the format, so that a reader can hash the
// chunks of a plan as it arrives, before the header that records them is decoded.
inline constexpr std::uint64_t kPlanChunkBytes = std::uint64_t{4} << 20U;

// How many chunks a plan of `plan_size` bytes has (none for an empty plan).
constexpr std::uint64_t plan_chunk_count(std::uint64_t plan_size) noexcept {
    return plan_size / kPlanChunkBytes + (plan_size % kPlanChunkBytes == 0 ? 0 : 1);
}

// The size of chunk `index` of a plan of `plan_size` bytes: kPlanChunkBytes, or less for the last.
constexpr std::uint64_t plan_chunk_size(std::uint64_t index, std::uint64_t plan_size) noexcept {
    std::uint64_t const first = index * kPlanChunkBytes;
    return first >= plan_size
               ? 0
               : (plan_size - first < kPlanChunkBytes ? plan_size - first : kPlanChunkBytes);
}

// The digests of every chunk, in order, as lowercase hex.
struct PlanChunks {
    std::vector<std::string> sha256;
    std::vector<std::string> xxh3_128;
    friend bool operator==(PlanChunks const&, PlanChunks const&) = default;
};

// Which digests a PlanChunkHasher computes.
struct ChunkDigestKinds {
    bool sha256 = true;
    bool xxh3_128 = true;
};

// The chunk digests of a plan given in pieces, in order, however it is split. Not copyable.
class PlanChunkHasher {
public:
    explicit PlanChunkHasher(ChunkDigestKinds kinds = {});
    ~PlanChunkHasher();
    PlanChunkHasher(PlanChunkHasher&&) noexcept;
    PlanChunkHasher& operator=(PlanChunkHasher&&) noexcept;
    PlanChunkHasher(PlanChunkHasher const&) = delete;
    PlanChunkHasher& operator=(PlanChunkHasher const&) = delete;

    void update(std::span<std::byte const> bytes);
    // The digests of every chunk given so far, the last one ended where the bytes end; the
    // hasher is spent afterwards. A kind not computed is an empty list.
    PlanChunks finish();

private:
    struct State;
    std::unique_ptr<State> state_;
};

// Both digests of each chunk of `plan`.
PlanChunks plan_chunks_of(std::span<std::byte const> plan);

// Where the chunk digests `observed` first differ from those the header records, for each kind
// that `kinds` names, as "chunk 3 (bytes 12582912 to 16777215 of the plan): SHA-256 <observed>,
// the header records <recorded>", or nothing when they agree. A list of another length is
// reported by its length, an empty one too: a kind named is compared, never skipped. Kinds not
// named are not looked at.
std::optional<std::string> chunk_difference(PlanChunks const& observed, PlanChunks const& recorded,
                                            std::uint64_t plan_size, ChunkDigestKinds kinds);

// The bytes of the plan chunk `index` covers in a plan of `plan_size` bytes: "bytes A to B".
std::string chunk_range_text(std::uint64_t index, std::uint64_t plan_size);

} // namespace tensoracle
