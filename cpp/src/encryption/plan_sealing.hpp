// Private to the core: how the plan of an encrypted engine (format 3) is sealed. The plan is cut
// into pieces of kSealedPieceBytes (4 MiB less a tag; the last one shorter; an empty plan is one
// empty piece) and piece i is sealed with AES-256-GCM under the data key:
//   nonce = i as 8 bytes big-endian, then 1 for the last piece or 0 for any other, then 3 zero
//   bytes aad   = "tensoracle plan chunk v1"
// A sealed piece (its ciphertext, then its 16-byte tag) is one chunk of the stored body exactly
// (plan_chunks.hpp: every chunk but the last is kPlanChunkBytes), so the chunk digests the header
// records are the sealed pieces' and each chunk is authenticated and opened on its own, at any
// offset. A chunk moved to another place, a dropped or added last chunk, a body cut short (its
// last chunk no longer the one sealed as last) fail authentication; the data key is fresh for every
// encryption, so no nonce is used twice under one key.
#pragma once

#include "cache/plan_chunks.hpp"
#include "encryption/primitives.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

namespace tensoracle::encryption {

inline constexpr std::uint64_t kSealedPieceBytes = kPlanChunkBytes - kTagBytes;

// How many pieces a plan of `plan_size` bytes is sealed in (at least one).
constexpr std::uint64_t sealed_piece_count(std::uint64_t plan_size) noexcept {
    std::uint64_t const count =
        plan_size / kSealedPieceBytes + (plan_size % kSealedPieceBytes == 0 ? 0 : 1);
    return count == 0 ? 1 : count;
}

// The size of piece `index` of a plan of `plan_size` bytes (0 past the end, and for the one piece
// of an empty plan).
constexpr std::uint64_t sealed_piece_size(std::uint64_t index, std::uint64_t plan_size) noexcept {
    std::uint64_t const first = index * kSealedPieceBytes;
    return first >= plan_size
               ? 0
               : (plan_size - first < kSealedPieceBytes ? plan_size - first : kSealedPieceBytes);
}

// The size of the stored body of a plan of `plan_size` bytes: the plan and a tag per piece.
constexpr std::uint64_t sealed_body_size(std::uint64_t plan_size) noexcept {
    return plan_size + sealed_piece_count(plan_size) * kTagBytes;
}

// Whether a body of `body_size` bytes is what a plan of `plan_size` bytes is sealed in, judged
// without overflow (a header's plan_size may be anything up to 2^64 - 1).
constexpr bool is_sealed_body_size(std::uint64_t body_size, std::uint64_t plan_size) noexcept {
    return plan_size <= body_size && (body_size - plan_size) % kTagBytes == 0 &&
           (body_size - plan_size) / kTagBytes == sealed_piece_count(plan_size);
}

// Piece `index` (`last` when it is the plan's last) of `plain` sealed into `sealed`
// (plain.size() + kTagBytes bytes).
void seal_piece(Key const& data_key, std::uint64_t index, bool last,
                std::span<std::byte const> plain, std::span<std::byte> sealed);

// The reverse; false (and `plain` zeroed) when the chunk is not the piece sealed at `index` with
// this key and this `last`.
[[nodiscard]] bool open_piece(Key const& data_key, std::uint64_t index, bool last,
                              std::span<std::byte const> sealed, std::span<std::byte> plain);

// Each chunk of the body `plan` seals into under `data_key`, given to `each` in order; one chunk
// of memory whatever the plan's size. Sealing is deterministic (one key, one nonce per piece), so
// a writer can seal once for the header's digests and again to write the same bytes.
void for_each_sealed_chunk(Key const& data_key, std::span<std::byte const> plan,
                           std::function<void(std::span<std::byte const>)> const& each);

// The whole plan sealed: the body of an encrypted engine file.
std::vector<std::byte> seal_plan(Key const& data_key, std::span<std::byte const> plan);

// Chunk `index` of the sealed body of a plan of `plan_size` bytes opened into `plain` (its piece's
// size). Throws CorruptEngineError naming `path` and the chunk (field "plan.chunks[<index>]") when
// it does not authenticate, with `plain` zeroed: nothing of it is handed on.
void open_sealed_chunk(Key const& data_key, std::uint64_t index, std::uint64_t plan_size,
                       std::span<std::byte const> sealed, std::span<std::byte> plain,
                       std::filesystem::path const& path);

// The plan the whole sealed `body` holds (a plan of `plan_size` bytes), each chunk opened as
// open_sealed_chunk opens it; CorruptEngineError as it, or when the body is not the size a plan
// of `plan_size` bytes is sealed in.
std::vector<std::byte> open_plan(Key const& data_key, std::uint64_t plan_size,
                                 std::span<std::byte const> body,
                                 std::filesystem::path const& path);

} // namespace tensoracle::encryption
