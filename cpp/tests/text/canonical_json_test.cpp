// Tests of canonical JSON: key order, spacing, Unicode, and refusal of floats and bad UTF-8.
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <cstdint>
#include <gtest/gtest.h>
#include <limits>
#include <string>
#include <vector>

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

// The writer walks the value itself (plain text copied a run at a time); its bytes must be those
// of nlohmann's dump(-1, ' ', false, strict), for every byte a string can hold, at every place
// of an eight-byte word, and for every kind of value.
TEST(CanonicalJson, WritesTheBytesNlohmannsDumpWrites) {
    auto const dumped = [](json const& value) {
        return value.dump(-1, ' ', false, json::error_handler_t::strict);
    };
    std::vector<json> values = {nullptr,
                                true,
                                false,
                                0,
                                -1,
                                18446744073709551615ULL,
                                std::numeric_limits<std::int64_t>::min(),
                                "",
                                json::array(),
                                json::object(),
                                json::parse(R"({"b":[1,{"d":null,"c":"x"}],"a":{},"":[[]]})")};
    for (int byte = 1; byte < 0x80; ++byte) {
        for (std::size_t at = 0; at < 17; ++at) {
            std::string text(17, 'a');
            text[at] = static_cast<char>(byte);
            values.emplace_back(text);
            values.push_back(json::object({{text, text}}));
        }
    }
    for (std::string const text : {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
        values.emplace_back("plain and long enough " + text + " \n\" \x1f" + text);
    }
    for (json const& value : values) {
        std::string const text = dumped(value);
        EXPECT_EQ(canonical_json(value), text) << text;
        // The same walk compares without writing: the text itself, and nothing else.
        EXPECT_TRUE(is_canonical_json(value, text)) << text;
        EXPECT_FALSE(is_canonical_json(value, text + " ")) << text;
        EXPECT_FALSE(is_canonical_json(value, text.substr(0, text.size() - 1))) << text;
        std::string changed = text;
        changed[changed.size() / 2] ^= 0x01;
        EXPECT_FALSE(is_canonical_json(value, changed)) << text;
    }
}

// A string that is not UTF-8 is refused wherever it lies, with dump's words for the byte.
TEST(CanonicalJson, RefusesInvalidUtf8AnywhereInTheValue) {
    for (json const& value : {json("0123456789abcdef\xff"), json::array({"ok", "\xC3"}),
                              json::object({{"k", {{"\xED\xA0\x80", 1}}}})}) {
        try {
            canonical_json(value);
            ADD_FAILURE() << "accepted";
        } catch (InvalidArgument const& error) {
            EXPECT_NE(std::string(error.what()).find("UTF-8"), std::string::npos) << error.what();
        }
        // Compared with any text, the value is refused alike, not merely found different.
        EXPECT_THROW((void)is_canonical_json(value, "[]"), InvalidArgument);
    }
    EXPECT_THROW((void)is_canonical_json(json::array({1, 0.5}), "[1,0.5]"), InvalidArgument);
}

} // namespace
} // namespace tensoracle
