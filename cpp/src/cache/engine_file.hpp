// The saved-engine file format.
//
//   offset 0   8 bytes   magic "TSRCLENG"
//   offset 8   u32 LE    format version: 3 (kEncryptedFormatVersion), 2 (kEngineFormatVersion) or
//                        1 (kUnchunkedFormatVersion)
//   offset 12  u64 LE    header length H (1 .. kMaxHeaderBytes)
//   offset 20  H bytes   header: canonical JSON object (see EngineHeader)
//   offset 20+H          plan: exactly header.plan_size bytes, XXH3-128 = header.plan_xxh3_128
//
// The header JSON object has exactly these members:
//   "conditions": object   the identity conditions (what the file name digest is computed from)
//   "references": object   recorded facts outside the identity (workspace limit, shape-tensor
//                          outputs, IO signature, build targets, ...); never used for matching
//   "plan": {"size": integer >= 0, "xxh3_128": 32 lowercase hex digits (plan_checksum.hpp),
//            "chunks": {"sha256": [64 hex digits, ...], "xxh3_128": [32 hex digits, ...]}}
//          "chunks" in version 2 only, and there always: each chunk's digests (plan_chunks.hpp),
//          one per kPlanChunkBytes of the plan. Version 1 files (written before chunks existed)
//          are read as they are; their plan can only be checked whole.
//   "encryption": object   in version 3 only, and there always: the body holds the plan sealed
//                          (encryption/plan_sealing.hpp) for the recipients this member lists
//                          (encryption/plan_encryption.hpp). "plan" then describes the body as
//                          stored (its size, checksum and chunk digests are the sealed bytes'), so
//                          that every check without a key (verify, pull, signatures) works on it
//                          as on a plain plan; "encryption"."plan_size" is the plan's own size.
#pragma once

#include "cache/plan_chunks.hpp"
#include "encryption/plan_encryption.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tensoracle {

inline constexpr std::array<char, 8> kEngineMagic = {'T', 'S', 'R', 'C', 'L', 'E', 'N', 'G'};
// The version written for a header with chunk digests (every entry tensoracle saves now), and
// the one of headers without them (entries saved before); a reader takes both.
inline constexpr std::uint32_t kEngineFormatVersion = 2;
inline constexpr std::uint32_t kUnchunkedFormatVersion = 1;
// The version of a header whose body is the plan sealed for its recipients.
inline constexpr std::uint32_t kEncryptedFormatVersion = 3;

// Whether a file of format `version` records the digests of its body's chunks (2 and 3).
constexpr bool has_chunk_digests(std::uint32_t version) noexcept {
    return version == kEngineFormatVersion || version == kEncryptedFormatVersion;
}
inline constexpr std::uint64_t kEnginePreambleBytes = 20;
inline constexpr std::uint64_t kMaxHeaderBytes = 16ULL << 20;
// The most JSON values a header may hold (each scalar, array and object once), 2^18. What
// tensoracle writes holds far fewer: the conditions (a few dozen values plus a digest per weight
// file and plugin), the IO signature (about 30 values per tensor: name, mode, dtype, shape,
// profile), the targets and a rebuild reason (twice the conditions at most), so even a network
// of thousands of IO tensors stays well below it. Without the cap, 16 MiB of "[{},{},...]" makes
// 5.6 million values; with it a hostile header is refused after its first 768 KiB at most.
inline constexpr std::size_t kMaxHeaderValues = std::size_t{1} << 18;

struct EngineHeader {
    nlohmann::json conditions = nlohmann::json::object();
    nlohmann::json references = nlohmann::json::object();
    std::uint64_t plan_size = 0;
    std::string plan_xxh3_128;
    // The plan's chunk digests: present in version 2, absent in version 1.
    std::optional<PlanChunks> chunks = std::nullopt;
    // How the body seals the plan: present in version 3 (with chunks), absent before.
    std::optional<encryption::PlanEncryption> encryption = std::nullopt;
};

// Magic, version, length and canonical header JSON: the bytes that precede the plan. The version
// is 3 when the header has an encryption, else 2 when it has chunk digests, else 1.
std::vector<std::byte> encode_engine_prefix(EngineHeader const& header);

struct DecodedHeader {
    EngineHeader header;
    std::uint64_t plan_offset = 0;
    std::uint32_t format_version = kEngineFormatVersion;
    // canonical_json(header.conditions): the header's own text of its conditions.
    std::string conditions_json;
    // Where canonical_json(header.references) lies in the bytes decoded, counted from the file's
    // first byte: the header's own text of its references, to be read there without writing it.
    std::uint64_t references_offset = 0;
    std::uint64_t references_bytes = 0;
};

// How many bytes (preamble and header) to read from the start of an engine file so that
// decode_engine_header can judge it, from its first `preamble` bytes: the preamble plus the
// header length it announces, or only what was given when that length is not usable (too few
// bytes, 0, or beyond kMaxHeaderBytes; decode_engine_header then reports why).
std::uint64_t engine_prefix_bytes(std::span<std::byte const> preamble);

// Validates every field of the bytes at the start of a file of `file_size` bytes. `bytes` must
// hold at least the preamble and the header (fewer bytes = truncated file). Throws
// CorruptEngineError naming `path` and what is wrong; a newer format version is reported as such.
DecodedHeader decode_engine_header(std::span<std::byte const> bytes, std::uint64_t file_size,
                                   std::filesystem::path const& path);

// The format version the preamble at the start of `bytes` announces (0 for fewer than 20 bytes
// or another magic); nothing else is judged.
std::uint32_t engine_format_version(std::span<std::byte const> bytes) noexcept;

// The checks of the preamble alone (magic, version, header length within kMaxHeaderBytes and
// within `file_size`), on at least its first kEnginePreambleBytes bytes; returns the plan offset
// (preamble and header length). Throws CorruptEngineError as decode_engine_header does.
std::uint64_t check_engine_preamble(std::span<std::byte const> bytes, std::uint64_t file_size,
                                    std::filesystem::path const& path);

// Every check of decode_engine_header but the last (plan_size equal to what follows the header),
// for the first bytes of an object of `file_size` bytes that may hold more than the engine (a
// download that has not finished, or an object with a signature trailer).
DecodedHeader decode_engine_prefix(std::span<std::byte const> bytes, std::uint64_t file_size,
                                   std::filesystem::path const& path);

// Reads and validates only the header of the file at `path` (the plan body is not read).
DecodedHeader read_engine_header(std::filesystem::path const& path);

} // namespace tensoracle
