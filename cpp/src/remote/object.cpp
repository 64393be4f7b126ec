// Signing and verifying the objects of a remote engine cache (see remote/object.hpp).
#include "remote/object.hpp"

#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <algorithm>
#include <cstring>

namespace tensoracle {

void check_signed_chunks(PlanChunks const& observed, DecodedHeader const& decoded,
                         std::string_view object_name) {
    if (!decoded.header.chunks) {
        return;
    }
    if (auto const difference =
            chunk_difference(observed, *decoded.header.chunks, decoded.header.plan_size,
                             {.sha256 = true, .xxh3_128 = false})) {
        throw UntrustedEngineError("remote engine '" + std::string(object_name) +
                                       "' does not hold what its signature vouches for: " +
                                       *difference + " (changed after signing)",
                                   std::filesystem::path(std::string(object_name)));
    }
}

void check_chunk_sha256(std::span<std::byte const> engine, DecodedHeader const& decoded,
                        std::string_view object_name) {
    if (!decoded.header.chunks) {
        return;
    }
    PlanChunkHasher hasher({.sha256 = true, .xxh3_128 = false});
    hasher.update(engine.subspan(static_cast<std::size_t>(decoded.plan_offset)));
    check_signed_chunks(hasher.finish(), decoded, object_name);
}

bool has_signature_trailer(std::uint64_t object_size, std::span<std::byte const> tail) {
    if (object_size < kEnginePreambleBytes + kSignatureTrailerBytes ||
        tail.size() < kSignatureMagic.size()) {
        return false;
    }
    auto const magic = tail.last(kSignatureMagic.size());
    return std::memcmp(magic.data(), kSignatureMagic.data(), kSignatureMagic.size()) == 0;
}

std::string signed_statement(std::string_view file_name, std::span<std::byte const> engine) {
    if (has_chunk_digests(engine_format_version(engine))) {
        std::uint64_t const prefix = engine_prefix_bytes(engine);
        return signed_header_statement(file_name,
                                       sha256_hex(engine.first(static_cast<std::size_t>(
                                           std::min<std::uint64_t>(prefix, engine.size())))));
    }
    return signed_statement_of_digest(file_name, sha256_hex(engine));
}

namespace {

// "<title>\n<file name>\n<digest>".
std::string statement_of(std::string_view title, std::string_view file_name,
                         std::string_view digest) {
    std::string statement(title);
    statement += '\n';
    statement += file_name;
    statement += '\n';
    statement += digest;
    return statement;
}

} // namespace

std::string signed_header_statement(std::string_view file_name, std::string_view prefix_sha256) {
    return statement_of("tensoracle remote engine v2", file_name, prefix_sha256);
}

std::string signed_statement_of_digest(std::string_view file_name, std::string_view engine_sha256) {
    return statement_of("tensoracle remote engine v1", file_name, engine_sha256);
}

std::vector<std::byte> signature_trailer(SigningKey const& key, std::string_view file_name,
                                         std::span<std::byte const> engine) {
    if (has_chunk_digests(engine_format_version(engine))) {
        // What the signature vouches for is what the plan holds.
        std::filesystem::path const label{std::string(file_name)};
        DecodedHeader const decoded = decode_engine_header(engine, engine.size(), label);
        auto const plan = engine.subspan(static_cast<std::size_t>(decoded.plan_offset));
        if (auto const difference = chunk_difference(plan_chunks_of(plan), *decoded.header.chunks,
                                                     decoded.header.plan_size, {})) {
            throw CorruptEngineError(
                "engine '" + std::string(file_name) + "' is not signed: " + *difference, label);
        }
    }
    std::string const statement = signed_statement(file_name, engine);
    Signature const signature = key.sign(std::as_bytes(std::span(statement)));
    std::vector<std::byte> trailer(kSignatureTrailerBytes);
    std::memcpy(trailer.data(), signature.data(), signature.size());
    std::memcpy(trailer.data() + signature.size(), kSignatureMagic.data(), kSignatureMagic.size());
    return trailer;
}

std::string check_remote_signature(std::span<std::byte const> trailer,
                                   std::string_view engine_sha256, std::string_view object_name,
                                   std::string_view file_name, VerifyKey const& trusted) {
    return check_statement_signature(trailer, signed_statement_of_digest(file_name, engine_sha256),
                                     object_name, trusted);
}

std::string check_statement_signature(std::span<std::byte const> trailer,
                                      std::string_view statement, std::string_view object_name,
                                      VerifyKey const& trusted) {
    std::filesystem::path const label{std::string(object_name)};
    if (trailer.empty()) {
        throw UntrustedEngineError(
            "remote engine '" + std::string(object_name) +
                "' is not signed, and this node trusts only engines "
                "signed by the key " +
                trusted.fingerprint(),
            Refusal{.subject = label.string(),
                    .field = "signature",
                    .observed = "none",
                    .expected = "a signature by the key " + trusted.fingerprint()});
    }
    if (trailer.size() != kSignatureTrailerBytes) {
        throw InvalidArgument("check_remote_signature: a trailer of " +
                              std::to_string(trailer.size()) + " bytes, not " +
                              std::to_string(kSignatureTrailerBytes));
    }
    Signature signature{};
    std::memcpy(signature.data(), trailer.data(), signature.size());
    if (!trusted.verify(std::as_bytes(std::span(statement)), signature)) {
        throw UntrustedEngineError(
            "remote engine '" + std::string(object_name) +
                "' has a signature that the trusted key " + trusted.fingerprint() +
                " does not accept (signed by another key, or changed "
                "after signing)",
            Refusal{.subject = label.string(),
                    .field = "signature",
                    .observed = "a signature the key does not accept",
                    .expected = "a signature by the key " + trusted.fingerprint()});
    }
    return trusted.fingerprint();
}

EngineIdentity remote_entry_identity(EngineHeader const& header, EngineIdentity const* expected,
                                     std::string_view object_name, std::string_view file_name) {
    std::filesystem::path const label{std::string(object_name)};
    EngineIdentity identity;
    if (expected != nullptr) {
        identity = *expected;
    } else {
        // No identity asked for (a pull by name): the header's conditions must hash to the name.
        try {
            identity = recorded_identity(header.conditions);
        } catch (InvalidArgument const& error) {
            throw CorruptEngineError("remote engine '" + std::string(object_name) +
                                         "' is unusable: its conditions have no identity (" +
                                         error.what() + ")",
                                     label);
        }
    }
    if (identity.file_name != file_name) {
        throw EngineConditionError(
            "remote engine '" + std::string(object_name) +
                "' is unusable: its header's conditions belong to the "
                "entry '" +
                identity.file_name + "', not '" + std::string(file_name) + "'",
            Refusal{.subject = label.string(),
                    .field = "conditions",
                    .observed = "the conditions of '" + identity.file_name + "'",
                    .expected = "the conditions of '" + std::string(file_name) + "'"});
    }
    return identity;
}

RemoteEngine verify_remote_object(std::span<std::byte const> object, std::string_view object_name,
                                  std::string_view file_name, EngineIdentity const* expected,
                                  VerifyKey const* trusted) {
    std::filesystem::path const label{std::string(object_name)};
    bool const is_signed = has_signature_trailer(object.size(), object);
    auto const engine = is_signed ? object.first(object.size() - kSignatureTrailerBytes) : object;

    RemoteEngine result;
    result.engine_bytes = engine.size();
    result.is_signed = is_signed;
    if (trusted != nullptr) {
        auto const trailer = is_signed ? object.subspan(engine.size()) : object.first(0);
        result.signer = check_statement_signature(trailer, signed_statement(file_name, engine),
                                                  object_name, *trusted);
    }
    DecodedHeader const header = decode_engine_header(engine, engine.size(), label);
    if (trusted != nullptr) { // a version 2 signature vouches for the plan through its chunks
        check_chunk_sha256(engine, header, object_name);
    }
    result.identity = remote_entry_identity(header.header, expected, object_name, file_name);
    result.decoded = verify_engine_bytes(engine, result.identity, label);
    return result;
}

std::uint64_t check_remote_prefix(std::span<std::byte const> prefix, std::uint64_t object_size,
                                  std::string_view object_name, EngineIdentity const* expected,
                                  bool header) {
    std::filesystem::path const label{std::string(object_name)};
    auto const refuse = [&](std::string const& reason) {
        throw CorruptEngineError(
            "remote engine '" + std::string(object_name) + "' is unusable: " + reason, label);
    };
    if (object_size < kEnginePreambleBytes) {
        refuse("an object of " + std::to_string(object_size) + " bytes is shorter than the " +
               std::to_string(kEnginePreambleBytes) + "-byte preamble of an engine file");
    }
    if (prefix.size() < kEnginePreambleBytes) {
        return kEnginePreambleBytes;
    }
    std::uint64_t const needed =
        check_engine_preamble(prefix.first(kEnginePreambleBytes), object_size, label);
    if (!header) {
        return 0;
    }
    if (prefix.size() < needed) {
        return needed;
    }
    DecodedHeader const decoded = decode_engine_prefix(prefix.first(needed), object_size, label);
    std::uint64_t const engine = decoded.plan_offset + decoded.header.plan_size;
    bool const fits = decoded.header.plan_size <= object_size &&
                      (object_size == engine || object_size == engine + kSignatureTrailerBytes);
    if (!fits) {
        refuse(std::string(object_size < engine ? "truncated: " : "") +
               "its header announces an engine of " + std::to_string(engine) +
               " bytes (with a signature " + std::to_string(engine + kSignatureTrailerBytes) +
               "), but the object holds " + std::to_string(object_size));
    }
    if (expected != nullptr) {
        check_conditions(decoded.header.conditions, expected->conditions, label);
    }
    return 0;
}

} // namespace tensoracle
