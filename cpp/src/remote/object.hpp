// The object a remote cache holds for one saved engine: the engine file's bytes exactly as the
// local store saves them, optionally followed by a signature trailer:
//
//   engine file (engine_file.hpp)   20 + H + plan_size bytes
//   signature                       64 bytes, Ed25519 over signed_statement(file name, engine)
//   magic "TSRCLSIG"                8 bytes
//
// The signed statement binds the signature to the entry's file name (which is the identity
// digest) and to every engine byte: a signature cannot be moved to another entry, and no byte of
// the header or plan can change under it. For an engine file of format version 2 it is over the
// SHA-256 of the preamble and header, which record the SHA-256 of every chunk of the plan
// (plan_chunks.hpp): a reader can check the signature before any plan byte, then each chunk as
// it hands it on. For version 1 it is over the SHA-256 of the whole file. (The XXH3-128
// checksums detect damage but are not cryptographic hashes, so they are not what binds.)
#pragma once

#include "cache/engine_file.hpp"
#include "cache/identity.hpp"
#include "remote/signature.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

inline constexpr std::array<char, 8> kSignatureMagic = {'T', 'S', 'R', 'C', 'L', 'S', 'I', 'G'};
inline constexpr std::size_t kSignatureTrailerBytes = kSignatureBytes + kSignatureMagic.size();

// Whether an object of `object_size` bytes whose last bytes are `tail` (at least the magic's 8)
// ends in a signature trailer; a listing can tell from two ranged reads, without the plan.
bool has_signature_trailer(std::uint64_t object_size, std::span<std::byte const> tail);

// The statement signed for `engine` as the entry `file_name`: for format version 2,
// signed_header_statement of its preamble and header's SHA-256, else signed_statement_of_digest
// of the whole engine's SHA-256.
std::string signed_statement(std::string_view file_name, std::span<std::byte const> engine);
// "tensoracle remote engine v1\n<file name>\n<SHA-256 hex of the engine bytes>" (format 1).
std::string signed_statement_of_digest(std::string_view file_name, std::string_view engine_sha256);
// "tensoracle remote engine v2\n<file name>\n<SHA-256 hex of the preamble and header>" (format
// 2, whose header records the SHA-256 of each plan chunk).
std::string signed_header_statement(std::string_view file_name, std::string_view prefix_sha256);

// The 72-byte trailer that signs `engine` as the entry `file_name`. A version 2 engine's chunk
// SHA-256 digests are checked against its plan first (CorruptEngineError naming the chunk): what
// the signature vouches for is what the plan holds.
std::vector<std::byte> signature_trailer(SigningKey const& key, std::string_view file_name,
                                         std::span<std::byte const> engine);

// For a signed version 2 engine whose header `decoded` the signature accepted: UntrustedEngineError
// naming `object_name` and the first chunk whose SHA-256 (`observed`) is not the one the header
// records. Nothing for version 1 (its signature is over every byte).
void check_signed_chunks(PlanChunks const& observed, DecodedHeader const& decoded,
                         std::string_view object_name);
// The same, the whole engine file given in `engine`.
void check_chunk_sha256(std::span<std::byte const> engine, DecodedHeader const& decoded,
                        std::string_view object_name);

// A remote object that passed verification.
struct RemoteEngine {
    EngineIdentity identity;
    DecodedHeader decoded;
    std::size_t engine_bytes = 0; // the engine file's length: the object minus any trailer
    bool is_signed = false;
    std::optional<std::string> signer; // fingerprint of the verify key that accepted it
};

// Verifies a downloaded object named `object_name` (its key, for messages) holding the entry
// `file_name`. When `trusted` is set, the signature comes first: an object it does not accept is
// refused before any byte of its header is decoded. Then the engine file is checked exactly as
// Store::read checks a local one (format, header, plan checksum; conditions equal to
// `expected->conditions` when given, else the identity computed from the header's conditions must
// be the one named by `file_name`). Throws UntrustedEngineError when a verify key is configured
// and the object is unsigned or signed by another key, else CorruptEngineError or
// EngineConditionError naming the object.
RemoteEngine verify_remote_object(std::span<std::byte const> object, std::string_view object_name,
                                  std::string_view file_name, EngineIdentity const* expected,
                                  VerifyKey const* trusted);

// The signature check of verify_remote_object, for an object whose engine (the object less any
// trailer) has the SHA-256 `engine_sha256` (hex) and whose signature trailer is `trailer`, or
// empty when it has none. Returns the trusted key's fingerprint; throws UntrustedEngineError
// naming `object_name` when the object is unsigned or the key does not accept the signature.
std::string check_remote_signature(std::span<std::byte const> trailer,
                                   std::string_view engine_sha256, std::string_view object_name,
                                   std::string_view file_name, VerifyKey const& trusted);

// The check of check_remote_signature for a statement already made (signed_statement and its
// siblings).
std::string check_statement_signature(std::span<std::byte const> trailer,
                                      std::string_view statement, std::string_view object_name,
                                      VerifyKey const& trusted);

// The identity of the entry a verified object holds, as verify_remote_object finds it: `expected`
// when given, else the identity of the header's conditions; throws EngineConditionError (or
// CorruptEngineError, for conditions that have no identity) unless it is the entry `file_name`.
EngineIdentity remote_entry_identity(EngineHeader const& header, EngineIdentity const* expected,
                                     std::string_view object_name, std::string_view file_name);

// The checks a download makes before the rest of an object of `object_size` bytes is fetched, on
// its first bytes `prefix`. Returns how many bytes from the start it needs: the preamble's 20, then
// the preamble and the header. With all of them it decodes the header (bounded, as every header
// is), requires the object to hold exactly the engine it announces, with or without a signature
// trailer, and, when `expected` is given, the conditions asked for; then returns 0. With a verify
// key configured, call it with `header` false: only the preamble is judged, and the header waits
// for the signature (verify_remote_object). Throws CorruptEngineError or EngineConditionError.
std::uint64_t check_remote_prefix(std::span<std::byte const> prefix, std::uint64_t object_size,
                                  std::string_view object_name, EngineIdentity const* expected,
                                  bool header);

} // namespace tensoracle
