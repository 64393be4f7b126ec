// `tensoracle cache encrypt` and `cache decrypt` on a saved entry: sealed for recipients, their
// list changed without the body being touched, unsealed back to the same plan; refusals leave the
// entry as it was.
#include "cache/engine_file.hpp"
#include "cache/entry_details.hpp"
#include "cache/entry_encryption.hpp"
#include "cache/identity.hpp"
#include "cache/store.hpp"
#include "cache/verification.hpp"
#include "encryption/plan_encryption.hpp"
#include "support/deploy_fixture.hpp"
#include "support/encryption_keys.hpp"
#include "support/error_message.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace tensoracle {
namespace {

using testing::message_of;

struct SavedEntry {
    testing::TemporaryDirectory folder;
    std::vector<std::byte> plan = testing::random_bytes(5 << 20, 3); // two chunks
    EngineIdentity identity = recorded_identity(testing::encoder_conditions("1"));
    std::filesystem::path path;
    testing::KeyPair alice{folder.path(), "alice"};
    testing::KeyPair bob{folder.path(), "bob"};
    SavedEntry() { path = Store(folder.path()).save(identity, nlohmann::json::object(), plan); }

    std::vector<std::byte> body() const {
        auto const bytes = testing::read_all(path);
        auto const decoded = decode_engine_header(bytes, bytes.size(), path);
        return {bytes.begin() + static_cast<std::ptrdiff_t>(decoded.plan_offset), bytes.end()};
    }
};

bool has(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

TEST(EntryEncryption, AnEntryIsSealedForItsRecipientsAndDecryptsBackToItsPlan) {
    SavedEntry const saved;
    std::vector<encryption::RecipientKey> const add = {saved.alice.key.recipient()};
    EntryEncryption const done = encrypt_entry(saved.path, {add, {}}, nullptr);
    EXPECT_FALSE(done.was_encrypted);
    EXPECT_EQ(done.recipients, std::vector<std::string>{saved.alice.key.recipient().id()});
    DecodedHeader const header = read_engine_header(saved.path);
    EXPECT_EQ(header.format_version, kEncryptedFormatVersion);
    EXPECT_NE(saved.body(), saved.plan);
    // `cache show` names its recipients; a plain entry has none.
    nlohmann::json const details = entry_details_json(saved.path);
    EXPECT_EQ(details["encryption"]["recipients"],
              nlohmann::json::array({saved.alice.key.recipient().id()}));
    EXPECT_EQ(details["encryption"]["plan_size"], saved.plan.size());
    EXPECT_NE(entry_details_table(details).find(saved.alice.key.recipient().id().substr(0, 16)),
              std::string::npos);
    // Without a key it is still a sound entry: the cache's checks work on the sealed body.
    EXPECT_TRUE(engine_file_damage(saved.path).empty());
    // The store hands out no ciphertext as if it were a plan.
    auto const read = Store(saved.folder.path()).read(saved.identity);
    ASSERT_TRUE(read.has_value());
    EXPECT_TRUE(read->header().encryption.has_value());

    std::string const message =
        message_of<EngineKeyError>([&] { decrypt_entry(saved.path, saved.bob.key); });
    EXPECT_TRUE(has(message, "is not encrypted for")) << message;
    decrypt_entry(saved.path, saved.alice.key);
    EXPECT_EQ(read_engine_header(saved.path).format_version, kEngineFormatVersion);
    EXPECT_TRUE(entry_details_json(saved.path)["encryption"].is_null());
    EXPECT_EQ(saved.body(), saved.plan);
}

TEST(EntryEncryption, ChangingRecipientsRewrapsTheKeyAndLeavesTheBodyAsItWas) {
    SavedEntry const saved;
    std::vector<encryption::RecipientKey> const alice = {saved.alice.key.recipient()};
    std::vector<encryption::RecipientKey> const bob = {saved.bob.key.recipient()};
    (void)encrypt_entry(saved.path, {alice, {}}, nullptr);
    auto const sealed_body = saved.body();
    // An encrypted entry's recipients change only with a current recipient's key.
    std::string message = message_of<EngineKeyError>([&] {
        (void)encrypt_entry(saved.path, {bob, {}}, nullptr);
    });
    EXPECT_TRUE(has(message, "encrypted already")) << message;
    message = message_of<EngineKeyError>([&] {
        (void)encrypt_entry(saved.path, {bob, {}}, &saved.bob.key);
    });
    EXPECT_TRUE(has(message, "is not encrypted for")) << message;

    EntryEncryption const added = encrypt_entry(saved.path, {bob, {}}, &saved.alice.key);
    EXPECT_TRUE(added.was_encrypted);
    EXPECT_EQ(added.recipients.size(), 2U);
    EXPECT_EQ(saved.body(), sealed_body) << "re-wrapping re-encrypted the plan";

    std::vector<std::string> const remove_alice = {saved.alice.key.recipient().id().substr(0, 12)};
    (void)encrypt_entry(saved.path, {{}, remove_alice}, &saved.bob.key);
    EXPECT_EQ(saved.body(), sealed_body);
    message = message_of<EngineKeyError>([&] { decrypt_entry(saved.path, saved.alice.key); });
    EXPECT_TRUE(has(message, "is not encrypted for")) << message;

    // Removing the last recipient, or one the entry does not list, is refused; nothing changes.
    auto const before = testing::read_all(saved.path);
    std::vector<std::string> const remove_bob = {saved.bob.key.recipient().id()};
    message = message_of<InvalidArgument>([&] {
        (void)encrypt_entry(saved.path, {{}, remove_bob}, &saved.bob.key);
    });
    EXPECT_TRUE(has(message, "no recipient left")) << message;
    message = message_of<InvalidArgument>([&] {
        (void)encrypt_entry(saved.path, {{}, remove_alice}, &saved.bob.key);
    });
    EXPECT_TRUE(has(message, remove_alice.front())) << message;
    EXPECT_EQ(testing::read_all(saved.path), before);

    decrypt_entry(saved.path, saved.bob.key);
    EXPECT_EQ(saved.body(), saved.plan);
}

TEST(EntryEncryption, ADamagedSealedChunkIsRefusedAndTheEntryKept) {
    SavedEntry const saved;
    std::vector<encryption::RecipientKey> const alice = {saved.alice.key.recipient()};
    (void)encrypt_entry(saved.path, {alice, {}}, nullptr);
    auto bytes = testing::read_all(saved.path);
    bytes[bytes.size() - 40] ^= std::byte{1};
    testing::write_all(saved.path, bytes);
    (void)message_of<CorruptEngineError>([&] { decrypt_entry(saved.path, saved.alice.key); });
    EXPECT_EQ(testing::read_all(saved.path), bytes);
}

TEST(EntryEncryption, AnEntrySavedForRecipientsIsWrittenSealedOnlyAndOpensWithTheirKeys) {
    testing::TemporaryDirectory folder;
    testing::KeyPair const alice(folder.path(), "alice");
    testing::KeyPair const bob(folder.path(), "bob");
    auto const plan = testing::random_bytes(9 << 20, 4);
    EngineIdentity const identity = recorded_identity(testing::encoder_conditions("2"));
    Store const store(folder.path());
    std::vector<encryption::RecipientKey> const to = {alice.key.recipient()};
    auto const path = store.save(identity, nlohmann::json::object(), plan, to);
    auto const bytes = testing::read_all(path);
    // No 4 KiB of the plan, at any chunk's start, is in the file.
    for (std::size_t at = 0; at + 4096 <= plan.size(); at += std::size_t{1} << 20) {
        EXPECT_EQ(std::search(bytes.begin(), bytes.end(),
                              plan.begin() + static_cast<std::ptrdiff_t>(at),
                              plan.begin() + static_cast<std::ptrdiff_t>(at + 4096)),
                  bytes.end())
            << at;
    }
    auto const saved = store.read(identity);
    ASSERT_TRUE(saved.has_value());
    ASSERT_TRUE(saved->header().encryption.has_value());
    EXPECT_EQ(saved->opened_plan(alice.key), plan);
    std::string const message =
        message_of<EngineKeyError>([&] { (void)saved->opened_plan(bob.key); });
    EXPECT_TRUE(has(message, "is not encrypted for")) << message;
}

} // namespace
} // namespace tensoracle
