// Signed deployment manifests: the publisher's signature decides which engine runs. Each attack
// the trust model names is tried against the reader an application uses (read_manifest with
// OpenOptions, then DeployedEngine::open) and must end in a refusal naming what failed.
#include "cache/identity.hpp"
#include "cache/store.hpp"
#include "deploy/manifest_envelope.hpp"
#include "deploy/manifest_signing.hpp"
#include "io/hash.hpp"
#include "remote/signature.hpp"
#include "support/deploy_fixture.hpp"
#include "support/error_message.hpp"
#include "support/scoped_environment.hpp"
#include "support/signing_keys.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/signed_manifest.hpp"
#include "tensoracle/deploy/trust_policy.hpp"
#include "tensoracle/errors.hpp"
#include "text/base64.hpp"
#include "text/size_text.hpp"

#include <cstring>
#include <fstream>
#include <gtest/gtest.h>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;
using testing::message_of;

constexpr char const* kSpec = "encoders.recipes:RECIPES";
constexpr char const* kLater = "2099-01-01T00:00:00Z";

Json conditions(std::string const& graph_version) {
    return testing::encoder_conditions(graph_version);
}

Json io_signature() {
    return testing::encoder_io();
}

// Signing keys made from their PEM texts (SigningKey is move-only).
std::vector<SigningKey> keys_of(std::initializer_list<std::string const*> pems) {
    std::vector<SigningKey> keys;
    keys.reserve(pems.size());
    for (std::string const* pem : pems) {
        keys.push_back(SigningKey::from_pem(*pem, "key"));
    }
    return keys;
}

void write_text(std::filesystem::path const& path, std::string const& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// A cache folder with the entries of recipe "encoder" at graph versions "3" (the current
// release) and "2" (an older one, also signed in its day), and the plain manifest the build
// writes for one of them.
struct Publication {
    testing::TemporaryDirectory folder;
    std::filesystem::path cache = folder.path() / "cache";
    // SigningKey does not give its private key back: the texts are kept to make copies.
    std::string publisher_pem = testing::new_private_key_pem();
    std::string second_pem = testing::new_private_key_pem();
    std::string stranger_pem = testing::new_private_key_pem();
    SigningKey publisher = SigningKey::from_pem(publisher_pem, "publisher");
    SigningKey second = SigningKey::from_pem(second_pem, "second");
    SigningKey stranger = SigningKey::from_pem(stranger_pem, "stranger");
    std::filesystem::path verify_key = folder.path() / "publisher.pem";
    std::filesystem::path plain = folder.path() / "deploy.json";
    std::filesystem::path signed_path = folder.path() / "deploy.signed.json";
    std::vector<std::byte> plan = testing::random_bytes(4096, 3);
    std::vector<std::byte> old_plan = testing::random_bytes(4096, 2);
    ManifestEntry current;
    ManifestEntry older;

    Publication() {
        write_text(verify_key, publisher.public_key_pem());
        Store const store(cache);
        current = save(store, "3", plan);
        older = save(store, "2", old_plan);
        write_text(plain, plain_manifest(current).dump(2));
    }

    static ManifestEntry save(Store const& store, std::string const& graph_version,
                              std::vector<std::byte> const& bytes) {
        EngineIdentity const identity = recorded_identity(conditions(graph_version));
        auto const path = store.save(identity, {{"io", io_signature()}}, bytes);
        ManifestEntry entry = testing::manifest_entry_of(path, identity, io_signature());
        entry.graph_version = graph_version;
        return entry;
    }

    // The plain manifest of `entry`, as tensoracle build --manifest writes it.
    static Json plain_manifest(ManifestEntry const& entry) {
        Json const recorded = Json::parse(entry.conditions_json);
        Json item = {{"recipe", "encoder"},
                     {"graph_version", entry.graph_version},
                     {"file_name", entry.file_name},
                     {"conditions", recorded},
                     {"backend", recorded["backend"]},
                     {"backend_version", recorded["backend_version"]},
                     {"targets", recorded["targets"]},
                     {"hardware_compatibility", nullptr},
                     {"io", io_signature()},
                     {"plan", {{"size", entry.plan_size}, {"xxh3_128", entry.plan_xxh3_128}}},
                     {"engine_bytes", entry.engine_bytes},
                     {"sha256", *entry.sha256},
                     {"header_sha256", *entry.header_sha256},
                     {"fleet", nullptr}};
        return {{"schema_version", 1}, {"spec", kSpec}, {"remote", nullptr}, {"entries", {item}}};
    }

    // The signed manifest of `entry` at `version`, by `keys`.
    std::string signed_text(ManifestEntry const& entry, std::uint64_t version,
                            std::vector<SigningKey const*> const& keys,
                            std::string const& expires = kLater) const {
        std::vector<SigningKey> copies;
        copies.reserve(keys.size());
        for (SigningKey const* key : keys) {
            copies.push_back(SigningKey::from_pem(private_pem(*key), "key"));
        }
        return sign_manifest(plain_manifest(entry).dump(), "deploy.json",
                             ManifestRelease{version, expires}, copies);
    }

    std::string private_pem(SigningKey const& key) const {
        if (&key == &publisher) {
            return publisher_pem;
        }
        return &key == &second ? second_pem : stranger_pem;
    }

    OpenOptions options() const {
        OpenOptions options;
        options.cache_directory = cache;
        options.verify_key = verify_key;
        return options;
    }

    Manifest read(std::string const& text, OpenOptions const& options) const {
        write_text(signed_path, text);
        return read_manifest(signed_path, options);
    }
};

std::unique_ptr<Publication> publication() {
    return std::make_unique<Publication>();
}

std::string fingerprint(SigningKey const& key) {
    return VerifyKey::from_pem(key.public_key_pem(), "key").fingerprint();
}

TEST(SignedManifest, AVerifiedManifestBindsItsEntryAndTheEntryOpensAsItsFile) {
    auto const p = publication();
    Manifest const manifest = p->read(p->signed_text(p->current, 7, {&p->publisher}), p->options());
    ASSERT_TRUE(manifest.release.has_value());
    EXPECT_EQ(manifest.release->version, 7U);
    EXPECT_EQ(manifest.release->expires, kLater);
    EXPECT_EQ(manifest.signers, std::vector<std::string>{fingerprint(p->publisher)});
    ASSERT_EQ(manifest.entries.size(), 1U);
    EXPECT_EQ(manifest.entries[0].manifest_signers, manifest.signers);
    for (bool const streamed : {false, true}) {
        OpenOptions options = p->options();
        options.stream_plan = streamed;
        DeployedEngine const engine = DeployedEngine::open(manifest.entries[0], options);
        EXPECT_EQ(engine.signer(), fingerprint(p->publisher));
        EXPECT_EQ(engine.streamed(), streamed);
    }
}

// The rollback and swap of the reproduction: the manifest can name only what its publisher
// signed. An edited payload (the older entry put in) fails every signature; the file of the
// newer entry replaced by the older engine's bytes is not the file the signed manifest names.
TEST(SignedManifest, AnEntrySwappedInThePayloadOrInTheCacheFolderIsRefused) {
    auto const p = publication();
    Json envelope = Json::parse(p->signed_text(p->current, 7, {&p->publisher}));
    auto const payload = base64_decode(envelope["payload"].get<std::string>());
    ASSERT_TRUE(payload.has_value());
    Json statement =
        Json::parse(std::string(reinterpret_cast<char const*>(payload->data()), payload->size()));
    Json const older = Publication::plain_manifest(p->older)["entries"][0];
    statement["predicate"]["entries"][0] = older;
    statement["subject"][0] = {{"name", p->older.file_name},
                               {"digest", {{"sha256", *p->older.sha256}}}};
    std::string const edited = statement.dump();
    envelope["payload"] = base64_encode(std::as_bytes(std::span(edited)));
    std::string const message =
        message_of<UntrustedEngineError>([&] { (void)p->read(envelope.dump(), p->options()); });
    EXPECT_NE(message.find("0 of the trust policy's keys (none) signed the manifest, and it "
                           "requires 1 of 1"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(fingerprint(p->publisher)), std::string::npos) << message; // claimed

    Manifest const manifest = p->read(p->signed_text(p->current, 7, {&p->publisher}), p->options());
    auto const older_bytes = testing::read_all(p->cache / p->older.file_name);
    std::filesystem::remove(p->cache / p->current.file_name);
    std::filesystem::copy_file(p->cache / p->older.file_name, p->cache / p->current.file_name);
    for (bool const streamed : {false, true}) {
        OpenOptions options = p->options();
        options.stream_plan = streamed;
        std::string const refusal = message_of<UntrustedEngineError>(
            [&] { (void)DeployedEngine::open(manifest.entries[0], options); });
        EXPECT_NE(
            refusal.find(
                "is not the file the signed manifest names: the SHA-256 of its "
                "preamble and header is " +
                sha256_hex(std::span(older_bytes).first(older_bytes.size() - p->old_plan.size()))),
            std::string::npos)
            << refusal;
    }
}

TEST(SignedManifest, ALowerVersionThanTheCacheFolderAcceptedIsRefusedNamingBoth) {
    auto const p = publication();
    (void)p->read(p->signed_text(p->current, 8, {&p->publisher}), p->options());
    std::string const older = p->signed_text(p->older, 7, {&p->publisher});
    std::string const message =
        message_of<UntrustedEngineError>([&] { (void)p->read(older, p->options()); });
    EXPECT_NE(message.find("version 7 of " + std::string(kSpec) +
                           " is lower than version 8, which this cache folder accepted before"),
              std::string::npos)
        << message;
    Refusal const refusal =
        testing::refusal_of<UntrustedEngineError>([&] { (void)p->read(older, p->options()); });
    EXPECT_EQ(refusal.field, "predicate.version");
    EXPECT_EQ(refusal.observed, "7");
    EXPECT_EQ(refusal.expected.rfind("at least 8, which this cache folder accepted before (", 0),
              0U)
        << refusal.expected;
    // The same version again, and a later one, are accepted; the record keeps the highest.
    (void)p->read(p->signed_text(p->current, 8, {&p->publisher}), p->options());
    (void)p->read(p->signed_text(p->current, 9, {&p->publisher}), p->options());
    auto const bytes = testing::read_all(p->cache / kManifestVersionsFile);
    Json const record =
        Json::parse(std::string(reinterpret_cast<char const*>(bytes.data()), bytes.size()));
    EXPECT_EQ(record["specs"][kSpec]["version"], 9);
    // Another cache folder has its own record.
    OpenOptions elsewhere = p->options();
    elsewhere.cache_directory = p->folder.path() / "other-cache";
    EXPECT_NO_THROW((void)p->read(older, elsewhere));
}

TEST(SignedManifest, AMinimumVersionIsAppliedFromTheOptionsAndFromThePolicy) {
    auto const p = publication();
    OpenOptions options = p->options();
    options.minimum_version = 10;
    std::string const message = message_of<UntrustedEngineError>(
        [&] { (void)p->read(p->signed_text(p->current, 9, {&p->publisher}), options); });
    EXPECT_NE(message.find("version 9 is lower than the minimum version 10 required"),
              std::string::npos)
        << message;
    EXPECT_NO_THROW((void)p->read(p->signed_text(p->current, 10, {&p->publisher}), options));
}

TEST(SignedManifest, AnExpiredManifestIsRefusedNamingWhen) {
    auto const p = publication();
    std::string const text = p->signed_text(p->current, 7, {&p->publisher}, "2026-01-01T00:00:00Z");
    TrustPolicy const policy = single_key_policy(p->publisher.public_key_pem(), "publisher");
    EXPECT_NO_THROW((void)verify_signed_manifest(text, "deploy.json", policy,
                                                 parse_utc_time("2025-12-31T23:59:59Z", "now")));
    std::string const message = message_of<UntrustedEngineError>([&] {
        (void)verify_signed_manifest(text, "deploy.json", policy,
                                     parse_utc_time("2026-01-01T00:00:00Z", "now"));
    });
    EXPECT_NE(message.find("the signed manifest expired at 2026-01-01T00:00:00Z (it is now "
                           "2026-01-01T00:00:00Z)"),
              std::string::npos)
        << message;
    Refusal const refusal = testing::refusal_of<UntrustedEngineError>([&] {
        (void)verify_signed_manifest(text, "deploy.json", policy,
                                     parse_utc_time("2026-01-01T00:00:01Z", "now"));
    });
    EXPECT_EQ(testing::fields_of(refusal),
              "subject=deploy.json | field=predicate.expires | observed=2026-01-01T00:00:00Z | "
              "expected=a time after 2026-01-01T00:00:01Z | remedy=ask its publisher for a "
              "current one");
}

TEST(SignedManifest, AnUnsignedManifestIsRefusedWhenAKeyIsGivenAndReadAsBeforeWithoutOne) {
    auto const p = publication();
    std::string const message =
        message_of<UntrustedEngineError>([&] { (void)read_manifest(p->plain, p->options()); });
    EXPECT_NE(message.find("is not signed, and a verify key or trust policy is set"),
              std::string::npos)
        << message;
    Refusal const refusal = testing::refusal_of<UntrustedEngineError>(
        [&] { (void)read_manifest(p->plain, p->options()); });
    EXPECT_EQ(refusal.subject, p->plain.string());
    EXPECT_EQ(refusal.observed, "a manifest that is not signed");
    EXPECT_EQ(refusal.expected, "a signed manifest");
    OpenOptions none;
    none.cache_directory = p->cache;
    Manifest const manifest = read_manifest(p->plain, none);
    EXPECT_FALSE(manifest.release.has_value());
    EXPECT_TRUE(manifest.entries.at(0).manifest_signers.empty());
}

TEST(SignedManifest, ASignedManifestWithoutAKeyIsRefusedUnlessTheCheckIsSkipped) {
    auto const p = publication();
    std::string const text = p->signed_text(p->current, 7, {&p->publisher});
    OpenOptions none;
    none.cache_directory = p->cache;
    std::string const message =
        message_of<UntrustedEngineError>([&] { (void)p->read(text, none); });
    EXPECT_NE(message.find("is a signed manifest, but no verify key or trust policy is set"),
              std::string::npos)
        << message;
    none.skip_signature_verification = true;
    Manifest const manifest = p->read(text, none);
    EXPECT_TRUE(manifest.signers.empty());
    EXPECT_TRUE(manifest.entries.at(0).manifest_signers.empty()); // not bound: read unverified
    EXPECT_FALSE(std::filesystem::exists(p->cache / kManifestVersionsFile));
}

// M of N: a policy of two keys with threshold 2 needs both; a co-signature adds the second over
// the same payload; a stranger's signature never counts.
TEST(SignedManifest, AThresholdPolicyCountsEachTrustedKeyOnceAndNamesWhoSigned) {
    auto const p = publication();
    std::filesystem::path const policy = p->folder.path() / "policy.json";
    Json const document = {{"schema_version", 1},
                           {"threshold", 2},
                           {"keys",
                            {{fingerprint(p->publisher), p->publisher.public_key_pem()},
                             {fingerprint(p->second), p->second.public_key_pem()}}}};
    write_text(policy, document.dump());
    OpenOptions options;
    options.cache_directory = p->cache;
    options.trust_policy = policy;
    std::string const once = p->signed_text(p->current, 7, {&p->publisher, &p->stranger});
    std::string const message =
        message_of<UntrustedEngineError>([&] { (void)p->read(once, options); });
    EXPECT_NE(message.find("1 of the trust policy's keys (" + fingerprint(p->publisher) +
                           ") signed the manifest, and it requires 2 of 2"),
              std::string::npos)
        << message;
    std::string const cosigned = sign_manifest(once, "deploy.json", std::nullopt,
                                               keys_of({&p->second_pem, &p->publisher_pem}));
    EXPECT_EQ(Json::parse(cosigned)["payload"], Json::parse(once)["payload"]);
    EXPECT_EQ(Json::parse(cosigned)["signatures"].size(), 3U); // publisher signed once, not twice
    Manifest const manifest = p->read(cosigned, options);
    EXPECT_EQ(manifest.signers.size(), 2U);
}

// An application's environment names the policy as it names the verify key; the policy, which
// lists every key it trusts, is the manifest's trust when both are set (the fleet's verify key
// may be set for `cache pull` as well).
TEST(TrustPolicy, TheEnvironmentNamesThePolicyAndItTakesPrecedenceOverTheVerifyKey) {
    testing::ScopedEnvironment const key(kVerifyKeyVariable, "/keys/fleet.pem");
    {
        testing::ScopedEnvironment const policy(kTrustPolicyVariable, "/keys/policy.json");
        OpenOptions const options = options_from_environment();
        EXPECT_EQ(options.trust_policy, std::filesystem::path("/keys/policy.json"));
        EXPECT_TRUE(options.verify_key.empty());
        EXPECT_TRUE(options.verify_key_pem.empty());
    }
    testing::ScopedEnvironment const unset(kTrustPolicyVariable, std::nullopt);
    OpenOptions const options = options_from_environment();
    EXPECT_TRUE(options.trust_policy.empty());
    EXPECT_EQ(options.verify_key, std::filesystem::path("/keys/fleet.pem"));
}

// A threshold counts keys, not entries: one key listed twice (under two ids, as a policy built in
// code or `manifest verify --key K --key K` can list it) is one signer.
TEST(TrustPolicy, AKeyListedTwiceCountsOnceTowardsTheThreshold) {
    auto const p = publication();
    std::string const text = p->signed_text(p->current, 7, {&p->publisher});
    std::string const pem = p->publisher.public_key_pem();
    TrustPolicy const twice{{{fingerprint(p->publisher), pem}, {"another-id", pem}}, 2, 0};
    std::string const message = message_of<UntrustedEngineError>(
        [&] { (void)verify_signed_manifest(text, "deploy.json", twice, 0); });
    EXPECT_NE(message.find("1 of the trust policy's keys (" + fingerprint(p->publisher) +
                           ") signed the manifest, and it requires 2 of 2"),
              std::string::npos)
        << message;
}

TEST(TrustPolicy, EachWrongFieldIsRefusedNamingIt) {
    auto const p = publication();
    std::string const pem = p->publisher.public_key_pem();
    auto refusal = [](Json const& document) {
        return message_of<InvalidArgument>(
            [&] { (void)parse_trust_policy(document.dump(), "policy.json"); });
    };
    EXPECT_NE(
        refusal({{"schema_version", 1}, {"threshold", 1}, {"keys", {{"0123456789abcdef", pem}}}})
            .find("policy.json: keys[\"0123456789abcdef\"]: the key id is not this key's "
                  "fingerprint, " +
                  fingerprint(p->publisher)),
        std::string::npos);
    EXPECT_NE(
        refusal(
            {{"schema_version", 1}, {"threshold", 2}, {"keys", {{fingerprint(p->publisher), pem}}}})
            .find("policy.json: threshold is 2, expected 1 to the number of keys, 1"),
        std::string::npos);
    EXPECT_NE(refusal({{"schema_version", 1}, {"threshold", 1}, {"keys", Json::object()}})
                  .find("policy.json: keys is {}"),
              std::string::npos);
    EXPECT_NE(refusal({{"schema_version", 2}}).find("policy.json: schema_version is 2"),
              std::string::npos);
}

TEST(SignedManifest, SigningRefusesAnEntryWithoutItsFileDigests) {
    auto const p = publication();
    Json document = Publication::plain_manifest(p->current);
    document["entries"][0].erase("header_sha256");
    std::string const message = message_of<InvalidArgument>([&] {
        (void)sign_manifest(document.dump(), "deploy.json", ManifestRelease{1, kLater},
                            keys_of({&p->publisher_pem}));
    });
    EXPECT_NE(message.find("deploy.json: entries[0] (" + p->current.file_name +
                           ") records no header_sha256"),
              std::string::npos)
        << message;
}

TEST(SignedManifest, TheStatementNamesEachFileByTheSha256OfItsBytes) {
    auto const p = publication();
    Json const envelope = Json::parse(p->signed_text(p->current, 7, {&p->publisher}));
    EXPECT_EQ(envelope["payloadType"], "application/vnd.in-toto+json");
    auto const payload = base64_decode(envelope["payload"].get<std::string>());
    ASSERT_TRUE(payload.has_value());
    Json const statement =
        Json::parse(std::string(reinterpret_cast<char const*>(payload->data()), payload->size()));
    EXPECT_EQ(statement["_type"], "https://in-toto.io/Statement/v1");
    ASSERT_EQ(statement["subject"].size(), 1U);
    EXPECT_EQ(statement["subject"][0]["name"], p->current.file_name);
    EXPECT_EQ(statement["subject"][0]["digest"]["sha256"],
              sha256_hex(testing::read_all(p->cache / p->current.file_name)));
    EXPECT_EQ(statement["predicate"]["version"], 7);
    EXPECT_EQ(envelope["signatures"][0]["keyid"], fingerprint(p->publisher));
}

} // namespace
} // namespace tensoracle::deploy
