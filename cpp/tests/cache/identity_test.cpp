// Tests of engine identities: stable digests, file names, and refusal of bad conditions.
#include "cache/identity.hpp"
#include "io/hash.hpp"
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

using nlohmann::json;

TEST(Identity, DigestIsTheHashOfTheCanonicalConditions) {
    json const conditions = {{"name", "example"}, {"graph_version", "1"}};
    auto const identity = make_identity(conditions);
    EXPECT_EQ(identity.digest, sha256_hex(canonical_json(conditions)));
    EXPECT_EQ(identity.file_name, "example-" + identity.digest + ".engine");
    EXPECT_EQ(identity.conditions, conditions);
}

TEST(Identity, KeyOrderDoesNotMatterButValuesDo) {
    auto const a = make_identity(json::parse(R"({"name":"m","v":"1","w":[1,2]})"));
    auto const b = make_identity(json::parse(R"({"w":[1,2],"v":"1","name":"m"})"));
    auto const c = make_identity(json::parse(R"({"w":[2,1],"v":"1","name":"m"})"));
    EXPECT_EQ(a.file_name, b.file_name);
    EXPECT_NE(a.file_name, c.file_name);
}

TEST(Identity, NamesAreMadeSafeAndShort) {
    auto const identity = make_identity({{"name", "../a b/\xC3\xA9:x.y-z_1"}});
    EXPECT_EQ(identity.file_name, ".._a_b____x.y-z_1-" + identity.digest + ".engine");
    auto const long_name = make_identity({{"name", std::string(200, 'n')}});
    EXPECT_EQ(long_name.file_name, std::string(64, 'n') + "-" + long_name.digest + ".engine");
}

TEST(Identity, NamesThatBecomeEqualStillDiffer) {
    auto const a = make_identity({{"name", "a/b"}});
    auto const b = make_identity({{"name", "a:b"}});
    EXPECT_EQ(a.file_name.substr(0, 4), "a_b-");
    EXPECT_NE(a.file_name, b.file_name);
}

TEST(Identity, RejectsBadConditions) {
    EXPECT_THROW(make_identity(json::array()), InvalidArgument);
    EXPECT_THROW(make_identity(json::object()), InvalidArgument);
    EXPECT_THROW(make_identity({{"name", ""}}), InvalidArgument);
    EXPECT_THROW(make_identity({{"name", 3}}), InvalidArgument);
    try {
        make_identity({{"name", "m"}, {"scale", 0.5}});
        FAIL() << "expected InvalidArgument";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("/scale"), std::string::npos);
    }
}

// A recipe declaring sm86,sm89 and `tensoracle build --targets sm89,sm86` name one engine.
TEST(Identity, TargetsInAnyOrderAreOneIdentity) {
    json conditions = {{"name", "m"}, {"targets", {"sm89", "sm120", "sm86"}}};
    auto const shuffled = make_identity(conditions);
    conditions["targets"] = {"sm86", "sm89", "sm120"};
    auto const declared = make_identity(conditions);
    EXPECT_EQ(shuffled.digest, declared.digest);
    EXPECT_EQ(shuffled.file_name, declared.file_name);
    // Sorted by compute capability, not by text (which would put sm120 first), so entries of
    // TensorRT-RTX's default set, saved in that order, keep their names.
    EXPECT_EQ(shuffled.conditions["targets"], json({"sm86", "sm89", "sm120"}));
    EXPECT_EQ(declared.digest, sha256_hex(canonical_json(conditions)));
    EXPECT_EQ(make_identity({{"name", "m"}, {"targets", json::array()}}).conditions["targets"],
              json::array());
    // Other sets still differ.
    conditions["targets"] = {"sm86", "sm89"};
    EXPECT_NE(make_identity(conditions).file_name, declared.file_name);
}

void expect_refused(json const& targets, std::string const& words) {
    try {
        make_identity({{"name", "m"}, {"targets", targets}});
        ADD_FAILURE() << "expected InvalidArgument for targets " << targets.dump();
    } catch (InvalidArgument const& error) {
        std::string const message = error.what();
        EXPECT_NE(message.find("\"targets\""), std::string::npos) << message;
        EXPECT_NE(message.find(words), std::string::npos) << message;
    }
}

TEST(Identity, RefusesRepeatedOrMisspelledTargets) {
    expect_refused({"sm89", "sm86", "sm89"}, "names \"sm89\" twice");
    expect_refused({"SM86"}, "holds \"SM86\"");
    expect_refused({"sm8x"}, "holds \"sm8x\"");
    expect_refused({"sm_89"}, "holds \"sm_89\"");
    expect_refused({"sm089"}, "holds \"sm089\"");
    expect_refused({"sm1200"}, "holds \"sm1200\"");
    expect_refused({"current"}, "holds \"current\"");
    expect_refused({86}, "holds 86");
    expect_refused("sm86", "must be an array");
}

// A header saved before targets were sorted still names its own file: the name is judged by
// the conditions as recorded, so nothing already saved turns unrecognized.
TEST(Identity, RecordedConditionsKeepTheirOrder) {
    json const recorded = {{"name", "m"}, {"targets", {"sm89", "sm86"}}};
    auto const as_saved = recorded_identity(recorded);
    EXPECT_EQ(as_saved.digest, sha256_hex(canonical_json(recorded)));
    EXPECT_EQ(as_saved.conditions, recorded);
    EXPECT_NE(as_saved.file_name, make_identity(recorded).file_name);
    EXPECT_THROW(recorded_identity({{"name", ""}}), InvalidArgument);
}

} // namespace
} // namespace tensoracle
