// Remote objects: verified like local engine files, then signatures bound to the entry name.
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "io/hash.hpp"
#include "remote/object.hpp"
#include "support/error_message.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <cstring>
#include <gtest/gtest.h>

namespace tensoracle {
namespace {

constexpr std::string_view kObject = "s3://bucket/fleet/engines/entry.engine";

struct Entry {
    EngineIdentity identity;
    std::vector<std::byte> engine;
};

Entry make_entry(std::string const& name, std::size_t plan_size = 4096) {
    Entry entry;
    entry.identity = make_identity({{"name", name}, {"graph_version", "1"}});
    EngineHeader header;
    header.conditions = entry.identity.conditions;
    header.references = {{"workspace_limit", nullptr}};
    auto const plan = testing::random_bytes(plan_size, 7);
    header.plan_size = plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(plan);
    header.chunks = plan_chunks_of(plan); // format version 2, as Store::save writes
    entry.engine = encode_engine_prefix(header);
    entry.engine.insert(entry.engine.end(), plan.begin(), plan.end());
    return entry;
}

std::vector<std::byte> signed_object(Entry const& entry, SigningKey const& key) {
    auto object = entry.engine;
    auto const trailer = signature_trailer(key, entry.identity.file_name, entry.engine);
    object.insert(object.end(), trailer.begin(), trailer.end());
    return object;
}

using testing::message_of;

struct Keys {
    SigningKey signing = SigningKey::from_pem(testing::new_private_key_pem(), "signing");
    VerifyKey trusted = VerifyKey::from_pem(signing.public_key_pem(), "verify");
    SigningKey stranger = SigningKey::from_pem(testing::new_private_key_pem(), "stranger");
};

TEST(RemoteObject, UnsignedEngineVerifiesLikeALocalFileWhenNoKeyIsTrusted) {
    Entry const entry = make_entry("model");
    RemoteEngine const verified = verify_remote_object(
        entry.engine, kObject, entry.identity.file_name, &entry.identity, nullptr);
    EXPECT_FALSE(verified.is_signed);
    EXPECT_EQ(verified.engine_bytes, entry.engine.size());
    EXPECT_EQ(verified.decoded.header.plan_size, 4096U);
}

TEST(RemoteObject, SignedEngineVerifiesWithTheTrustedKey) {
    Keys const keys;
    Entry const entry = make_entry("model");
    auto const object = signed_object(entry, keys.signing);
    ASSERT_EQ(object.size(), entry.engine.size() + kSignatureTrailerBytes);
    RemoteEngine const verified = verify_remote_object(object, kObject, entry.identity.file_name,
                                                       &entry.identity, &keys.trusted);
    EXPECT_TRUE(verified.is_signed);
    EXPECT_EQ(verified.engine_bytes, entry.engine.size());
    EXPECT_EQ(verified.signer, keys.trusted.fingerprint());
}

TEST(RemoteObject, ATrailerIsToldFromTheSizeAndTheLastBytes) {
    Keys const keys;
    Entry const entry = make_entry("model");
    auto const object = signed_object(entry, keys.signing);
    auto const tail = std::span(object).last(kSignatureMagic.size());
    EXPECT_TRUE(has_signature_trailer(object.size(), tail));
    EXPECT_TRUE(has_signature_trailer(object.size(), object));
    EXPECT_FALSE(has_signature_trailer(entry.engine.size(),
                                       std::span(entry.engine).last(kSignatureMagic.size())));
    // Too small to hold a preamble and a trailer, or too few tail bytes to hold the magic.
    EXPECT_FALSE(has_signature_trailer(kEnginePreambleBytes + kSignatureTrailerBytes - 1, tail));
    EXPECT_TRUE(has_signature_trailer(kEnginePreambleBytes + kSignatureTrailerBytes, tail));
    EXPECT_FALSE(has_signature_trailer(object.size(), tail.last(7)));
}

TEST(RemoteObject, UnsignedOrForeignSignaturesAreRefusedNamingTheObject) {
    Keys const keys;
    Entry const entry = make_entry("model");
    auto const& name = entry.identity.file_name;
    std::string const unsigned_message = message_of<UntrustedEngineError>(
        [&] { verify_remote_object(entry.engine, kObject, name, &entry.identity, &keys.trusted); });
    EXPECT_NE(unsigned_message.find(kObject), std::string::npos) << unsigned_message;
    EXPECT_NE(unsigned_message.find("not signed"), std::string::npos) << unsigned_message;

    auto const foreign = signed_object(entry, keys.stranger);
    std::string const foreign_message = message_of<UntrustedEngineError>(
        [&] { verify_remote_object(foreign, kObject, name, &entry.identity, &keys.trusted); });
    EXPECT_NE(foreign_message.find(kObject), std::string::npos);
    EXPECT_NE(foreign_message.find(keys.trusted.fingerprint()), std::string::npos);

    auto damaged_signature = signed_object(entry, keys.signing);
    damaged_signature[entry.engine.size() + 3] ^= std::byte{0x40};
    EXPECT_THROW(
        verify_remote_object(damaged_signature, kObject, name, &entry.identity, &keys.trusted),
        UntrustedEngineError);
}

TEST(RemoteObject, ASignatureCannotBeMovedToAnotherEntry) {
    Keys const keys;
    Entry const first = make_entry("first");
    Entry const second = make_entry("second");
    // The second engine carrying a trailer made for the first entry's name.
    auto object = second.engine;
    auto const trailer = signature_trailer(keys.signing, first.identity.file_name, second.engine);
    object.insert(object.end(), trailer.begin(), trailer.end());
    EXPECT_THROW(verify_remote_object(object, kObject, second.identity.file_name, &second.identity,
                                      &keys.trusted),
                 UntrustedEngineError);
}

TEST(RemoteObject, DamagedOrTruncatedObjectsAreCorruptWithoutAKey) {
    Keys const keys;
    Entry const entry = make_entry("model");
    auto const& name = entry.identity.file_name;
    auto flipped = signed_object(entry, keys.signing);
    flipped[entry.engine.size() - 100] ^= std::byte{1};
    std::string const message = message_of<CorruptEngineError>(
        [&] { verify_remote_object(flipped, kObject, name, &entry.identity, nullptr); });
    EXPECT_NE(message.find(kObject), std::string::npos) << message;
    EXPECT_NE(message.find("checksum"), std::string::npos) << message;

    auto const truncated = std::span(entry.engine).first(entry.engine.size() - 1000);
    std::string const short_message = message_of<CorruptEngineError>(
        [&] { verify_remote_object(truncated, kObject, name, &entry.identity, nullptr); });
    EXPECT_NE(short_message.find("truncated"), std::string::npos) << short_message;
    EXPECT_THROW(verify_remote_object({}, kObject, name, &entry.identity, nullptr),
                 CorruptEngineError);
}

// Where a verify key is configured the signature is checked first: a changed byte or a cut
// object is refused as untrusted; a changed plan byte of a version 2 object (whose signature is
// over the header) by the chunk digest the signed header records.
TEST(RemoteObject, DamagedOrTruncatedObjectsAreUntrustedWithAKey) {
    Keys const keys;
    Entry const entry = make_entry("model");
    auto const& name = entry.identity.file_name;
    auto flipped = signed_object(entry, keys.signing);
    flipped[entry.engine.size() - 100] ^= std::byte{1};
    std::string const message = message_of<UntrustedEngineError>(
        [&] { verify_remote_object(flipped, kObject, name, &entry.identity, &keys.trusted); });
    EXPECT_NE(message.find("does not hold what its signature vouches for: chunk 0 (bytes 0 to "
                           "4095 of the plan)"),
              std::string::npos)
        << message;
    auto header_flipped = signed_object(entry, keys.signing);
    header_flipped[30] ^= std::byte{1};
    std::string const header_message = message_of<UntrustedEngineError>([&] {
        verify_remote_object(header_flipped, kObject, name, &entry.identity, &keys.trusted);
    });
    EXPECT_NE(header_message.find("does not accept"), std::string::npos) << header_message;
    auto const truncated = std::span(entry.engine).first(entry.engine.size() - 1000);
    EXPECT_THROW(verify_remote_object(truncated, kObject, name, &entry.identity, &keys.trusted),
                 UntrustedEngineError);
    EXPECT_THROW(verify_remote_object({}, kObject, name, &entry.identity, &keys.trusted),
                 UntrustedEngineError);
}

// An unsigned object whose header would be refused by the decoder (here: nested far beyond the
// JSON depth limit) is refused as unsigned: the decoder never sees what an untrusted writer put.
TEST(RemoteObject, AnUnsignedObjectIsRefusedBeforeItsHeaderIsDecoded) {
    Keys const keys;
    Entry const entry = make_entry("model");
    std::string header = R"({"conditions":{"name":"model","x":)";
    header += std::string(20'000, '[') + std::string(20'000, ']') + "}}";
    std::vector<std::byte> object;
    for (char const c : kEngineMagic) {
        object.push_back(static_cast<std::byte>(c));
    }
    object.resize(20);
    object[8] = std::byte{1};
    for (std::size_t i = 0; i < 8; ++i) {
        object[12 + i] = static_cast<std::byte>((header.size() >> (8 * i)) & 0xFFU);
    }
    for (char const c : header) {
        object.push_back(static_cast<std::byte>(c));
    }
    std::string const untrusted = message_of<UntrustedEngineError>([&] {
        verify_remote_object(object, kObject, entry.identity.file_name, nullptr, &keys.trusted);
    });
    EXPECT_NE(untrusted.find("is not signed"), std::string::npos) << untrusted;
    // Without a key the same object is decoded, and refused for its depth.
    std::string const corrupt = message_of<CorruptEngineError>(
        [&] { verify_remote_object(object, kObject, entry.identity.file_name, nullptr, nullptr); });
    EXPECT_NE(corrupt.find("deeper than the limit of 64"), std::string::npos) << corrupt;
}

// Engine format 1 (no chunk digests: entries published before format 2), signed as they were
// then: over the entry's file name and the SHA-256 of the whole engine.

Entry make_format_1_entry(std::string const& name, std::size_t plan_size = 4096) {
    Entry entry = make_entry(name, plan_size);
    DecodedHeader decoded = decode_engine_header(entry.engine, entry.engine.size(), "v2");
    EngineHeader header = std::move(decoded.header);
    header.chunks = std::nullopt;
    std::vector<std::byte> engine = encode_engine_prefix(header);
    engine.insert(engine.end(),
                  entry.engine.begin() + static_cast<std::ptrdiff_t>(decoded.plan_offset),
                  entry.engine.end());
    entry.engine = std::move(engine);
    return entry;
}

// `engine` followed by the trailer of `key`'s signature of `statement`, made by hand.
std::vector<std::byte> signed_with_statement(std::vector<std::byte> engine,
                                             std::string const& statement, SigningKey const& key) {
    Signature const signature = key.sign(std::as_bytes(std::span(statement)));
    auto const* const bytes = signature.data();
    engine.insert(engine.end(), bytes, bytes + signature.size());
    for (char const c : kSignatureMagic) {
        engine.push_back(static_cast<std::byte>(c));
    }
    return engine;
}

std::string prefix_sha256(std::vector<std::byte> const& engine) {
    return sha256_hex(
        std::span(engine).first(static_cast<std::size_t>(engine_prefix_bytes(engine))));
}

TEST(RemoteObject, TheStatementSignedIsV1OverTheWholeFileForFormat1AndV2OverTheHeaderForFormat2) {
    Entry const v1 = make_format_1_entry("model");
    Entry const v2 = make_entry("model");
    std::string const& name = v1.identity.file_name;
    ASSERT_EQ(engine_format_version(v1.engine), 1U);
    ASSERT_EQ(engine_format_version(v2.engine), 2U);
    EXPECT_EQ(signed_statement(name, v1.engine),
              signed_statement_of_digest(name, sha256_hex(v1.engine)));
    EXPECT_EQ(signed_statement_of_digest(name, sha256_hex(v1.engine)),
              "tensoracle remote engine v1\n" + name + "\n" + sha256_hex(v1.engine));
    EXPECT_EQ(signed_statement(name, v2.engine),
              signed_header_statement(name, prefix_sha256(v2.engine)));
    EXPECT_EQ(signed_header_statement(name, prefix_sha256(v2.engine)),
              "tensoracle remote engine v2\n" + name + "\n" + prefix_sha256(v2.engine));
    // signature_trailer signs each with its own statement.
    Keys const keys;
    EXPECT_EQ(signed_object(v1, keys.signing),
              signed_with_statement(v1.engine,
                                    signed_statement_of_digest(name, sha256_hex(v1.engine)),
                                    keys.signing));
    EXPECT_EQ(signed_object(v2, keys.signing),
              signed_with_statement(v2.engine,
                                    signed_header_statement(name, prefix_sha256(v2.engine)),
                                    keys.signing));
}

TEST(RemoteObject, AFormat1ObjectSignedWithTheV1StatementStillVerifies) {
    Keys const keys;
    Entry const entry = make_format_1_entry("model");
    std::string const& name = entry.identity.file_name;
    auto const object = signed_with_statement(
        entry.engine, "tensoracle remote engine v1\n" + name + "\n" + sha256_hex(entry.engine),
        keys.signing);
    RemoteEngine const verified =
        verify_remote_object(object, kObject, name, &entry.identity, &keys.trusted);
    EXPECT_TRUE(verified.is_signed);
    EXPECT_EQ(verified.signer, keys.trusted.fingerprint());
    EXPECT_EQ(verified.engine_bytes, entry.engine.size());
    EXPECT_EQ(verified.decoded.format_version, 1U);
    EXPECT_FALSE(verified.decoded.header.chunks.has_value());
    EXPECT_EQ(verified.decoded.header.plan_size, 4096U);
    // Without a key it verifies as any unsigned engine file.
    EXPECT_FALSE(verify_remote_object(object, kObject, name, &entry.identity, nullptr).signer);
}

// A format 1 signature is over every byte: a changed plan byte is refused by the signature.
TEST(RemoteObject, AFormat1ObjectWithAChangedPlanByteIsRefusedByItsSignature) {
    Keys const keys;
    Entry const entry = make_format_1_entry("model");
    std::string const& name = entry.identity.file_name;
    auto changed = signed_object(entry, keys.signing);
    changed[entry.engine.size() - 100] ^= std::byte{1};
    std::string const message = message_of<UntrustedEngineError>(
        [&] { verify_remote_object(changed, kObject, name, &entry.identity, &keys.trusted); });
    EXPECT_NE(message.find("does not accept"), std::string::npos) << message;
}

// A signature cannot be carried from one format's statement to the other's: a format 2 object
// signed with the v1 statement, or a format 1 object with a v2 statement over its header (which
// would leave its plan unbound), is refused.
TEST(RemoteObject, ASignatureOverTheOtherFormatsStatementIsRefused) {
    Keys const keys;
    Entry const v1 = make_format_1_entry("model");
    Entry const v2 = make_entry("model");
    std::string const& name = v1.identity.file_name;
    auto const v2_with_v1_statement = signed_with_statement(
        v2.engine, signed_statement_of_digest(name, sha256_hex(v2.engine)), keys.signing);
    std::string const v2_message = message_of<UntrustedEngineError>([&] {
        verify_remote_object(v2_with_v1_statement, kObject, name, &v2.identity, &keys.trusted);
    });
    EXPECT_NE(v2_message.find("does not accept"), std::string::npos) << v2_message;
    auto const v1_with_v2_statement = signed_with_statement(
        v1.engine, signed_header_statement(name, prefix_sha256(v1.engine)), keys.signing);
    std::string const v1_message = message_of<UntrustedEngineError>([&] {
        verify_remote_object(v1_with_v2_statement, kObject, name, &v1.identity, &keys.trusted);
    });
    EXPECT_NE(v1_message.find("does not accept"), std::string::npos) << v1_message;
}

TEST(RemoteObject, ConditionsAndNamesMustMatch) {
    Entry const entry = make_entry("model");
    Entry const other = make_entry("other");
    // The object of another identity stored under this entry's name.
    EXPECT_THROW(verify_remote_object(other.engine, kObject, entry.identity.file_name,
                                      &entry.identity, nullptr),
                 EngineConditionError);
    // Without an expected identity (a pull by name) the header must hash to the name.
    RemoteEngine const by_name =
        verify_remote_object(entry.engine, kObject, entry.identity.file_name, nullptr, nullptr);
    EXPECT_EQ(by_name.identity.file_name, entry.identity.file_name);
    EXPECT_THROW(
        verify_remote_object(other.engine, kObject, entry.identity.file_name, nullptr, nullptr),
        EngineConditionError);
}

} // namespace
} // namespace tensoracle
