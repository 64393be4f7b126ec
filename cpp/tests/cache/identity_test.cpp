// Tests of engine identities: stable digests, file names, and refusal of bad conditions.
#include "tensoracle/cache/identity.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/io/hash.hpp"
#include "tensoracle/text/canonical_json.hpp"

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

} // namespace
} // namespace tensoracle
