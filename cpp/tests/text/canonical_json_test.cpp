// Tests of canonical JSON: key order, spacing, Unicode, and refusal of floats and bad UTF-8.
#include "tensoracle/errors.hpp"
#include "tensoracle/text/canonical_json.hpp"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

using nlohmann::json;

TEST(CanonicalJson, SortsKeysAtEveryDepthAndDropsWhiteSpace) {
    auto const a = json::parse(R"({"b": 1, "a": {"z": [1, 2, {"y": true, "x": null}], "c": "s"}})");
    EXPECT_EQ(canonical_json(a), R"({"a":{"c":"s","z":[1,2,{"x":null,"y":true}]},"b":1})");
}

TEST(CanonicalJson, KeyOrderOfTheInputDoesNotMatter) {
    auto const a = json::parse(R"({"name": "m", "shape": [1, -1], "opt": 3})");
    auto const b = json::parse(R"({"opt": 3, "shape": [1, -1], "name": "m"})");
    EXPECT_EQ(canonical_json(a), canonical_json(b));
}

TEST(CanonicalJson, OrdersKeysByBytesNotByLocale) {
    // "B" (0x42) < "a" (0x61) < "é" (0xC3 0xA9): byte order, with UTF-8 lead bytes last.
    json value = {{"\xC3\xA9", 1}, {"a", 2}, {"B", 3}};
    EXPECT_EQ(canonical_json(value), "{\"B\":3,\"a\":2,\"\xC3\xA9\":1}");
}

TEST(CanonicalJson, KeepsUnicodeAsUtf8AndEscapesControls) {
    json value = {{"text", "gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80 \"q\" \\ \n\x01"}};
    EXPECT_EQ(canonical_json(value),
              "{\"text\":\"gr\xC3\xBC\xC3\x9F \xF0\x9F\x98\x80 \\\"q\\\" \\\\ \\n\\u0001\"}");
    // An escaped spelling of the same text gives the same canonical bytes.
    EXPECT_EQ(canonical_json(json::parse(R"({"k":"\u00fc"})")),
              canonical_json(json::parse("{\"k\":\"\xC3\xBC\"}")));
}

TEST(CanonicalJson, RejectsInvalidUtf8) {
    json value = {{"text", std::string("\xFF\xFE")}};
    EXPECT_THROW(canonical_json(value), InvalidArgument);
}

TEST(CanonicalJson, KeepsIntegersExact) {
    json value = {{"big", std::uint64_t{18446744073709551615ULL}},
                  {"neg", std::int64_t{-9223372036854775807LL - 1}}};
    EXPECT_EQ(canonical_json(value), R"({"big":18446744073709551615,"neg":-9223372036854775808})");
}

TEST(CanonicalJson, RejectsFloatsNamingThePointer) {
    auto const value = json::parse(R"({"a": {"list": [1, 2.5]}})");
    try {
        canonical_json(value);
        FAIL() << "expected InvalidArgument";
    } catch (InvalidArgument const& error) {
        std::string const message = error.what();
        EXPECT_NE(message.find("/a/list/1"), std::string::npos) << message;
        EXPECT_NE(message.find("2.5"), std::string::npos) << message;
    }
    EXPECT_THROW(canonical_json(json(1.0)), InvalidArgument);
}

TEST(CanonicalJson, PointerEscapesSlashesInKeys) {
    json value = {{"a/b", 0.5}};
    try {
        canonical_json(value);
        FAIL() << "expected InvalidArgument";
    } catch (InvalidArgument const& error) {
        EXPECT_NE(std::string(error.what()).find("/a~1b"), std::string::npos) << error.what();
    }
}

} // namespace
} // namespace tensoracle
