// parse_bounded_json and json_depth: the limits that keep hostile JSON from exhausting a node.
#include "tensoracle/text/bounded_json.hpp"
#include "tensoracle/text/utf8_text.hpp"

#include <gtest/gtest.h>
#include <string>

namespace tensoracle {
namespace {

std::string nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

std::string refusal(std::string_view text, JsonLimits limits) {
    try {
        parse_bounded_json(text, limits);
    } catch (JsonLimitError const& error) {
        std::string const message = error.what();
        EXPECT_TRUE(is_valid_utf8(message)) << message;
        return message;
    }
    ADD_FAILURE() << "accepted";
    return {};
}

TEST(BoundedJson, DepthUpToTheLimitIsParsedBeyondItRefused) {
    JsonLimits const limits{.max_bytes = 1 << 20};
    EXPECT_EQ(json_depth(parse_bounded_json(nested(kMaxJsonDepth), limits)), kMaxJsonDepth);
    std::string const message = refusal(nested(kMaxJsonDepth + 1), limits);
    EXPECT_NE(message.find("deeper than the limit of 64 levels"), std::string::npos) << message;
    // Objects count as arrays do.
    std::string objects;
    for (std::size_t i = 0; i <= kMaxJsonDepth; ++i) {
        objects += R"({"a":)";
    }
    objects += "1" + std::string(kMaxJsonDepth + 1, '}');
    EXPECT_NE(refusal(objects, limits).find("deeper"), std::string::npos);
}

TEST(BoundedJson, TwentyThousandLevelsAreRefusedWithoutACrash) {
    std::string const text = R"({"references":{"a":)" + nested(20'000) + "}}";
    EXPECT_NE(refusal(text, {.max_bytes = 1 << 20}).find("deeper"), std::string::npos);
}

TEST(BoundedJson, SizeIsCheckedBeforeParsing) {
    std::string const text = R"(")" + std::string(100, 'x') + R"(")";
    EXPECT_NO_THROW(parse_bounded_json(text, {.max_bytes = text.size()}));
    std::string const message = refusal(text, {.max_bytes = text.size() - 1});
    EXPECT_NE(message.find("102 bytes exceeds the limit of 101 bytes"), std::string::npos)
        << message;
}

TEST(BoundedJson, InvalidUtf8IsRefusedAndTheMessageIsValidUtf8) {
    std::string const message = refusal("{\"name\":\"a\xff\xfe\"}", {.max_bytes = 100});
    EXPECT_NE(message.find("\\xff"), std::string::npos) << message;
    EXPECT_NE(refusal(R"({"name":"\ud800"})", {.max_bytes = 100}).find("surrogate"),
              std::string::npos);
    // Overlong and surrogate encodings are not UTF-8 either.
    refusal("\"\xc0\xaf\"", {.max_bytes = 100});
    refusal("\"\xed\xa0\x80\"", {.max_bytes = 100});
}

TEST(JsonDepth, ScalarsAreZeroContainersCountTheirLevels) {
    EXPECT_EQ(json_depth(nlohmann::json(3)), 0U);
    EXPECT_EQ(json_depth(nlohmann::json::array()), 1U);
    EXPECT_EQ(json_depth(nlohmann::json{{"a", {1, {2, {3}}}}}), 4U);
}

TEST(Utf8Text, EscapesOnlyWhatIsNotWellFormed) {
    EXPECT_TRUE(is_valid_utf8("m\xc3\xbcnchen \xf0\x9f\x98\x80"));
    EXPECT_EQ(escape_invalid_utf8("m\xc3\xbcnchen"), "m\xc3\xbcnchen");
    EXPECT_EQ(escape_invalid_utf8("a\xff"
                                  "b\xc3"),
              "a\\xffb\\xc3");
    EXPECT_EQ(escape_invalid_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
    EXPECT_EQ(escape_invalid_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // > U+10FFFF
    EXPECT_FALSE(is_valid_utf8("\xe0\x80\xaf"));                                // overlong
}

} // namespace
} // namespace tensoracle
