// Opening one engine file on its own (DeployedEngine::open_file, open_bytes): the plan handed out
// is the file's, the entry is the verified header's, and every damage, a missing or foreign
// signature with a verify key, and a signature without one are refused naming the file.
#include "cache/engine_file.hpp"
#include "cache/identity.hpp"
#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "support/deploy_fixture.hpp"
#include "support/error_message.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/errors.hpp"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>

namespace tensoracle::deploy {
namespace {

using testing::message_of;

// One saved engine of two chunks and a bit, read back as the bytes an application ships.
struct ShippedFile {
    testing::TemporaryDirectory folder;
    std::vector<std::byte> plan = testing::random_bytes(2 * kPlanChunkBytes + 1000, 11);
    EngineIdentity identity = recorded_identity(testing::encoder_conditions());
    std::filesystem::path path;
    std::vector<std::byte> bytes;

    ShippedFile() {
        Store const store(folder.path());
        std::filesystem::path const saved =
            store.save(identity, {{"io", testing::encoder_io()}}, plan);
        bytes = testing::read_all(saved);
        // Shipped under a name of the application's own: the entry is the header's.
        path = folder.path() / "encoder.engine";
        testing::write_all(path, bytes);
    }

    std::vector<std::byte> signed_by(SigningKey const& key) const {
        std::vector<std::byte> object = bytes;
        auto const trailer = signature_trailer(key, identity.file_name, bytes);
        object.insert(object.end(), trailer.begin(), trailer.end());
        return object;
    }
};

struct Keys {
    testing::TemporaryDirectory folder;
    SigningKey signing = SigningKey::from_pem(testing::new_private_key_pem(), "signing");
    SigningKey stranger = SigningKey::from_pem(testing::new_private_key_pem(), "stranger");
    std::filesystem::path verify_key = folder.path() / "verify-key.pem";
    Keys() { std::ofstream(verify_key) << signing.public_key_pem(); }
    std::string fingerprint() const {
        return VerifyKey::from_pem(signing.public_key_pem(), "verify").fingerprint();
    }
};

bool holds_plan(DeployedEngine const& engine, std::vector<std::byte> const& plan) {
    return engine.plan_size() == plan.size() &&
           std::memcmp(engine.plan_data(), plan.data(), plan.size()) == 0;
}

TEST(EngineFileOpen, AFileOpensWithoutAManifestAndHandsOutExactlyItsPlan) {
    ShippedFile const shipped;
    DeployedEngine const engine = DeployedEngine::open_file(shipped.path);
    EXPECT_TRUE(holds_plan(engine, shipped.plan));
    EXPECT_FALSE(engine.streamed());
    EXPECT_FALSE(engine.signer().has_value());
    EXPECT_EQ(engine.path(), shipped.path);
    ManifestEntry const& entry = engine.entry();
    EXPECT_EQ(entry.file_name, shipped.identity.file_name);
    EXPECT_EQ(entry.recipe, "encoder");
    EXPECT_EQ(entry.graph_version, "3");
    EXPECT_EQ(entry.runs_on.backend, "tensorrt_rtx");
    EXPECT_EQ(entry.plan_size, shipped.plan.size());
    EXPECT_EQ(entry.engine_bytes, shipped.bytes.size());
    ASSERT_TRUE(entry.io.has_value());
    ASSERT_EQ(entry.io->size(), 2U);
    EXPECT_EQ(entry.io->at(0).name, "x");
    EXPECT_EQ(entry.io->at(0).dtype, "FLOAT");

    // A PlanReader hands on the same bytes, checked whole.
    PlanReader reader(engine);
    std::vector<std::byte> read(shipped.plan.size());
    EXPECT_EQ(reader.read(0, read.data(), read.size()), read.size());
    reader.check_rest();
    EXPECT_TRUE(reader.checked_whole());
    EXPECT_EQ(read, shipped.plan);
}

TEST(EngineFileOpen, BytesInMemoryOpenAsTheFileDoesAndAreCopied) {
    ShippedFile const shipped;
    std::vector<std::byte> given = shipped.bytes;
    DeployedEngine const engine =
        DeployedEngine::open_bytes(given.data(), given.size(), "encoder in memory");
    std::fill(given.begin(), given.end(), std::byte{0}); // the caller's buffer is reused
    EXPECT_TRUE(holds_plan(engine, shipped.plan));
    EXPECT_EQ(engine.path(), std::filesystem::path("encoder in memory"));
    EXPECT_EQ(engine.entry().file_name, shipped.identity.file_name);
}

TEST(EngineFileOpen, ADamagedChunkIsRefusedNamingTheChunk) {
    ShippedFile const shipped;
    std::vector<std::byte> damaged = shipped.bytes;
    // A byte of the second chunk: the whole plan's checksum and that chunk's both differ.
    damaged[damaged.size() - shipped.plan.size() + kPlanChunkBytes + 5] ^= std::byte{1};
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open_bytes(damaged.data(), damaged.size(), "shipped"); });
    EXPECT_NE(message.find("shipped"), std::string::npos) << message;
    EXPECT_NE(message.find("the plan's XXH3-128 checksum is"), std::string::npos) << message;
    std::string const chunk =
        "the first damaged chunk: chunk 1 (" + chunk_range_text(1, shipped.plan.size()) + "): ";
    EXPECT_NE(message.find(chunk + "XXH3-128 "), std::string::npos) << message;
    EXPECT_NE(message.find(", the header records " +
                           decode_engine_header(shipped.bytes, shipped.bytes.size(), "shipped")
                               .header.chunks->xxh3_128.at(1)),
              std::string::npos)
        << message;
    // open_file reads the file and judges it the same way.
    testing::write_all(shipped.path, damaged);
    std::string const from_file =
        message_of<CorruptEngineError>([&] { (void)DeployedEngine::open_file(shipped.path); });
    EXPECT_NE(from_file.find(chunk), std::string::npos) << from_file;
}

TEST(EngineFileOpen, AForgedChunkDigestIsRefusedEvenWhenThePlanChecksumIsRight) {
    // The plan and its whole checksum intact, one chunk digest of the header changed: the
    // header's own record of that chunk is not the plan's.
    ShippedFile const shipped;
    DecodedHeader decoded = decode_engine_header(shipped.bytes, shipped.bytes.size(), "shipped");
    ASSERT_TRUE(decoded.header.chunks.has_value());
    std::string& digest = decoded.header.chunks->xxh3_128.at(1);
    digest[0] = digest[0] == '0' ? '1' : '0';
    std::vector<std::byte> forged = encode_engine_prefix(decoded.header);
    forged.insert(forged.end(), shipped.plan.begin(), shipped.plan.end());
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open_bytes(forged.data(), forged.size(), "forged"); });
    EXPECT_NE(message.find("chunk 1"), std::string::npos) << message;
}

TEST(EngineFileOpen, ATruncatedFileAndADamagedHeaderAreRefused) {
    ShippedFile const shipped;
    std::vector<std::byte> truncated(shipped.bytes.begin(), shipped.bytes.end() - 1);
    (void)message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open_bytes(truncated.data(), truncated.size(), "cut"); });
    std::vector<std::byte> header = shipped.bytes;
    header[0] = std::byte{'X'}; // the magic
    (void)message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open_bytes(header.data(), header.size(), "magic"); });
    (void)message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open_bytes(nullptr, 0, "empty"); });
}

TEST(EngineFileOpen, WithAVerifyKeyOnlyTheKeysSignatureTrailerOpens) {
    Keys const keys;
    ShippedFile const shipped;
    EngineFileOptions options;
    options.verify_key = keys.verify_key;

    // Unsigned: refused.
    std::string message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open_file(shipped.path, options); });
    EXPECT_NE(message.find(shipped.path.string()), std::string::npos) << message;

    // Signed by another key: refused.
    auto const foreign = shipped.signed_by(keys.stranger);
    message = message_of<UntrustedEngineError>([&] {
        (void)DeployedEngine::open_bytes(foreign.data(), foreign.size(), "foreign", options);
    });
    EXPECT_NE(message.find("foreign"), std::string::npos) << message;

    // Signed by the key: opened, the trailer is not the plan's, the signer is named.
    auto const object = shipped.signed_by(keys.signing);
    testing::write_all(shipped.path, object);
    DeployedEngine const engine = DeployedEngine::open_file(shipped.path, options);
    EXPECT_TRUE(holds_plan(engine, shipped.plan));
    EXPECT_EQ(engine.signer(), keys.fingerprint());
    EXPECT_EQ(engine.entry().engine_bytes, shipped.bytes.size());

    // The same key as its PEM text.
    EngineFileOptions pem;
    pem.verify_key_pem = keys.signing.public_key_pem();
    EXPECT_EQ(DeployedEngine::open_bytes(object.data(), object.size(), "pem", pem).signer(),
              keys.fingerprint());

    // A plan byte changed after signing: the chunk's SHA-256 is not the signed header's.
    std::vector<std::byte> changed = object;
    changed[shipped.bytes.size() - 10] ^= std::byte{1};
    message = message_of<UntrustedEngineError>([&] {
        (void)DeployedEngine::open_bytes(changed.data(), changed.size(), "changed", options);
    });
    EXPECT_NE(message.find("changed"), std::string::npos) << message;
}

TEST(EngineFileOpen, ASignedFileWithoutAKeyIsRefusedUnlessTheCheckIsSkipped) {
    Keys const keys;
    ShippedFile const shipped;
    auto const object = shipped.signed_by(keys.signing);
    std::string const message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open_bytes(object.data(), object.size(), "signed"); });
    EXPECT_NE(message.find("skip_signature_verification"), std::string::npos) << message;
    EngineFileOptions skip;
    skip.skip_signature_verification = true;
    DeployedEngine const engine =
        DeployedEngine::open_bytes(object.data(), object.size(), "signed", skip);
    EXPECT_TRUE(holds_plan(engine, shipped.plan));
    EXPECT_FALSE(engine.signer().has_value());
}

TEST(EngineFileOpen, AMissingFileIsAFileErrorAndAFolderIsRefused) {
    ShippedFile const shipped;
    (void)message_of<FileError>(
        [&] { (void)DeployedEngine::open_file(shipped.folder.path() / "absent.engine"); });
    std::string const folder = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open_file(shipped.folder.path()); });
    // A shipped file is anywhere, not in a cache: nothing to remove, only what open_file opens.
    EXPECT_EQ(folder, "engine file '" + shipped.folder.path().string() +
                          "' is a directory: open_file opens regular files only");
}

#ifndef _WIN32
TEST(EngineFileOpen, ALinkIsNeverFollowed) {
    ShippedFile const shipped;
    std::filesystem::path const link = shipped.folder.path() / "link.engine";
    std::filesystem::create_symlink(shipped.path, link);
    std::string const message =
        message_of<CorruptEngineError>([&] { (void)DeployedEngine::open_file(link); });
    EXPECT_EQ(message, "engine file '" + link.string() +
                           "' is a symbolic link: open_file opens regular files only, not links");
}
#endif

TEST(EngineFileOpen, BothKeyFormsAtOnceAreTheCallersError) {
    Keys const keys;
    ShippedFile const shipped;
    EngineFileOptions options;
    options.verify_key = keys.verify_key;
    options.verify_key_pem = keys.signing.public_key_pem();
    (void)message_of<InvalidArgument>(
        [&] { (void)DeployedEngine::open_file(shipped.path, options); });
}

} // namespace
} // namespace tensoracle::deploy
