// Encrypted engine files (format 3): the plan sealed chunk by chunk, the data key wrapped for
// recipients' X25519 keys, and every way a sealed body or a wrapped key can be changed refused.
#include "cache/engine_file.hpp"
#include "cache/plan_checksum.hpp"
#include "encryption/data_key.hpp"
#include "encryption/plan_encryption.hpp"
#include "encryption/plan_sealing.hpp"
#include "encryption/recipient_key.hpp"
#include "support/encryption_keys.hpp"
#include "support/error_message.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <cstring>
#include <gtest/gtest.h>

namespace tensoracle::encryption {
namespace {

using testing::message_of;

std::vector<std::byte> plan_of(std::size_t size) {
    return testing::random_bytes(size, 11);
}

bool has(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

TEST(PlanSealing, EveryPieceFillsOneChunkOfTheBodyAndOpensBackToThePlan) {
    for (std::uint64_t const size : {std::uint64_t{0}, std::uint64_t{1}, kSealedPieceBytes,
                                     kSealedPieceBytes + 1, 2 * kSealedPieceBytes + 5}) {
        auto const plan = plan_of(static_cast<std::size_t>(size));
        Key const key = fresh_data_key();
        auto const body = seal_plan(key, plan);
        ASSERT_EQ(body.size(), sealed_body_size(size)) << size;
        EXPECT_EQ(plan_chunk_count(body.size()), sealed_piece_count(size)) << size;
        EXPECT_EQ(open_plan(key, size, body, "plan"), plan) << size;
        if (size > 64) { // the body holds no plaintext
            EXPECT_EQ(std::search(body.begin(), body.end(), plan.begin(), plan.begin() + 64),
                      body.end());
        }
    }
}

TEST(PlanSealing, ABodySizeIsJudgedWithoutOverflow) {
    for (std::uint64_t const size :
         {std::uint64_t{0}, std::uint64_t{5}, kSealedPieceBytes, 3 * kSealedPieceBytes + 1}) {
        EXPECT_TRUE(is_sealed_body_size(sealed_body_size(size), size)) << size;
        EXPECT_FALSE(is_sealed_body_size(sealed_body_size(size) + 1, size)) << size;
        EXPECT_FALSE(is_sealed_body_size(sealed_body_size(size) - 16, size)) << size;
    }
    // A plan size whose sealed size wraps around 2^64 to 17 bytes is no plan of a 17-byte body.
    std::uint64_t const wrapping = 0xffffc00000000001ULL;
    ASSERT_EQ(sealed_body_size(wrapping), 17U);
    EXPECT_FALSE(is_sealed_body_size(17, wrapping));
}

TEST(PlanSealing, AChangedChunkIsRefusedNamingItAndNothingOfItIsLeft) {
    auto const plan = plan_of(static_cast<std::size_t>(kSealedPieceBytes + 100));
    Key const key = fresh_data_key();
    auto body = seal_plan(key, plan);
    body[static_cast<std::size_t>(kPlanChunkBytes) + 3] ^= std::byte{1};
    std::vector<std::byte> into(100, std::byte{0x55});
    try {
        open_sealed_chunk(key, 1, plan.size(), std::span(body).subspan(kPlanChunkBytes), into,
                          "e.engine");
        FAIL() << "a changed chunk was opened";
    } catch (CorruptEngineError const& error) {
        EXPECT_TRUE(has(error.what(), "chunk 1")) << error.what();
        EXPECT_EQ(error.refusal().field, "plan.chunks[1]");
    }
    EXPECT_EQ(into, std::vector<std::byte>(100)) << "the refused chunk's bytes were left";
    // The first chunk is intact and opens.
    std::vector<std::byte> first(static_cast<std::size_t>(kSealedPieceBytes));
    open_sealed_chunk(key, 0, plan.size(), std::span(body).first(kPlanChunkBytes), first, "e");
    EXPECT_TRUE(std::equal(first.begin(), first.end(), plan.begin()));
}

TEST(PlanSealing, MovedTruncatedOrExtendedChunksDoNotAuthenticate) {
    auto const plan = plan_of(static_cast<std::size_t>(3 * kSealedPieceBytes));
    Key const key = fresh_data_key();
    auto const body = seal_plan(key, plan);
    auto const chunk = [&](std::size_t index) {
        return std::span(body).subspan(index * kPlanChunkBytes, kPlanChunkBytes);
    };
    std::vector<std::byte> into(static_cast<std::size_t>(kSealedPieceBytes));
    // Chunk 0 where chunk 1 belongs (reordered).
    EXPECT_FALSE(open_piece(key, 1, false, chunk(0), into));
    // The plan cut after two chunks: chunk 1 is then the last, and was not sealed as last.
    EXPECT_THROW(
        open_plan(key, 2 * kSealedPieceBytes, std::span(body).first(2 * kPlanChunkBytes), "e"),
        CorruptEngineError);
    // The last chunk dropped and another appended in its place: chunk 1 sealed again as last.
    EXPECT_FALSE(open_piece(key, 2, true, chunk(1), into));
    // Under another data key nothing opens.
    EXPECT_FALSE(open_piece(fresh_data_key(), 0, false, chunk(0), into));
    EXPECT_TRUE(open_piece(key, 2, true, chunk(2), into));
}

TEST(DataKey, AnyRecipientUnwrapsItAndNoOtherKeyDoes) {
    testing::TemporaryDirectory folder;
    testing::KeyPair const alice(folder.path(), "alice");
    testing::KeyPair const bob(folder.path(), "bob");
    testing::KeyPair const eve(folder.path(), "eve");
    Key const data_key = fresh_data_key();
    std::vector<RecipientKey> const recipients = {RecipientKey::from_pem_file(alice.public_file),
                                                  RecipientKey::from_pem_file(bob.public_file)};
    PlanEncryption const sealing = encryption_for(data_key, 10, recipients);
    ASSERT_EQ(sealing.recipients.size(), 2U);
    EXPECT_LT(sealing.recipients[0].recipient, sealing.recipients[1].recipient);
    for (auto const* pair : {&alice, &bob}) {
        DecryptKey const key = DecryptKey::from_pem_file(pair->private_file);
        EXPECT_TRUE(open_data_key(sealing, key, "e.engine") == data_key);
    }
    DecryptKey const stranger = DecryptKey::from_pem_file(eve.private_file);
    try {
        (void)open_data_key(sealing, stranger, "e.engine");
        FAIL() << "another key opened the engine";
    } catch (EngineKeyError const& error) {
        EXPECT_TRUE(
            has(error.what(), "is not encrypted for key file '" + eve.private_file.string() + "'"))
            << error.what();
        EXPECT_TRUE(has(error.what(), sealing.recipients[0].recipient.substr(0, 16)))
            << error.what();
        EXPECT_EQ(error.refusal().field, "encryption.recipients");
        EXPECT_EQ(error.refusal().observed, eve.key.recipient().id());
    }
}

TEST(DataKey, AChangedWrappedKeyOrADifferentKeyPerRecipientIsRefused) {
    testing::TemporaryDirectory folder;
    testing::KeyPair const alice(folder.path(), "alice");
    Key const data_key = fresh_data_key();
    std::vector<RecipientKey> const recipients = {alice.key.recipient()};
    PlanEncryption sealing = encryption_for(data_key, 10, recipients);
    PlanEncryption changed = sealing;
    changed.recipients[0].wrapped[5] ^= std::byte{1};
    std::string message =
        message_of<EngineKeyError>([&] { (void)open_data_key(changed, alice.key, "e"); });
    EXPECT_TRUE(has(message, "does not authenticate")) << message;
    // Another data key wrapped for alice than the one the header commits to: refused, so that
    // every recipient reads the same plan.
    changed = encryption_for(fresh_data_key(), 10, recipients);
    changed.key_commitment = sealing.key_commitment;
    message = message_of<EngineKeyError>([&] { (void)open_data_key(changed, alice.key, "e"); });
    EXPECT_TRUE(has(message, "not the one the header commits to")) << message;
}

TEST(RecipientKey, KeysAreReadFromOpenSslPemAndAnythingElseIsRefusedNamingTheFile) {
    testing::TemporaryDirectory folder;
    testing::KeyPair const alice(folder.path(), "alice");
    EXPECT_TRUE(DecryptKey::from_pem_file(alice.private_file).recipient().raw() ==
                alice.key.recipient().raw());
    EXPECT_EQ(RecipientKey::from_pem_file(alice.public_file).id(), alice.key.recipient().id());
    // A private key where a public one belongs, the reverse, and an Ed25519 key.
    std::string message =
        message_of<InvalidArgument>([&] { (void)RecipientKey::from_pem_file(alice.private_file); });
    EXPECT_TRUE(has(message, alice.private_file.string()) && has(message, "X25519 public key"))
        << message;
    message =
        message_of<InvalidArgument>([&] { (void)DecryptKey::from_pem_file(alice.public_file); });
    EXPECT_TRUE(has(message, "X25519 private key")) << message;
    message = message_of<InvalidArgument>(
        [&] { (void)DecryptKey::from_pem(testing::new_private_key_pem(), "the signing key"); });
    EXPECT_TRUE(has(message, "the signing key") && has(message, "X25519 private key")) << message;
}

EngineHeader sealed_header(std::vector<std::byte> const& body, PlanEncryption const& sealing) {
    EngineHeader header;
    header.conditions = {{"name", "encoder"}};
    header.plan_size = body.size();
    header.plan_xxh3_128 = plan_checksum_hex(body);
    header.chunks = plan_chunks_of(body);
    header.encryption = sealing;
    return header;
}

TEST(EncryptedEngineFile, AFormatThreeHeaderRoundTripsAndItsEncryptionIsChecked) {
    testing::TemporaryDirectory folder;
    testing::KeyPair const alice(folder.path(), "alice");
    auto const plan = plan_of(5000);
    Key const data_key = fresh_data_key();
    auto const body = seal_plan(data_key, plan);
    std::vector<RecipientKey> const recipients = {alice.key.recipient()};
    EngineHeader const header =
        sealed_header(body, encryption_for(data_key, plan.size(), recipients));
    auto bytes = encode_engine_prefix(header);
    EXPECT_EQ(engine_format_version(bytes), kEncryptedFormatVersion);
    bytes.insert(bytes.end(), body.begin(), body.end());
    DecodedHeader const decoded = decode_engine_header(bytes, bytes.size(), "e.engine");
    ASSERT_TRUE(decoded.header.encryption.has_value());
    EXPECT_EQ(decoded.header.encryption->plan_size, plan.size());
    EXPECT_TRUE(open_data_key(*decoded.header.encryption, alice.key, "e") == data_key);

    // Another cipher, and a plan size the body does not hold, are refused by field.
    auto file_of = [&](auto change) {
        nlohmann::json json = {
            {"conditions", header.conditions},
            {"encryption", encryption_json(*header.encryption)},
            {"plan",
             {{"chunks",
               {{"sha256", header.chunks->sha256}, {"xxh3_128", header.chunks->xxh3_128}}},
              {"size", header.plan_size},
              {"xxh3_128", header.plan_xxh3_128}}},
            {"references", nlohmann::json::object()}};
        change(json);
        std::string const text = json.dump();
        std::vector<std::byte> file(bytes.begin(), bytes.begin() + 12);
        for (std::size_t i = 0; i < 8; ++i) {
            file.push_back(static_cast<std::byte>((text.size() >> (8 * i)) & 0xFFU));
        }
        for (char const c : text) {
            file.push_back(static_cast<std::byte>(c));
        }
        file.insert(file.end(), body.begin(), body.end());
        return file;
    };
    auto refused = [&](auto change) {
        auto const file = file_of(change);
        return message_of<CorruptEngineError>(
            [&] { (void)decode_engine_header(file, file.size(), "e.engine"); });
    };
    auto const unchanged = file_of([](nlohmann::json&) {});
    EXPECT_NO_THROW((void)decode_engine_header(unchanged, unchanged.size(), "e.engine"));
    std::string message =
        refused([](nlohmann::json& json) { json["encryption"]["cipher"] = "chacha20"; });
    EXPECT_TRUE(has(message, "encryption.cipher") && has(message, "chacha20")) << message;
    message = refused([](nlohmann::json& json) { json["encryption"]["plan_size"] = 4000; });
    EXPECT_TRUE(has(message, "plan_size")) << message;
    message = refused([](nlohmann::json& json) { json.erase("encryption"); });
    EXPECT_TRUE(has(message, "encryption")) << message;
}

} // namespace
} // namespace tensoracle::encryption
