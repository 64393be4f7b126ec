// Opening a deployed engine: the entry the manifest names is read from the cache folder and every
// refusal (missing, damaged, truncated, another plan, other conditions, another IO signature,
// unsigned or wrongly signed with a verify key) names the file, the field and both values.
#include "cache/engine_file.hpp"
#include "cache/identity.hpp"
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "cache/store.hpp"
#include "deploy/io_signature.hpp"
#include "deploy/json_forms.hpp"
#include "io/file_bytes.hpp"
#include "io/hash.hpp"
#include "remote/object.hpp"
#include "remote/signature.hpp"
#include "support/deploy_fixture.hpp"
#include "support/error_message.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/plan_reader.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <thread>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

using testing::message_of;

Json conditions(std::string const& graph_version = "3") {
    return testing::encoder_conditions(graph_version);
}

Json io_signature(int batch = -1) {
    return testing::encoder_io(batch);
}

std::string hex_of(Signature const& signature) {
    return testing::hex_digits(signature);
}

// A cache folder holding one saved entry, and the manifest entry `tensoracle build` writes for it.
struct Deployment {
    testing::TemporaryDirectory folder;
    std::vector<std::byte> plan;
    EngineIdentity identity = recorded_identity(conditions());
    std::filesystem::path path;
    ManifestEntry entry;

    explicit Deployment(std::size_t plan_bytes = 4096)
        : plan(testing::random_bytes(plan_bytes, 7)) {
        Store const store(folder.path());
        path = store.save(identity, {{"io", io_signature()}}, plan);
        entry = testing::manifest_entry_of(path, identity, io_signature());
    }

    OpenOptions options() const { return {folder.path(), {}}; }

    // Signs the saved file as `tensoracle build --push` records it in the manifest.
    void sign(SigningKey const& key) {
        auto const bytes = testing::read_all(path);
        auto const trailer = signature_trailer(key, entry.file_name, bytes);
        Signature signature{};
        std::memcpy(signature.data(), trailer.data(), signature.size());
        entry.fleet = FleetObject{"engines/" + entry.file_name, "s3://b/engines/" + entry.file_name,
                                  true, hex_of(signature)};
    }

    void overwrite(std::vector<std::byte> const& bytes) const { testing::write_all(path, bytes); }
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

TEST(DeployedEngine, OpensTheEntryAndHandsOutExactlyItsPlan) {
    Deployment const deployment;
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, deployment.options());
    EXPECT_EQ(engine.path(), deployment.path);
    ASSERT_EQ(engine.plan_size(), deployment.plan.size());
    EXPECT_EQ(std::memcmp(engine.plan_data(), deployment.plan.data(), deployment.plan.size()), 0);
    EXPECT_FALSE(engine.signer().has_value());
    EXPECT_EQ(engine.entry().file_name, deployment.entry.file_name);
}

TEST(DeployedEngine, AWriteIntoOrATruncationOfTheFileAfterTheOpenLeavesThePlanUnchanged) {
    Deployment const deployment;
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, deployment.options());
    testing::scribble_then_truncate(deployment.path);
    ASSERT_EQ(std::filesystem::file_size(deployment.path), 0U);
    ASSERT_EQ(engine.plan_size(), deployment.plan.size());
    EXPECT_EQ(std::memcmp(engine.plan_data(), deployment.plan.data(), deployment.plan.size()), 0);
}

TEST(DeployedEngine, AFileOfAnotherSizeIsRefusedBeforeItIsRead) {
    // A file far larger than the manifest's entry is not copied into memory to find that out.
    Deployment const deployment;
    std::filesystem::resize_file(deployment.path, std::uintmax_t{1} << 34U); // 16 GiB, sparse
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("the file is 17179869184 bytes, the manifest records engine_bytes " +
                           std::to_string(deployment.entry.engine_bytes)),
              std::string::npos)
        << message;
}

TEST(DeployedEngine, AMissingEntrySaysHowToFetchIt) {
    Deployment const deployment;
    std::filesystem::remove(deployment.path);
    std::string const message = message_of<FileError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find(deployment.path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("tensoracle cache pull --manifest"), std::string::npos) << message;
}

TEST(DeployedEngine, ADamagedPlanIsRefusedByItsChecksum) {
    Deployment const deployment;
    auto bytes = testing::read_all(deployment.path);
    bytes.back() ^= std::byte{1};
    deployment.overwrite(bytes);
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("the plan's XXH3-128 checksum is"), std::string::npos) << message;
    EXPECT_NE(message.find("but the header records " + deployment.entry.plan_xxh3_128),
              std::string::npos)
        << message;
}

TEST(DeployedEngine, ATruncatedFileIsRefusedByItsSize) {
    Deployment const deployment;
    auto bytes = testing::read_all(deployment.path);
    bytes.resize(bytes.size() - 100);
    deployment.overwrite(bytes);
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("the file is " + std::to_string(bytes.size()) +
                           " bytes, the manifest records engine_bytes " +
                           std::to_string(deployment.entry.engine_bytes)),
              std::string::npos)
        << message;
    Refusal const refusal = testing::refusal_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_EQ(testing::fields_of(refusal),
              "subject=" + deployment.path.string() +
                  " | field=engine_bytes | observed=" + std::to_string(bytes.size()) +
                  " | expected=" + std::to_string(deployment.entry.engine_bytes) + " | remedy=");
}

TEST(DeployedEngine, AnotherPlanOfTheSameSizeIsNotTheManifestsEntry) {
    // A well-formed entry, rebuilt with another plan of the same length after the manifest was
    // written: its own checksum holds, the manifest's does not.
    Deployment deployment;
    Store const store(deployment.folder.path());
    (void)store.save(deployment.identity, {{"io", io_signature()}}, testing::random_bytes(4096, 8));
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("plan.xxh3_128 is "), std::string::npos) << message;
    EXPECT_NE(message.find("the manifest records " + deployment.entry.plan_xxh3_128),
              std::string::npos)
        << message;
    Refusal const refusal = testing::refusal_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_EQ(refusal.field, "plan.xxh3_128");
    EXPECT_EQ(refusal.expected, deployment.entry.plan_xxh3_128);
    EXPECT_EQ(refusal.observed.size(), 32U) << refusal.observed;
    EXPECT_NE(refusal.observed, refusal.expected);
}

TEST(DeployedEngine, OtherConditionsUnderTheEntrysNameAreRefused) {
    // The same plan saved with other conditions of the same length, at the entry's file name.
    Deployment const deployment;
    Store const store(deployment.folder.path());
    auto const other =
        store.save(recorded_identity(conditions("4")), {{"io", io_signature()}}, deployment.plan);
    std::filesystem::rename(other, deployment.path);
    std::string const message = message_of<EngineConditionError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("graph_version"), std::string::npos) << message;
    EXPECT_NE(message.find(deployment.path.string()), std::string::npos) << message;
}

TEST(DeployedEngine, AnotherIOSignatureIsRefusedNamingTheTensorField) {
    Deployment deployment;
    deployment.entry.io_json = canonical_json(io_signature(2)); // batch 2; the header: -1
    std::string const message = message_of<EngineIOError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("io.tensors[0].shape: [-1, 8], the manifest records [2, 8]"),
              std::string::npos)
        << message;
    Refusal const refusal = testing::refusal_of<EngineIOError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_EQ(testing::fields_of(refusal), "subject=" + deployment.path.string() +
                                               " | field=io.tensors[0].shape | observed=[-1, 8] | "
                                               "expected=[2, 8] | remedy=");
}

// An application may build the entry itself: what the opened engine is run by (its IO, where
// it runs) is what the verified header records, not the entry's typed members.
TEST(DeployedEngine, TheOpenedEntryHoldsTheVerifiedHeadersIoAndConditions) {
    Deployment deployment;
    deployment.entry.io =
        io_from_json(io_signature(2), "io"); // a typed IO that is not the header's
    deployment.entry.runs_on.targets = {"sm75"};
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, deployment.options());
    ASSERT_TRUE(engine.entry().io.has_value());
    EXPECT_EQ((*engine.entry().io)[0].shape, (Shape{-1, 8}));
    EXPECT_EQ((*engine.entry().io)[1].shape, (Shape{-1, 4}));
    EXPECT_EQ(engine.entry().runs_on.targets,
              conditions_from_json(deployment.identity.conditions, "conditions").targets);
}

TEST(DeployedEngine, WithAVerifyKeyOnlyTheKeysSignatureOpens) {
    Keys const keys;
    Deployment deployment;
    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;

    // Unsigned (no fleet object, or one without a signature): refused.
    std::string message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_NE(message.find("has no signature in the manifest (fleet.signature is null)"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(keys.fingerprint()), std::string::npos) << message;

    // Signed by another key: refused.
    deployment.sign(keys.stranger);
    message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_NE(message.find("does not accept"), std::string::npos) << message;
    Refusal const refusal = testing::refusal_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_EQ(refusal.subject, deployment.path.string());
    EXPECT_EQ(refusal.field, "fleet.signature");
    EXPECT_EQ(refusal.observed, *deployment.entry.fleet->signature);
    EXPECT_EQ(refusal.expected, "a signature of this file by the verify key " + keys.fingerprint());

    // Signed by the key: opened, and the signer is named.
    deployment.sign(keys.signing);
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    EXPECT_EQ(engine.signer(), keys.fingerprint());

    // A byte changed after signing: the signature is judged first, so it is the refusal.
    auto bytes = testing::read_all(deployment.path);
    bytes[30] ^= std::byte{1}; // inside the header
    deployment.overwrite(bytes);
    message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_NE(message.find("the file changed after signing"), std::string::npos) << message;
}

// From 8 MiB on, the SHA-256 of a signed entry is computed on a thread of its own while the file
// is copied: the same verdicts, a changed byte anywhere (here, the plan's last) still refused.
#ifdef __linux__
// The most threads the process had while `work` ran, counted in /proc/self/task by a thread of
// the test's own (which counts itself), sampling until `work` returns.
std::size_t most_threads_during(std::function<void()> const& work) {
    std::atomic<bool> done{false};
    std::atomic<std::size_t> most{0};
    std::thread sampler([&] {
        do {
            std::size_t count = 0;
            for ([[maybe_unused]] auto const& task :
                 std::filesystem::directory_iterator("/proc/self/task")) {
                ++count;
            }
            most.store(std::max(most.load(), count));
        } while (!done.load());
    });
    while (most.load() == 0) { // the sampler has counted the threads before `work` starts
        std::this_thread::yield();
    }
    work();
    done.store(true);
    sampler.join();
    return most.load();
}

// What "a thread of its own" claims is observed: the open of a large signed entry runs one
// thread more than the open of a small one (the sampler is there in both).
TEST(DeployedEngine, ALargeSignedEntryIsHashedOnAThreadOfItsOwnAndASmallOneIsNot) {
    Keys const keys;
    Deployment small(4096);
    small.sign(keys.signing);
    Deployment large(std::size_t{64} << 20U);
    large.sign(keys.signing);
    OpenOptions small_options = small.options();
    small_options.verify_key = keys.verify_key;
    OpenOptions large_options = large.options();
    large_options.verify_key = keys.verify_key;
    std::size_t const without =
        most_threads_during([&] { (void)DeployedEngine::open(small.entry, small_options); });
    std::size_t const with =
        most_threads_during([&] { (void)DeployedEngine::open(large.entry, large_options); });
    EXPECT_EQ(with, without + 1);
}
#endif

TEST(DeployedEngine, ALargeSignedEntryHashedOnAThreadOfItsOwnIsVerifiedTheSame) {
    Keys const keys;
    Deployment deployment((std::size_t{9} << 20U) + 123);
    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;
    deployment.sign(keys.signing);
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    EXPECT_EQ(engine.signer(), keys.fingerprint());
    ASSERT_EQ(engine.plan_size(), deployment.plan.size());
    EXPECT_TRUE(std::equal(deployment.plan.begin(), deployment.plan.end(),
                           static_cast<std::byte const*>(engine.plan_data())));
    auto bytes = testing::read_all(deployment.path);
    bytes.back() ^= std::byte{1};
    deployment.overwrite(bytes);
    std::string const message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_NE(message.find("the file changed after signing"), std::string::npos) << message;
    // Refused early (another size than the manifest's): the hashing thread is stopped cleanly.
    bytes.pop_back();
    deployment.overwrite(bytes);
    EXPECT_THROW((void)DeployedEngine::open(deployment.entry, options), CorruptEngineError);
}

// Where the manifest records a signature, an open without a key does not fail open: it is
// refused saying how to pass the key, unless the option that says it skips the check is set.
TEST(DeployedEngine, ASignedEntryWithoutAKeyIsRefusedUnlessTheCheckIsSkippedByName) {
    Keys const keys;
    Deployment deployment;
    deployment.sign(keys.signing);
    std::string const message = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("'" + deployment.path.string() +
                           "': the manifest records a signature for it (fleet.signature) but no "
                           "verify key is set"),
              std::string::npos)
        << message;
    for (char const* remedy : {"OpenOptions::verify_key", "TENSORACLE_REMOTE_VERIFY_KEY",
                               "OpenOptions::skip_signature_verification"}) {
        EXPECT_NE(message.find(remedy), std::string::npos) << message;
    }
    OpenOptions skipping = deployment.options();
    skipping.skip_signature_verification = true;
    DeployedEngine const unverified = DeployedEngine::open(deployment.entry, skipping);
    EXPECT_FALSE(unverified.signer().has_value());
    EXPECT_EQ(unverified.plan_size(), deployment.plan.size());
    // An unsigned entry opens without a key, as before.
    Deployment const unsigned_deployment;
    EXPECT_NO_THROW(
        (void)DeployedEngine::open(unsigned_deployment.entry, unsigned_deployment.options()));
}

TEST(DeployedEngine, AVerifyKeyCanBeGivenAsItsPemText) {
    Keys const keys;
    Deployment deployment;
    deployment.sign(keys.signing);
    OpenOptions options = deployment.options();
    options.verify_key_pem = keys.signing.public_key_pem();
    EXPECT_EQ(DeployedEngine::open(deployment.entry, options).signer(), keys.fingerprint());
    options.verify_key_pem = keys.stranger.public_key_pem();
    EXPECT_NE(message_of<UntrustedEngineError>([&] {
                  (void)DeployedEngine::open(deployment.entry, options);
              }).find("does not accept"),
              std::string::npos);
    options.verify_key = keys.verify_key;
    EXPECT_NE(message_of<InvalidArgument>([&] {
                  (void)DeployedEngine::open(deployment.entry, options);
              }).find("verify_key (a key file) and verify_key_pem (a key's text) are both set"),
              std::string::npos);
}

TEST(DeployedEngine, AnUnreadableVerifyKeyIsTheCallersError) {
    Deployment const deployment;
    OpenOptions options = deployment.options();
    options.verify_key = deployment.folder.path() / "no-such-key.pem";
    EXPECT_THROW((void)DeployedEngine::open(deployment.entry, options), FileError);
}

#ifndef _WIN32
TEST(DeployedEngine, ALinkAtTheEntrysNameIsNeverFollowed) {
    Deployment const deployment;
    auto const target = deployment.folder.path() / "elsewhere.bin";
    std::filesystem::rename(deployment.path, target);
    std::filesystem::create_symlink(target, deployment.path);
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, deployment.options()); });
    EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
}
#endif

// Streamed opens (OpenOptions::stream_plan) of format 2 entries, and format 1 entries, which are
// opened whole whatever the options.

constexpr std::size_t kChunk = static_cast<std::size_t>(kPlanChunkBytes);

// The plan of `engine` read through a PlanReader in pieces of `piece` bytes.
std::vector<std::byte> read_through(DeployedEngine const& engine, std::size_t piece) {
    PlanReader reader(engine);
    std::vector<std::byte> plan(engine.plan_size());
    std::size_t at = 0;
    while (at < plan.size()) {
        std::size_t const got =
            reader.read(at, plan.data() + at, std::min(piece, plan.size() - at));
        if (got == 0) {
            ADD_FAILURE() << "the reader stopped at byte " << at << " of " << plan.size();
            break;
        }
        at += got;
    }
    return plan;
}

// Flips one bit of the byte `plan_byte` of the plan, in place (the same file, as another process
// writing into it would).
void change_plan_byte(Deployment const& deployment, std::size_t plan_byte) {
    auto bytes = testing::read_all(deployment.path);
    bytes[bytes.size() - deployment.plan.size() + plan_byte] ^= std::byte{0x01};
    deployment.overwrite(bytes);
}

TEST(DeployedEngine, AStreamedOpenWithAKeyHoldsNoPlanAndItsReaderHandsOnExactlyThePlan) {
    Keys const keys;
    Deployment deployment(2 * kChunk + 123); // three chunks, the last one short
    deployment.sign(keys.signing);
    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;
    options.stream_plan = true;
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    EXPECT_TRUE(engine.streamed());
    EXPECT_EQ(engine.plan_data(), nullptr) << "a streamed engine holds no copy of the plan";
    EXPECT_EQ(engine.signer(), keys.fingerprint());
    ASSERT_EQ(engine.plan_size(), deployment.plan.size());

    PlanReader reader(engine);
    EXPECT_EQ(reader.size(), deployment.plan.size());
    std::vector<std::byte> whole(deployment.plan.size() + 10, std::byte{0xEE});
    EXPECT_EQ(reader.read(0, whole.data(), whole.size()), deployment.plan.size());
    whole.resize(deployment.plan.size());
    EXPECT_TRUE(whole == deployment.plan) << "the plan read back whole differs";
    EXPECT_LE(reader.buffer_bytes(), kChunk) << "more than one chunk held";
    EXPECT_EQ(reader.read(deployment.plan.size(), whole.data(), 1), 0U) << "a read past the end";
    // In pieces that do not divide the chunk: each one across a chunk boundary at some point.
    for (std::size_t const piece : {std::size_t{1000003}, kChunk - 1, kChunk + 1}) {
        EXPECT_TRUE(read_through(engine, piece) == deployment.plan) << "pieces of " << piece;
    }
}

TEST(DeployedEngine, APlanByteChangedAfterAStreamedOpenWithAKeyIsRefusedByTheChunksSha256) {
    Keys const keys;
    Deployment deployment(2 * kChunk + 123);
    deployment.sign(keys.signing);
    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;
    options.stream_plan = true;
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    change_plan_byte(deployment, kChunk + 5000); // in chunk 1

    PlanReader reader(engine);
    std::vector<std::byte> first(kChunk);
    EXPECT_EQ(reader.read(0, first.data(), first.size()), kChunk) << "chunk 0 is unchanged";
    EXPECT_TRUE(std::equal(first.begin(), first.end(), deployment.plan.begin()));
    std::vector<std::byte> second(kChunk, std::byte{0xEE});
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)reader.read(kChunk, second.data(), second.size()); });
    std::string const recorded =
        sha256_hex(std::span(deployment.plan).subspan(kChunk, kChunk)); // what the header records
    EXPECT_NE(message.find(deployment.path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("chunk 1 (bytes 4194304 to 8388607 of the plan) has the SHA-256 "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("the verified header records " + recorded), std::string::npos)
        << message;
    EXPECT_TRUE(std::all_of(second.begin(), second.end(), [](std::byte value) {
        return value == std::byte{0};
    })) << "the refused chunk's bytes were left in the destination";
    // The reader keeps refusing, even a chunk that is unchanged.
    EXPECT_THROW((void)reader.read(0, first.data(), 16), CorruptEngineError);
    // So does a reader that asks for a part of that chunk only (read into its own buffer).
    PlanReader partial(engine);
    std::byte one{};
    EXPECT_THROW((void)partial.read(kChunk + 5000, &one, 1), CorruptEngineError);
}

// The streamed open checks the signature over the header only: a plan byte changed before the
// open is refused by the reader, a header byte changed by the open itself.
TEST(DeployedEngine, AStreamedOpenWithAKeyJudgesTheHeaderAndLeavesThePlanToTheReader) {
    Keys const keys;
    Deployment deployment(kChunk + 1);
    deployment.sign(keys.signing);
    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;
    options.stream_plan = true;
    auto const signed_bytes = testing::read_all(deployment.path);

    change_plan_byte(deployment, kChunk); // the last chunk: its one byte
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    EXPECT_TRUE(engine.streamed());
    PlanReader reader(engine);
    std::vector<std::byte> plan(deployment.plan.size());
    std::string const message =
        message_of<CorruptEngineError>([&] { (void)reader.read(0, plan.data(), plan.size()); });
    EXPECT_NE(message.find("chunk 1 (bytes 4194304 to 4194304 of the plan) has the SHA-256 "),
              std::string::npos)
        << message;

    auto header_changed = signed_bytes;
    header_changed[30] ^= std::byte{0x01};
    deployment.overwrite(header_changed);
    std::string const refusal = message_of<UntrustedEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_NE(refusal.find("does not accept"), std::string::npos) << refusal;
}

// Without a key the chunks are checked by the XXH3-128 the header records.
TEST(DeployedEngine, APlanByteChangedAfterAStreamedOpenWithoutAKeyIsRefusedByTheChunksXxh3) {
    Deployment const deployment(kChunk + 100);
    OpenOptions options = deployment.options();
    options.stream_plan = true;
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    EXPECT_TRUE(engine.streamed());
    EXPECT_FALSE(engine.signer().has_value());
    EXPECT_TRUE(read_through(engine, kChunk) == deployment.plan);
    change_plan_byte(deployment, 7); // in chunk 0
    PlanReader reader(engine);
    std::vector<std::byte> plan(deployment.plan.size());
    std::string const message =
        message_of<CorruptEngineError>([&] { (void)reader.read(0, plan.data(), plan.size()); });
    EXPECT_NE(message.find("chunk 0 (bytes 0 to 4194303 of the plan) has the XXH3-128 "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("the verified header records " +
                           plan_checksum_hex(std::span(deployment.plan).first(kChunk))),
              std::string::npos)
        << message;
}

// Rewrites the deployment's entry in engine format 1 (no chunk digests: as saved before format
// 2), the same conditions, references and plan, and its manifest entry with it.
void rewrite_as_format_1(Deployment& deployment) {
    EngineHeader header;
    header.conditions = deployment.identity.conditions;
    header.references = {{"io", io_signature()}};
    header.plan_size = deployment.plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(deployment.plan);
    std::vector<std::byte> bytes = encode_engine_prefix(header);
    ASSERT_EQ(engine_format_version(bytes), kUnchunkedFormatVersion);
    bytes.insert(bytes.end(), deployment.plan.begin(), deployment.plan.end());
    deployment.overwrite(bytes);
    deployment.entry =
        testing::manifest_entry_of(deployment.path, deployment.identity, io_signature());
}

// The same, then signed (format 1's statement: over every byte of the file).
void rewrite_as_format_1_and_sign(Deployment& deployment, Keys const& keys) {
    ASSERT_NO_FATAL_FAILURE(rewrite_as_format_1(deployment));
    deployment.sign(keys.signing);
}

// The deployment's file with a header whose chunk digests describe `other` (another plan of the
// same size), and `other` as its plan: every chunk matches the header's own list.
std::vector<std::byte> forge_chunk_list(Deployment& deployment,
                                        std::vector<std::byte> const& other) {
    auto bytes = testing::read_all(deployment.path);
    std::size_t const plan_offset = bytes.size() - deployment.plan.size();
    DecodedHeader decoded = decode_engine_header(bytes, bytes.size(), deployment.path);
    decoded.header.chunks = plan_chunks_of(other);
    std::vector<std::byte> forged = encode_engine_prefix(decoded.header);
    EXPECT_EQ(forged.size(), plan_offset);
    forged.insert(forged.end(), other.begin(), other.end());
    return forged;
}

// Without a key the header's chunk list is bound by the manifest's header_sha256: a header that
// lists another plan's chunks (each chunk then passing its own check) is refused by the open,
// before a reader exists, so no chunk of it is handed on.
TEST(DeployedEngine, AForgedChunkListWithoutAKeyIsRefusedByTheOpenBeforeAnyChunkIsHandedOn) {
    Deployment deployment(2 * kChunk + 4096); // three chunks
    OpenOptions options = deployment.options();
    options.stream_plan = true;
    {
        DeployedEngine const good = DeployedEngine::open(deployment.entry, options);
        ASSERT_TRUE(good.streamed());
        EXPECT_TRUE(read_through(good, kChunk) == deployment.plan);
    }
    std::vector<std::byte> other = deployment.plan;
    other[10] ^= std::byte{0x01};
    auto const forged = forge_chunk_list(deployment, other);
    deployment.overwrite(forged);
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    std::size_t const prefix_bytes = forged.size() - other.size();
    EXPECT_NE(message.find("the SHA-256 of its preamble and header is " +
                           sha256_hex(std::span(forged).first(prefix_bytes)) +
                           ", the manifest records header_sha256 " +
                           *deployment.entry.header_sha256),
              std::string::npos)
        << message;
}

// A manifest written before header digests were recorded binds no chunk list: without a key
// such an entry is read whole however it is asked for, and a forged chunk list is refused by the
// plan's checksum before the open returns.
TEST(DeployedEngine, WithoutAKeyOrAHeaderDigestAStreamedOpenReadsTheEntryWhole) {
    Deployment deployment(2 * kChunk + 4096);
    deployment.entry.header_sha256.reset();
    OpenOptions options = deployment.options();
    options.stream_plan = true;
    {
        DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
        EXPECT_FALSE(engine.streamed());
        ASSERT_EQ(engine.plan_size(), deployment.plan.size());
        EXPECT_EQ(std::memcmp(engine.plan_data(), deployment.plan.data(), deployment.plan.size()),
                  0);
    }
    std::vector<std::byte> other = deployment.plan;
    other[10] ^= std::byte{0x01};
    deployment.overwrite(forge_chunk_list(deployment, other));
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, options); });
    EXPECT_NE(message.find("the plan's XXH3-128 checksum is " + plan_checksum_hex(other)),
              std::string::npos)
        << message;
}

// A consumer may stop before the plan's end (TensorRT's deserializer does, for a plan it finds
// done): check_rest reads and checks what it did not read, and refuses a changed chunk there.
TEST(DeployedEngine, CheckRestChecksTheChunksAConsumerStoppedBefore) {
    Deployment const deployment(2 * kChunk + 4096); // three chunks
    OpenOptions options = deployment.options();
    options.stream_plan = true;
    DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
    ASSERT_TRUE(engine.streamed());
    std::vector<std::byte> first(kChunk);
    {
        PlanReader reader(engine);
        EXPECT_EQ(reader.read(0, first.data(), first.size()), kChunk);
        EXPECT_FALSE(reader.checked_whole());
        reader.check_rest();
        EXPECT_TRUE(reader.checked_whole());
    }
    PlanReader reader(engine);
    EXPECT_EQ(reader.read(0, first.data(), first.size()), kChunk); // chunk 0 only
    change_plan_byte(deployment, 2 * kChunk + 5);                  // in chunk 2, never read
    std::string const message = message_of<CorruptEngineError>([&] { reader.check_rest(); });
    EXPECT_NE(message.find("chunk 2 ("), std::string::npos) << message;
    EXPECT_FALSE(reader.checked_whole());
}

TEST(DeployedEngine, AFormat1EntrySignedOverTheWholeFileOpensWholeEvenWhenStreamingIsAsked) {
    Keys const keys;
    Deployment deployment(kChunk + 4096);
    ASSERT_NO_FATAL_FAILURE(rewrite_as_format_1_and_sign(deployment, keys));
    // Its signature is the one of format 1: over the SHA-256 of every byte of the file.
    auto const bytes = testing::read_all(deployment.path);
    std::string const statement =
        "tensoracle remote engine v1\n" + deployment.entry.file_name + "\n" + sha256_hex(bytes);
    auto const trailer = signature_trailer(keys.signing, deployment.entry.file_name, bytes);
    Signature signature{};
    std::memcpy(signature.data(), trailer.data(), signature.size());
    EXPECT_TRUE(VerifyKey::from_pem(keys.signing.public_key_pem(), "verify")
                    .verify(std::as_bytes(std::span(statement)), signature))
        << "signature_trailer did not sign a format 1 file with the v1 statement";

    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;
    for (bool const stream : {false, true}) {
        SCOPED_TRACE(stream ? "stream_plan" : "whole");
        options.stream_plan = stream;
        DeployedEngine const engine = DeployedEngine::open(deployment.entry, options);
        EXPECT_FALSE(engine.streamed()) << "a format 1 entry has no chunks to stream by";
        ASSERT_NE(engine.plan_data(), nullptr);
        ASSERT_EQ(engine.plan_size(), deployment.plan.size());
        EXPECT_EQ(std::memcmp(engine.plan_data(), deployment.plan.data(), deployment.plan.size()),
                  0);
        EXPECT_EQ(engine.signer(), keys.fingerprint());
        // A reader hands on the verified copy, holding no buffer of its own.
        EXPECT_TRUE(read_through(engine, kChunk - 1) == deployment.plan);
        EXPECT_EQ(PlanReader(engine).buffer_bytes(), 0U);
    }
}

TEST(DeployedEngine, AFormat1EntryWithAChangedPlanByteIsRefusedByItsSignature) {
    Keys const keys;
    Deployment deployment(kChunk + 4096);
    ASSERT_NO_FATAL_FAILURE(rewrite_as_format_1_and_sign(deployment, keys));
    change_plan_byte(deployment, kChunk + 10);
    OpenOptions options = deployment.options();
    options.verify_key = keys.verify_key;
    for (bool const stream : {false, true}) {
        SCOPED_TRACE(stream ? "stream_plan" : "whole");
        options.stream_plan = stream;
        std::string const message = message_of<UntrustedEngineError>(
            [&] { (void)DeployedEngine::open(deployment.entry, options); });
        EXPECT_NE(message.find("does not accept"), std::string::npos) << message;
        EXPECT_NE(message.find(deployment.path.string()), std::string::npos) << message;
    }
    // Without a key (the check skipped by name), the plan's checksum refuses it.
    OpenOptions unverified = deployment.options();
    unverified.skip_signature_verification = true;
    unverified.stream_plan = true;
    std::string const message = message_of<CorruptEngineError>(
        [&] { (void)DeployedEngine::open(deployment.entry, unverified); });
    EXPECT_NE(message.find("the plan's XXH3-128 checksum is"), std::string::npos) << message;
}

// Selecting the recipe's entry for a device, among the manifest's entries.
Manifest two_entry_manifest() {
    Manifest manifest;
    manifest.spec = "mymodel:RECIPES";
    for (auto const& targets : {Json{"sm86", "sm89"}, Json{"sm120"}}) {
        Json recorded = conditions();
        recorded["targets"] = targets;
        ManifestEntry entry;
        entry.recipe = "encoder";
        entry.file_name = recorded_identity(recorded).file_name;
        entry.conditions_json = canonical_json(recorded);
        entry.runs_on = conditions_from_json(recorded, "conditions");
        manifest.entries.push_back(entry);
    }
    return manifest;
}

DeviceDescription gpu(std::string const& capability) {
    return {{{"name", std::string("a GPU")}, {"compute_capability", capability}}};
}

TEST(DeploySelection, TheRecipesEntryForTheDeviceIsChosen) {
    Manifest const manifest = two_entry_manifest();
    RuntimeBackend const backend{"tensorrt_rtx", "1.7.1.116"};
    EXPECT_EQ(&select_for_device(manifest, "encoder", gpu("8.9"), backend), &manifest.entries[0]);
    EXPECT_EQ(&select_for_device(manifest, "encoder", gpu("12.0"), backend), &manifest.entries[1]);
}

TEST(DeploySelection, NoEntryForTheDeviceListsEveryCandidate) {
    Manifest const manifest = two_entry_manifest();
    std::string const message = message_of<EngineTargetError>([&] {
        (void)select_for_device(manifest, "encoder", gpu("9.0"), {"tensorrt_rtx", "1.7.1.116"});
    });
    EXPECT_NE(message.find("recipe \"encoder\": no entry can run on"), std::string::npos)
        << message;
    for (ManifestEntry const& entry : manifest.entries) {
        EXPECT_NE(message.find(entry.file_name + ": "), std::string::npos) << message;
    }
    EXPECT_NE(message.find("sm90"), std::string::npos) << message;
}

TEST(DeploySelection, AnUnknownRecipeNamesTheRecipesHeld) {
    Manifest const manifest = two_entry_manifest();
    std::string const message = message_of<InvalidArgument>([&] {
        (void)select_for_device(manifest, "decoder", gpu("8.9"), {"tensorrt_rtx", "1.7.1.116"});
    });
    EXPECT_EQ(message, "the manifest (mymodel:RECIPES) has no entry of recipe \"decoder\"; its "
                       "recipes are \"encoder\"");
}

} // namespace
} // namespace tensoracle::deploy
