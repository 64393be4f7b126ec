// Opening an encrypted deployed engine (format 3) with its recipient's private key: the plan
// handed on, whole or chunk by chunk, is the plan that was sealed; a missing, another recipient's
// or an unneeded key, and a changed sealed chunk, are refused with nothing handed on.
#include "cache/entry_encryption.hpp"
#include "cache/identity.hpp"
#include "cache/store.hpp"
#include "encryption/plan_sealing.hpp"
#include "support/deploy_fixture.hpp"
#include "support/encryption_keys.hpp"
#include "support/error_message.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/errors.hpp"

#include <cstring>
#include <gtest/gtest.h>

namespace tensoracle::deploy {
namespace {

using testing::message_of;

bool has(std::string const& text, std::string const& part) {
    return text.find(part) != std::string::npos;
}

// A cache folder with one entry sealed for alice, and its manifest entry.
struct EncryptedDeployment {
    testing::TemporaryDirectory folder;
    std::vector<std::byte> plan = testing::random_bytes((9 << 20) + 77, 5); // three chunks
    EngineIdentity identity = recorded_identity(testing::encoder_conditions("3"));
    std::filesystem::path path;
    testing::KeyPair alice{folder.path(), "alice"};
    testing::KeyPair bob{folder.path(), "bob"};
    ManifestEntry entry;

    explicit EncryptedDeployment(bool encrypted = true) {
        path = Store(folder.path()).save(identity, {{"io", testing::encoder_io(-1)}}, plan);
        if (encrypted) {
            std::vector<encryption::RecipientKey> const to = {alice.key.recipient()};
            (void)encrypt_entry(path, {to, {}}, nullptr);
        }
        entry = testing::manifest_entry_of(path, identity, testing::encoder_io(-1));
    }

    OpenOptions options(std::filesystem::path const& key = {}, bool stream = false) const {
        OpenOptions open{folder.path(), {}};
        open.decrypt_key = key;
        open.stream_plan = stream;
        return open;
    }
};

std::vector<std::byte> read_through(DeployedEngine const& engine, std::size_t piece) {
    PlanReader reader(engine);
    std::vector<std::byte> out(static_cast<std::size_t>(reader.size()));
    std::size_t done = 0;
    while (done < out.size()) {
        std::size_t const got =
            reader.read(done, out.data() + done, std::min(piece, out.size() - done));
        EXPECT_GT(got, 0U);
        done += got;
    }
    reader.check_rest();
    EXPECT_TRUE(reader.checked_whole());
    EXPECT_LE(reader.buffer_bytes(), std::size_t{9} << 20);
    return out;
}

TEST(EncryptedEngine, TheRecipientsKeyOpensThePlanWholeAndStreamed) {
    EncryptedDeployment const deployment;
    DeployedEngine const whole =
        DeployedEngine::open(deployment.entry, deployment.options(deployment.alice.private_file));
    ASSERT_EQ(whole.plan_size(), deployment.plan.size());
    EXPECT_EQ(std::memcmp(whole.plan_data(), deployment.plan.data(), deployment.plan.size()), 0);
    EXPECT_EQ(read_through(whole, 1000003), deployment.plan);

    DeployedEngine const streamed = DeployedEngine::open(
        deployment.entry, deployment.options(deployment.alice.private_file, true));
    ASSERT_TRUE(streamed.streamed());
    EXPECT_EQ(streamed.plan_size(), deployment.plan.size());
    EXPECT_EQ(read_through(streamed, 1000003), deployment.plan); // pieces across chunks
    EXPECT_EQ(read_through(streamed, deployment.plan.size()), deployment.plan); // whole chunks

    EngineFileOptions file_options;
    file_options.decrypt_key_pem = deployment.alice.private_pem();
    DeployedEngine const alone = DeployedEngine::open_file(deployment.path, file_options);
    ASSERT_EQ(alone.plan_size(), deployment.plan.size());
    EXPECT_EQ(std::memcmp(alone.plan_data(), deployment.plan.data(), deployment.plan.size()), 0);
}

TEST(EncryptedEngine, AMissingOrAnotherRecipientsKeyIsRefusedNamingTheRecipients) {
    EncryptedDeployment const deployment;
    for (bool const stream : {false, true}) {
        std::string message = message_of<EngineKeyError>(
            [&] { (void)DeployedEngine::open(deployment.entry, deployment.options({}, stream)); });
        EXPECT_TRUE(has(message, "is encrypted") && has(message, "OpenOptions::decrypt_key"))
            << message;
        message = message_of<EngineKeyError>([&] {
            (void)DeployedEngine::open(deployment.entry,
                                       deployment.options(deployment.bob.private_file, stream));
        });
        EXPECT_TRUE(has(message, deployment.bob.private_file.string()) &&
                    has(message, deployment.alice.key.recipient().id().substr(0, 16)))
            << message;
    }
    EXPECT_THROW((void)DeployedEngine::open_file(deployment.path), EngineKeyError);
}

TEST(EncryptedEngine, APlainEngineWhereADecryptKeyIsSetIsRefusedAsADowngrade) {
    EncryptedDeployment const plain(false);
    std::string const message = message_of<EngineKeyError>(
        [&] { (void)DeployedEngine::open(plain.entry, plain.options(plain.alice.private_file)); });
    EXPECT_TRUE(has(message, "is not encrypted, but a decrypt key is set")) << message;
    EngineFileOptions file_options;
    file_options.decrypt_key = plain.alice.private_file;
    EXPECT_THROW((void)DeployedEngine::open_file(plain.path, file_options), EngineKeyError);
}

TEST(EncryptedEngine, AChunkChangedAfterAStreamedOpenIsRefusedAndNothingOfItHandedOn) {
    EncryptedDeployment const deployment;
    // The reader checks each sealed chunk against the header's digest, then its tag
    // (plan_encryption_test proves the tag alone refuses a changed chunk).
    DeployedEngine const streamed = DeployedEngine::open(
        deployment.entry, deployment.options(deployment.alice.private_file, true));
    auto bytes = testing::read_all(deployment.path);
    bytes[bytes.size() - 20] ^= std::byte{1};
    testing::write_all(deployment.path, bytes);
    PlanReader reader(streamed);
    std::vector<std::byte> out(static_cast<std::size_t>(reader.size()), std::byte{0x77});
    EXPECT_THROW((void)reader.read(0, out.data(), out.size()), CorruptEngineError);
    auto const last = out.begin() + static_cast<std::ptrdiff_t>(2 * encryption::kSealedPieceBytes);
    EXPECT_TRUE(std::all_of(last, out.end(), [](std::byte b) { return b == std::byte{0}; }))
        << "bytes of the refused chunk were handed on";
    EXPECT_FALSE(reader.checked_whole());
}

} // namespace
} // namespace tensoracle::deploy
