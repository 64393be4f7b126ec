// The streamed receiver: an object fed in pieces becomes exactly the entry Store::save writes, or,
// refused at any point, leaves neither a temporary file nor an entry, and an existing entry as it
// was.
#include "cache/plan_checksum.hpp"
#include "cache/plan_chunks.hpp"
#include "io/hash.hpp"
#include "remote/receiver.hpp"
#include "support/error_message.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>

namespace tensoracle {
namespace {

constexpr std::string_view kObject = "s3://bucket/fleet/engines/entry.engine";

struct Entry {
    EngineIdentity identity;
    nlohmann::json references = {{"workspace_limit", nullptr}, {"built_at", "2026-12-01"}};
    std::vector<std::byte> plan;
    std::vector<std::byte> engine;
};

Entry make_entry(std::string const& name, std::size_t plan_size = 100'000) {
    Entry entry;
    entry.identity = make_identity({{"name", name}, {"graph_version", "1"}});
    entry.plan = testing::random_bytes(plan_size, 5);
    EngineHeader header;
    header.conditions = entry.identity.conditions;
    header.references = entry.references;
    header.plan_size = entry.plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(entry.plan);
    header.chunks = plan_chunks_of(entry.plan); // format version 2, as Store::save writes
    entry.engine = encode_engine_prefix(header);
    entry.engine.insert(entry.engine.end(), entry.plan.begin(), entry.plan.end());
    return entry;
}

std::vector<std::byte> with_trailer(Entry const& entry, SigningKey const& key) {
    auto object = entry.engine;
    auto const trailer = signature_trailer(key, entry.identity.file_name, entry.engine);
    object.insert(object.end(), trailer.begin(), trailer.end());
    return object;
}

struct Keys {
    SigningKey signing = SigningKey::from_pem(testing::new_private_key_pem(), "signing");
    VerifyKey trusted = VerifyKey::from_pem(signing.public_key_pem(), "verify");
    SigningKey stranger = SigningKey::from_pem(testing::new_private_key_pem(), "stranger");
};

// Feeds `object` in pieces of `piece` bytes (the last one shorter).
void feed_in_pieces(RemoteReceiver& receiver, std::span<std::byte const> object,
                    std::size_t piece) {
    for (std::size_t at = 0; at < object.size(); at += piece) {
        receiver.feed(object.subspan(at, std::min(piece, object.size() - at)));
    }
}

using testing::message_of;

class RemoteReceiverTest : public ::testing::Test {
protected:
    testing::TemporaryDirectory directory;
    Store store{directory.path() / "cache"};
    Entry entry = make_entry("model");

    RemoteReceiver receiver_for(std::size_t object_size, VerifyKey const* trusted = nullptr,
                                EngineIdentity const* expected = nullptr) {
        return {store,
                std::string(kObject),
                entry.identity.file_name,
                object_size,
                expected != nullptr ? expected : &entry.identity,
                trusted};
    }
};

TEST_F(RemoteReceiverTest, AnUnsignedObjectBecomesTheFileStoreSaveWritesHoweverItIsSplit) {
    Store const saved_by_save(directory.path() / "saved");
    auto const expected =
        testing::read_all(saved_by_save.save(entry.identity, entry.references, entry.plan));
    for (std::size_t const piece : {std::size_t{1}, std::size_t{7}, std::size_t{19},
                                    std::size_t{20}, std::size_t{4096}, entry.engine.size()}) {
        SCOPED_TRACE(piece);
        RemoteReceiver receiver = receiver_for(entry.engine.size());
        feed_in_pieces(receiver, entry.engine, piece);
        ReceivedEngine const received = receiver.finish();
        EXPECT_FALSE(received.verified.is_signed);
        EXPECT_EQ(received.verified.engine_bytes, entry.engine.size());
        EXPECT_EQ(received.saved.path(), store.entry_path(entry.identity));
        EXPECT_EQ(testing::read_all(received.saved.path()), expected);
        EXPECT_TRUE(std::ranges::equal(received.saved.plan(), entry.plan));
        EXPECT_EQ(received.saved.header().references, entry.references);
        EXPECT_EQ(testing::names_in(store.directory()),
                  std::vector<std::string>{entry.identity.file_name});
        EXPECT_TRUE(store.read(entry.identity).has_value());
        EXPECT_TRUE(receiver.temporary_path().empty());
    }
}

TEST_F(RemoteReceiverTest, ASignedObjectIsSavedWithoutItsTrailerWhenTheKeyAcceptsIt) {
    Keys const keys;
    auto const object = with_trailer(entry, keys.signing);
    RemoteReceiver receiver = receiver_for(object.size(), &keys.trusted);
    feed_in_pieces(receiver, object, 333);
    {
        ReceivedEngine const received = receiver.finish();
        EXPECT_TRUE(received.verified.is_signed);
        EXPECT_EQ(received.verified.signer, keys.trusted.fingerprint());
        EXPECT_EQ(testing::read_all(received.saved.path()), entry.engine);
    } // unmapped: Windows keeps a removed file's name while it is mapped
    // The same object without a trusted key: the trailer is told from its magic and dropped.
    std::filesystem::remove(store.entry_path(entry.identity));
    RemoteReceiver keyless = receiver_for(object.size());
    feed_in_pieces(keyless, object, 1000);
    EXPECT_TRUE(keyless.finish().verified.is_signed);
    EXPECT_EQ(testing::read_all(store.entry_path(entry.identity)), entry.engine);
}

// Whatever refuses an object, the store is left as it was: no temporary file, and a good entry
// saved before is untouched.
class RefusedObjectTest : public RemoteReceiverTest {
protected:
    std::vector<std::byte> good;

    void SetUp() override {
        Entry const older = make_entry("model", 5000); // an entry this node holds already
        store.save(entry.identity, older.references, older.plan);
        good = testing::read_all(store.entry_path(entry.identity));
    }

    void expect_store_unchanged() {
        EXPECT_EQ(testing::names_in(store.directory()),
                  std::vector<std::string>{entry.identity.file_name});
        EXPECT_EQ(testing::read_all(store.entry_path(entry.identity)), good);
    }
};

TEST_F(RefusedObjectTest, ADamagedPlanIsRefusedAtTheEnd) {
    auto object = entry.engine;
    object[object.size() - 10] ^= std::byte{1};
    RemoteReceiver receiver = receiver_for(object.size());
    feed_in_pieces(receiver, object, 4096);
    std::string const message = message_of<CorruptEngineError>([&] { receiver.finish(); });
    EXPECT_NE(message.find("checksum"), std::string::npos) << message;
    EXPECT_NE(message.find(kObject), std::string::npos) << message;
    expect_store_unchanged();
    EXPECT_THROW(receiver.finish(), std::logic_error); // aborted: nothing more to do
}

TEST_F(RefusedObjectTest, AnObjectCutOffMidStreamIsRefusedAsTruncated) {
    RemoteReceiver receiver = receiver_for(entry.engine.size());
    receiver.feed(std::span(entry.engine).first(entry.engine.size() / 2));
    EXPECT_FALSE(receiver.temporary_path().empty());
    EXPECT_TRUE(std::filesystem::exists(receiver.temporary_path()));
    std::string const message = message_of<CorruptEngineError>([&] { receiver.finish(); });
    EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    expect_store_unchanged();
}

TEST_F(RefusedObjectTest, AnAbortedOrAbandonedReceiverLeavesNothing) {
    {
        RemoteReceiver receiver = receiver_for(entry.engine.size());
        receiver.feed(std::span(entry.engine).first(5000));
        receiver.abort();
        EXPECT_TRUE(receiver.temporary_path().empty());
        expect_store_unchanged();
        EXPECT_THROW(receiver.feed(std::span(entry.engine).subspan(5000)), std::logic_error);
    }
    {
        RemoteReceiver receiver = receiver_for(entry.engine.size());
        receiver.feed(std::span(entry.engine).first(entry.engine.size() - 1));
    } // destroyed unfinished, as when the download failed
    expect_store_unchanged();
}

// With a trusted key the header waits for the signature, so only the count refuses a body longer
// than the response announced (without one the header would, see below).
TEST_F(RefusedObjectTest, MoreBytesThanAnnouncedAreRefusedAsTheyArrive) {
    Keys const keys;
    auto const object = with_trailer(entry, keys.signing);
    RemoteReceiver receiver = receiver_for(entry.engine.size(), &keys.trusted);
    receiver.feed(std::span(object).first(entry.engine.size() - 10));
    std::string const message = message_of<CorruptEngineError>(
        [&] { receiver.feed(std::span(object).subspan(entry.engine.size() - 10)); });
    EXPECT_NE(message.find("more than the"), std::string::npos) << message;
    expect_store_unchanged();
}

TEST_F(RefusedObjectTest, AnObjectTooSmallForAnEngineIsRefusedBeforeAnyByte) {
    EXPECT_THROW(receiver_for(19), CorruptEngineError);
    expect_store_unchanged();
}

TEST_F(RefusedObjectTest, GarbageIsRefusedFromItsFirstBytes) {
    std::vector<std::byte> const garbage(1 << 20, std::byte{0});
    RemoteReceiver receiver = receiver_for(64 << 20);
    std::string const message = message_of<CorruptEngineError>([&] { receiver.feed(garbage); });
    EXPECT_NE(message.find("not a tensoracle engine file"), std::string::npos) << message;
    EXPECT_EQ(receiver.received(), 0U);
    expect_store_unchanged();
}

// Without a trusted key the header is judged as soon as it is complete, before any plan byte.
TEST_F(RefusedObjectTest, AHeaderForAnotherSizeOrOtherConditionsIsRefusedBeforeThePlan) {
    std::size_t const prefix = entry.engine.size() - entry.plan.size();
    RemoteReceiver longer = receiver_for(entry.engine.size() + 1000);
    std::string const message =
        message_of<CorruptEngineError>([&] { longer.feed(std::span(entry.engine).first(prefix)); });
    EXPECT_NE(message.find("the object holds"), std::string::npos) << message;

    Entry const other = make_entry("other");
    RemoteReceiver wrong(store, std::string(kObject), entry.identity.file_name, other.engine.size(),
                         &entry.identity, nullptr);
    EXPECT_THROW(wrong.feed(std::span(other.engine).first(other.engine.size() - 100'000)),
                 EngineConditionError);
    expect_store_unchanged();
}

TEST_F(RefusedObjectTest, UnsignedAndForeignSignedObjectsAreRefusedWithAKey) {
    Keys const keys;
    RemoteReceiver plain = receiver_for(entry.engine.size(), &keys.trusted);
    feed_in_pieces(plain, entry.engine, 4096);
    std::string const message = message_of<UntrustedEngineError>([&] { plain.finish(); });
    EXPECT_NE(message.find("not signed"), std::string::npos) << message;

    auto const foreign = with_trailer(entry, keys.stranger);
    RemoteReceiver stranger = receiver_for(foreign.size(), &keys.trusted);
    feed_in_pieces(stranger, foreign, 4096);
    EXPECT_THROW(stranger.finish(), UntrustedEngineError);

    auto flipped = with_trailer(entry, keys.signing);
    flipped[100] ^= std::byte{0x10}; // in the header: refused by the signature, never decoded
    RemoteReceiver changed = receiver_for(flipped.size(), &keys.trusted);
    feed_in_pieces(changed, flipped, 4096);
    std::string const changed_message = message_of<UntrustedEngineError>([&] { changed.finish(); });
    EXPECT_NE(changed_message.find("does not accept"), std::string::npos) << changed_message;
    expect_store_unchanged();
}

// A signature over the engine for another entry's name does not let it be saved here.
TEST_F(RefusedObjectTest, ASignatureForAnotherEntryIsRefused) {
    Keys const keys;
    auto object = entry.engine;
    auto const trailer = signature_trailer(keys.signing, "other-entry.engine", entry.engine);
    object.insert(object.end(), trailer.begin(), trailer.end());
    RemoteReceiver receiver = receiver_for(object.size(), &keys.trusted);
    feed_in_pieces(receiver, object, 4096);
    EXPECT_THROW(receiver.finish(), UntrustedEngineError);
    expect_store_unchanged();
}

// Engine format 1 (no chunk digests) and its signature (over the whole file), as published
// before format 2; and format 2 objects whose plan is not what their signed header records.

constexpr std::size_t kChunk = static_cast<std::size_t>(kPlanChunkBytes);

// The entry's engine in format 1: the same header without chunk digests.
Entry make_format_1_entry(std::string const& name, std::size_t plan_size = 100'000) {
    Entry entry = make_entry(name, plan_size);
    EngineHeader header;
    header.conditions = entry.identity.conditions;
    header.references = entry.references;
    header.plan_size = entry.plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(entry.plan);
    entry.engine = encode_engine_prefix(header);
    entry.engine.insert(entry.engine.end(), entry.plan.begin(), entry.plan.end());
    return entry;
}

// `engine` followed by the trailer of `key`'s signature of `statement`, made by hand.
std::vector<std::byte> signed_with_statement(std::vector<std::byte> engine,
                                             std::string const& statement, SigningKey const& key) {
    Signature const signature = key.sign(std::as_bytes(std::span(statement)));
    engine.insert(engine.end(), signature.begin(), signature.end());
    for (char const c : kSignatureMagic) {
        engine.push_back(static_cast<std::byte>(c));
    }
    return engine;
}

std::vector<std::byte> signed_v1(Entry const& entry, SigningKey const& key) {
    return signed_with_statement(entry.engine,
                                 "tensoracle remote engine v1\n" + entry.identity.file_name + "\n" +
                                     sha256_hex(entry.engine),
                                 key);
}

TEST_F(RemoteReceiverTest, AFormat1ObjectSignedWithTheV1StatementIsReceivedAndSavedAsFormat1) {
    Keys const keys;
    Entry const v1 = make_format_1_entry("model");
    ASSERT_EQ(v1.identity.file_name, entry.identity.file_name);
    ASSERT_EQ(engine_format_version(v1.engine), kUnchunkedFormatVersion);
    auto const object = signed_v1(v1, keys.signing);
    for (std::size_t const piece : {std::size_t{7}, std::size_t{333}, object.size()}) {
        SCOPED_TRACE(piece);
        std::filesystem::remove(store.entry_path(entry.identity));
        RemoteReceiver receiver = receiver_for(object.size(), &keys.trusted);
        feed_in_pieces(receiver, object, piece);
        {
            ReceivedEngine const received = receiver.finish();
            EXPECT_TRUE(received.verified.is_signed);
            EXPECT_EQ(received.verified.signer, keys.trusted.fingerprint());
            EXPECT_EQ(received.verified.decoded.format_version, kUnchunkedFormatVersion);
            EXPECT_FALSE(received.verified.decoded.header.chunks.has_value());
            EXPECT_TRUE(std::ranges::equal(received.saved.plan(), v1.plan));
        } // unmapped: Windows keeps a removed file's name while it is mapped
        // Saved as it came: format 1, without the trailer, and read back by the store.
        auto const saved = testing::read_all(store.entry_path(entry.identity));
        EXPECT_EQ(saved, v1.engine);
        EXPECT_EQ(engine_format_version(saved), kUnchunkedFormatVersion) << "the saved version";
        EXPECT_TRUE(store.read(entry.identity).has_value());
    }
}

TEST_F(RefusedObjectTest, AFormat1ObjectWithAChangedPlanByteIsRefusedByItsSignature) {
    Keys const keys;
    Entry const v1 = make_format_1_entry("model");
    auto object = signed_v1(v1, keys.signing);
    object[v1.engine.size() - 500] ^= std::byte{0x01};
    RemoteReceiver receiver = receiver_for(object.size(), &keys.trusted);
    feed_in_pieces(receiver, object, 4096);
    std::string const message = message_of<UntrustedEngineError>([&] { receiver.finish(); });
    EXPECT_NE(message.find("does not accept"), std::string::npos) << message;
    expect_store_unchanged();
}

// A format 2 object whose plan is not what its signed header records. XXH3-128 is no
// cryptographic hash: a plan can be changed so that the header's XXH3-128 digests (whole and per
// chunk) still hold, and only the chunks' SHA-256 tells. Made here by signing a header that
// records the XXH3-128 digests of the changed plan and the SHA-256 digests of the original one.
TEST_F(RefusedObjectTest, APlanChunkThatKeepsItsXxh3ButNotItsSignedSha256IsUntrusted) {
    Keys const keys;
    Entry const original = make_entry("model", kChunk + 1000);
    auto changed_plan = original.plan;
    changed_plan[kChunk + 10] ^= std::byte{0x01}; // in chunk 1
    PlanChunks const signed_chunks = plan_chunks_of(original.plan);
    PlanChunks const changed_chunks = plan_chunks_of(changed_plan);
    EngineHeader header;
    header.conditions = original.identity.conditions;
    header.references = original.references;
    header.plan_size = changed_plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(changed_plan);
    header.chunks = PlanChunks{signed_chunks.sha256, changed_chunks.xxh3_128};
    std::vector<std::byte> engine = encode_engine_prefix(header);
    engine.insert(engine.end(), changed_plan.begin(), changed_plan.end());
    auto const object = signed_with_statement(
        engine,
        signed_header_statement(
            original.identity.file_name,
            sha256_hex(std::span(engine).first(engine.size() - changed_plan.size()))),
        keys.signing);

    RemoteReceiver receiver = receiver_for(object.size(), &keys.trusted);
    feed_in_pieces(receiver, object, 65536);
    std::string const message = message_of<UntrustedEngineError>([&] { receiver.finish(); });
    EXPECT_NE(message.find(kObject), std::string::npos) << message;
    EXPECT_NE(message.find("does not hold what its signature vouches for: chunk 1 (bytes 4194304 "
                           "to 4195303 of the plan): SHA-256 " +
                           changed_chunks.sha256[1] + ", the header records " +
                           signed_chunks.sha256[1]),
              std::string::npos)
        << message;
    expect_store_unchanged();
    // verify_remote_object, given the whole object, says the same.
    std::string const whole = message_of<UntrustedEngineError>([&] {
        (void)verify_remote_object(object, kObject, original.identity.file_name, &original.identity,
                                   &keys.trusted);
    });
    EXPECT_NE(whole.find("does not hold what its signature vouches for: chunk 1"),
              std::string::npos)
        << whole;
}

// Without a key the per-chunk XXH3-128 digests are judged too: a header whose chunk digest is not
// its plan's is refused naming the chunk, though the whole plan's checksum holds.
TEST_F(RefusedObjectTest, AChunkWhoseXxh3IsNotTheHeadersIsCorruptWithoutAKey) {
    Entry const original = make_entry("model", kChunk + 1000);
    PlanChunks chunks = plan_chunks_of(original.plan);
    std::string const recorded = plan_checksum_hex(std::span(original.plan).first(1000));
    ASSERT_NE(recorded, chunks.xxh3_128[1]);
    std::string const observed = chunks.xxh3_128[1];
    chunks.xxh3_128[1] = recorded;
    EngineHeader header;
    header.conditions = original.identity.conditions;
    header.references = original.references;
    header.plan_size = original.plan.size();
    header.plan_xxh3_128 = plan_checksum_hex(original.plan);
    header.chunks = chunks;
    std::vector<std::byte> object = encode_engine_prefix(header);
    object.insert(object.end(), original.plan.begin(), original.plan.end());

    RemoteReceiver receiver = receiver_for(object.size());
    feed_in_pieces(receiver, object, 65536);
    std::string const message = message_of<CorruptEngineError>([&] { receiver.finish(); });
    EXPECT_NE(message.find("remote engine '" + std::string(kObject) + "' is unusable: chunk 1 " +
                           "(bytes 4194304 to 4195303 of the plan): XXH3-128 " + observed +
                           ", the header records " + recorded),
              std::string::npos)
        << message;
    expect_store_unchanged();
}

// A plan byte simply changed after signing: refused with a trusted key and without one, and
// nothing saved. (Without a key, the plan's XXH3-128 checksum refuses it. With one, the receiver
// too refuses it by that checksum, which it judges before the chunks' SHA-256; verify_remote_object
// names the chunk whose SHA-256 differs, as an untrusted object.)
TEST_F(RefusedObjectTest, APlanChunkChangedAfterSigningIsRefusedWithAndWithoutAKey) {
    Keys const keys;
    Entry const original = make_entry("model", kChunk + 1000);
    auto object = with_trailer(original, keys.signing);
    object[original.engine.size() - 10] ^= std::byte{0x01}; // in chunk 1
    RemoteReceiver keyless = receiver_for(object.size());
    feed_in_pieces(keyless, object, 65536);
    std::string const corrupt = message_of<CorruptEngineError>([&] { keyless.finish(); });
    EXPECT_NE(corrupt.find("the plan's XXH3-128 checksum is"), std::string::npos) << corrupt;
    expect_store_unchanged();

    RemoteReceiver trusting = receiver_for(object.size(), &keys.trusted);
    feed_in_pieces(trusting, object, 65536);
    try {
        (void)trusting.finish();
        ADD_FAILURE() << "a plan changed after signing was received";
    } catch (EngineCacheError const& error) {
        std::string const message = error.what();
        bool const named = message.find("the plan's XXH3-128 checksum is") != std::string::npos ||
                           message.find("does not hold what its signature vouches for: chunk 1") !=
                               std::string::npos;
        EXPECT_TRUE(named) << message;
    }
    expect_store_unchanged();
}

// Without a trusted key, a pull by name is refused from the header, before any plan byte; with
// one, at the end (the header is not decoded before the signature).
TEST_F(RemoteReceiverTest, APullByNameNeedsTheHeaderToHashToTheName) {
    Entry const other = make_entry("other");
    std::size_t const prefix = other.engine.size() - other.plan.size();
    RemoteReceiver wrong(store, std::string(kObject), entry.identity.file_name, other.engine.size(),
                         nullptr, nullptr);
    std::string const message = message_of<EngineConditionError>(
        [&] { wrong.feed(std::span(other.engine).first(prefix)); });
    EXPECT_NE(message.find("belong to the entry '" + other.identity.file_name), std::string::npos)
        << message;
    EXPECT_EQ(wrong.received(), 0U);
    EXPECT_TRUE(testing::names_in(store.directory()).empty());

    Keys const keys;
    auto const signed_other = with_trailer(other, keys.signing);
    RemoteReceiver trusting(store, std::string(kObject), entry.identity.file_name,
                            signed_other.size(), nullptr, &keys.trusted);
    feed_in_pieces(trusting, signed_other, 4096);
    EXPECT_THROW(trusting.finish(), UntrustedEngineError); // signed for its own name
    EXPECT_TRUE(testing::names_in(store.directory()).empty());

    RemoteReceiver right(store, std::string(kObject), entry.identity.file_name, entry.engine.size(),
                         nullptr, nullptr);
    feed_in_pieces(right, entry.engine, 4096);
    EXPECT_EQ(right.finish().verified.identity.digest, entry.identity.digest);
    EXPECT_EQ(testing::read_all(store.entry_path(entry.identity)), entry.engine);
}

TEST_F(RemoteReceiverTest, OnlyAPlainFileNameIsAccepted) {
    for (std::string const name : {"", ".", "..", "../outside.engine", "sub/entry.engine"}) {
        EXPECT_THROW(RemoteReceiver(store, std::string(kObject), name, entry.engine.size(), nullptr,
                                    nullptr),
                     InvalidArgument)
            << name;
    }
    EXPECT_TRUE(testing::names_in(store.directory()).empty());
    EXPECT_EQ(testing::names_in(directory.path()), std::vector<std::string>{"cache"});
}

} // namespace
} // namespace tensoracle
