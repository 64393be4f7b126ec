// Sealing and opening the pieces of an encrypted plan (plan_sealing.hpp).
#include "encryption/plan_sealing.hpp"

#include "tensoracle/errors.hpp"

#include <algorithm>

namespace tensoracle::encryption {
namespace {

constexpr std::string_view kPieceAad = "tensoracle plan chunk v1";

Nonce piece_nonce(std::uint64_t index, bool last) {
    Nonce nonce{};
    for (std::size_t i = 0; i < 8; ++i) {
        nonce[i] = static_cast<std::byte>((index >> (8U * (7 - i))) & 0xFFU);
    }
    nonce[8] = last ? std::byte{1} : std::byte{0};
    return nonce;
}

} // namespace

void seal_piece(Key const& data_key, std::uint64_t index, bool last,
                std::span<std::byte const> plain, std::span<std::byte> sealed) {
    seal(data_key, piece_nonce(index, last), kPieceAad, plain, sealed);
}

bool open_piece(Key const& data_key, std::uint64_t index, bool last,
                std::span<std::byte const> sealed, std::span<std::byte> plain) {
    return open(data_key, piece_nonce(index, last), kPieceAad, sealed, plain);
}

void for_each_sealed_chunk(Key const& data_key, std::span<std::byte const> plan,
                           std::function<void(std::span<std::byte const>)> const& each) {
    std::uint64_t const count = sealed_piece_count(plan.size());
    std::vector<std::byte> chunk(static_cast<std::size_t>(
        std::min<std::uint64_t>(sealed_body_size(plan.size()), kPlanChunkBytes)));
    for (std::uint64_t index = 0; index < count; ++index) {
        auto const piece =
            plan.subspan(static_cast<std::size_t>(index * kSealedPieceBytes),
                         static_cast<std::size_t>(sealed_piece_size(index, plan.size())));
        auto const sealed = std::span(chunk).first(piece.size() + kTagBytes);
        seal_piece(data_key, index, index + 1 == count, piece, sealed);
        each(sealed);
    }
}

std::vector<std::byte> seal_plan(Key const& data_key, std::span<std::byte const> plan) {
    std::vector<std::byte> body;
    body.reserve(static_cast<std::size_t>(sealed_body_size(plan.size())));
    for_each_sealed_chunk(data_key, plan, [&body](std::span<std::byte const> chunk) {
        body.insert(body.end(), chunk.begin(), chunk.end());
    });
    return body;
}

void open_sealed_chunk(Key const& data_key, std::uint64_t index, std::uint64_t plan_size,
                       std::span<std::byte const> sealed, std::span<std::byte> plain,
                       std::filesystem::path const& path) {
    std::uint64_t const count = sealed_piece_count(plan_size);
    if (index >= count || sealed.size() != sealed_piece_size(index, plan_size) + kTagBytes ||
        plain.size() + kTagBytes != sealed.size()) {
        throw std::logic_error("open_sealed_chunk: a chunk of another size");
    }
    if (!open_piece(data_key, index, index + 1 == count, sealed, plain)) {
        std::string const field = "plan.chunks[" + std::to_string(index) + "]";
        throw CorruptEngineError(
            "encrypted engine '" + path.string() + "' is unusable: chunk " + std::to_string(index) +
                " of its sealed plan does not authenticate under its "
                "data key: it was changed, moved or cut short, and nothing of it was handed on",
            Refusal{.subject = path.string(),
                    .field = field,
                    .observed = "does not authenticate",
                    .expected = "the chunk sealed as piece " + std::to_string(index) + " of " +
                                std::to_string(count),
                    .remedy = "fetch the engine again"});
    }
}

std::vector<std::byte> open_plan(Key const& data_key, std::uint64_t plan_size,
                                 std::span<std::byte const> body,
                                 std::filesystem::path const& path) {
    if (!is_sealed_body_size(body.size(), plan_size)) {
        throw CorruptEngineError("encrypted engine '" + path.string() +
                                     "' is unusable: its body "
                                     "holds " +
                                     std::to_string(body.size()) + " bytes, a plan of " +
                                     std::to_string(plan_size) + " bytes is sealed in " +
                                     std::to_string(sealed_body_size(plan_size)),
                                 path);
    }
    std::vector<std::byte> plan(static_cast<std::size_t>(plan_size));
    std::uint64_t const count = sealed_piece_count(plan_size);
    for (std::uint64_t index = 0; index < count; ++index) {
        auto const size = static_cast<std::size_t>(sealed_piece_size(index, plan_size));
        open_sealed_chunk(
            data_key, index, plan_size,
            body.subspan(static_cast<std::size_t>(index * kPlanChunkBytes), size + kTagBytes),
            std::span(plan).subspan(static_cast<std::size_t>(index * kSealedPieceBytes), size),
            path);
    }
    return plan;
}

} // namespace tensoracle::encryption
