// parse_bounded_json and json_depth: the limits that keep hostile JSON from exhausting a node
// (size, depth, values, judged by the pre-scan before anything is built), and the shapes that
// made the callback parser quadratic (many small objects, long arrays).
#include "cache/engine_file.hpp"
#include "text/bounded_json.hpp"
#include "text/utf8_text.hpp"

#include <cstdint>
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
    EXPECT_NE(message.find("deeper than the limit of 64 levels (level 65 opens)"),
              std::string::npos)
        << message;
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

// "[{},{},...]": nlohmann's callback parser scanned the whole array after each object (768 KB
// took 20 s); the count and the values must come out whole.
TEST(BoundedJson, AQuarterMillionEmptyObjectsParseIntoOneArray) {
    constexpr std::size_t kObjects = 256'000;
    std::string text = "[{}";
    for (std::size_t i = 1; i < kObjects; ++i) {
        text += ",{}";
    }
    text += "]";
    EXPECT_EQ(text.size(), 768'001U);
    nlohmann::json const value = parse_bounded_json(text, {.max_bytes = 1 << 20});
    ASSERT_TRUE(value.is_array());
    ASSERT_EQ(value.size(), kObjects);
    for (auto const& element : value) {
        ASSERT_TRUE(element.is_object());
        ASSERT_TRUE(element.empty());
    }
    EXPECT_EQ(json_depth(value), 2U);
}

TEST(BoundedJson, LongArraysAndWideObjectsKeepEveryElementInOrder) {
    constexpr std::size_t kCount = 200'000;
    std::string numbers = "[";
    std::string members = "{";
    for (std::size_t i = 0; i < kCount; ++i) {
        char const* separator = i == 0 ? "" : ",";
        numbers += separator + std::to_string(i);
        members += separator + ("\"k" + std::to_string(i) + "\":[" + std::to_string(i) + "]");
    }
    numbers += "]";
    members += "}";
    nlohmann::json const array = parse_bounded_json(numbers, {.max_bytes = 16 << 20});
    ASSERT_EQ(array.size(), kCount);
    for (std::size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(array[i].get<std::uint64_t>(), i);
    }
    nlohmann::json const object = parse_bounded_json(members, {.max_bytes = 16 << 20});
    ASSERT_EQ(object.size(), kCount);
    EXPECT_EQ(object.at("k0"), nlohmann::json::array({0}));
    EXPECT_EQ(object.at("k199999"), nlohmann::json::array({199'999}));
}

TEST(BoundedJson, ManyBranchesAtTheDepthLimitParseOneBeyondIsRefused) {
    JsonLimits const limits{.max_bytes = 1 << 20};
    // 1,000 siblings, each reaching exactly 64 levels with the array around them.
    std::string text = "[";
    for (int i = 0; i < 1000; ++i) {
        text += (i == 0 ? "" : ",") + nested(kMaxJsonDepth - 1);
    }
    text += "]";
    nlohmann::json const value = parse_bounded_json(text, limits);
    EXPECT_EQ(value.size(), 1000U);
    EXPECT_EQ(json_depth(value), kMaxJsonDepth);
    // The last sibling one level deeper: refused, however much came before.
    std::string const deeper = text.substr(0, text.size() - 1) + "," + nested(kMaxJsonDepth) + "]";
    EXPECT_NE(refusal(deeper, limits).find("deeper than the limit of 64 levels (level 65 opens)"),
              std::string::npos);
    // A lower limit is honoured the same way.
    EXPECT_EQ(json_depth(parse_bounded_json(nested(3), {.max_bytes = 100, .max_depth = 3})), 3U);
    EXPECT_NE(refusal(nested(4), {.max_bytes = 100, .max_depth = 3})
                  .find("deeper than the limit of 3 levels (level 4 opens)"),
              std::string::npos);
}

TEST(BoundedJson, GivesTheSameValueAsNlohmannsOwnParser) {
    std::string const text =
        R"( {"z": [null, true, false, 0, -1, 18446744073709551615, -9223372036854775808,)"
        R"( 2.5, -1e-300, 1E+2, "", "a\"b\\c\/\n\u00fc\ud83d\ude00"],)"
        R"( "a": {"nested": [[], {}, [{"k": "v"}]], "empty": {}}, "m\u00fcnchen": "x"} )";
    nlohmann::json const value = parse_bounded_json(text, {.max_bytes = 1000});
    EXPECT_EQ(value, nlohmann::json::parse(text));
    EXPECT_TRUE(value.at("z")[5].is_number_unsigned());
    EXPECT_TRUE(value.at("z")[6].is_number_integer());
    EXPECT_TRUE(value.at("z")[7].is_number_float());
    for (std::string const scalar : {"null", "true", "0", "-7", "3.25", R"("s")"}) {
        EXPECT_EQ(parse_bounded_json(scalar, {.max_bytes = 100}), nlohmann::json::parse(scalar))
            << scalar;
    }
}

TEST(BoundedJson, ARepeatedKeyKeepsItsLastValueAsNlohmannDoes) {
    std::string const text = R"({"a": {"deep": [1, 2]}, "b": 1, "a": [3]})";
    nlohmann::json const value = parse_bounded_json(text, {.max_bytes = 100});
    EXPECT_EQ(value, nlohmann::json::parse(text));
    EXPECT_EQ(value.at("a"), nlohmann::json::array({3}));
    EXPECT_EQ(value.size(), 2U);
}

TEST(BoundedJson, TheValueLimitCountsScalarsAndContainers) {
    // [1,{"a":[]}]: the array, 1, the object, its member's array: 4 values (keys are not).
    std::string const text = R"([1,{"a":[]}])";
    EXPECT_NO_THROW(parse_bounded_json(text, {.max_bytes = 100, .max_values = 4}));
    std::string const message = refusal(text, {.max_bytes = 100, .max_values = 3});
    EXPECT_NE(message.find("more values than the limit of 3"), std::string::npos) << message;
}

// [0,0,...]: `count` values, the array included.
std::string zeros(std::size_t count) {
    std::string text = "[";
    for (std::size_t i = 1; i < count; ++i) {
        text += i == 1 ? "0" : ",0";
    }
    return text + "]";
}

TEST(BoundedJson, ExactlyTheValueLimitIsParsedOneMoreRefused) {
    // The engine header's cap, at its exact count: the array and its elements.
    JsonLimits const limits{.max_bytes = kMaxHeaderBytes, .max_values = kMaxHeaderValues};
    nlohmann::json const value = parse_bounded_json(zeros(kMaxHeaderValues), limits);
    EXPECT_EQ(value.size(), kMaxHeaderValues - 1);
    std::string const message = refusal(zeros(kMaxHeaderValues + 1), limits);
    EXPECT_NE(message.find("holds more values than the limit of 262144"), std::string::npos)
        << message;
    // Every kind of value counts once; member names do not.
    std::string const mixed = R"({"a":[1,"s",null,true,{},[]],"b":{"c":2.5}})";
    EXPECT_NO_THROW(parse_bounded_json(mixed, {.max_bytes = 100, .max_values = 10}));
    EXPECT_NE(refusal(mixed, {.max_bytes = 100, .max_values = 9}).find("limit of 9"),
              std::string::npos);
}

// The red team's shape at the header's size limit: refused by the count, whatever comes after.
TEST(BoundedJson, SixteenMebibytesOfEmptyObjectsAreRefusedByTheValueLimit) {
    std::string text = "[{}";
    while (text.size() + 4 <= kMaxHeaderBytes) {
        text += ",{}";
    }
    text += "]";
    ASSERT_LE(text.size(), kMaxHeaderBytes);
    JsonLimits const limits{.max_bytes = kMaxHeaderBytes, .max_values = kMaxHeaderValues};
    std::string const message = refusal(text, limits);
    EXPECT_NE(message.find("holds more values than the limit of 262144"), std::string::npos)
        << message;
    // A syntax error after the first byte past the limit is never reached.
    text.back() = 'x';
    EXPECT_NE(refusal(text, limits).find("more values"), std::string::npos);
}

TEST(BoundedJson, BracketsQuotesAndBackslashesInsideStringsDoNotCount) {
    std::string const text = R"(["[[[[{{{{,,,,::::", "\"[[[[", "\\", "\"{{{{\\", "]]]]}}}}"])";
    // Six values (the array and five strings), one level: what is quoted is no structure.
    nlohmann::json const value =
        parse_bounded_json(text, {.max_bytes = 100, .max_depth = 1, .max_values = 6});
    EXPECT_EQ(value, nlohmann::json::parse(text));
    EXPECT_EQ(value[2], "\\");
    EXPECT_NE(refusal(text, {.max_bytes = 100, .max_values = 5}).find("limit of 5"),
              std::string::npos);
    // Member names are strings too: brackets in a key open nothing.
    std::string const keys = R"({"[[[[":{"\"]]]]\\":"{"}})";
    EXPECT_EQ(parse_bounded_json(keys, {.max_bytes = 100, .max_depth = 2, .max_values = 3}),
              nlohmann::json::parse(keys));
}

TEST(BoundedJson, DepthIsCountedAcrossObjectsAndArrays) {
    // {"a":[{"a":[...]}]}: objects and arrays alternate, each one level.
    auto alternating = [](std::size_t levels) {
        std::string open;
        std::string close;
        for (std::size_t i = 0; i < levels; ++i) {
            open += i % 2 == 0 ? R"({"a":)" : "[";
            close.insert(0, i % 2 == 0 ? "}" : "]");
        }
        return open + "0" + close;
    };
    JsonLimits const limits{.max_bytes = 1 << 20};
    EXPECT_EQ(json_depth(parse_bounded_json(alternating(kMaxJsonDepth), limits)), kMaxJsonDepth);
    std::string const message = refusal(alternating(kMaxJsonDepth + 1), limits);
    EXPECT_NE(message.find("deeper than the limit of 64 levels (level 65 opens)"),
              std::string::npos)
        << message;
    // Closing a level frees it: many siblings of depth 3 under a limit of 3.
    std::string siblings = "[";
    for (int i = 0; i < 100; ++i) {
        siblings += i == 0 ? R"({"b":[]})" : R"(,{"b":[]})";
    }
    siblings += "]";
    EXPECT_EQ(json_depth(parse_bounded_json(siblings, {.max_bytes = 2000, .max_depth = 3})), 3U);
    EXPECT_NE(refusal(siblings, {.max_bytes = 2000, .max_depth = 2}).find("level 3 opens"),
              std::string::npos);
}

// Which error a text that is both malformed and past a limit gets (bounded_json.cpp says why).
TEST(BoundedJson, BrokenStructureBeforeALimitIsTheParsersSyntaxError) {
    std::string const deep = nested(kMaxJsonDepth + 1);
    JsonLimits const limits{.max_bytes = 1000, .max_values = 100};
    auto syntax_error_at = [&](std::string const& text) -> std::size_t {
        try {
            parse_bounded_json(text, limits);
        } catch (JsonSyntaxError const& error) {
            return error.offset();
        } catch (JsonLimitError const& error) {
            ADD_FAILURE() << text.substr(0, 20) << ": " << error.what();
            return 0;
        }
        ADD_FAILURE() << "accepted";
        return 0;
    };
    EXPECT_EQ(syntax_error_at("[1 2," + deep + "]"), 3U);      // a value where a comma belongs
    EXPECT_EQ(syntax_error_at("[,," + deep + "]"), 1U);        // a comma where a value belongs
    EXPECT_EQ(syntax_error_at("{\"a\" 1," + deep + "}"), 5U);  // no colon
    EXPECT_EQ(syntax_error_at("[\x01" + deep + "]"), 1U);      // a byte JSON has only in strings
    EXPECT_EQ(syntax_error_at("[1]]" + deep), 3U);             // an unmatched bracket
    EXPECT_EQ(syntax_error_at("[\"" + deep), deep.size() + 2); // a string that never ends
    EXPECT_EQ(syntax_error_at(zeros(50) + zeros(200)), zeros(50).size()); // text after it
    // Inside a scalar or a string, only the parser looks: the structure passes the limit first.
    EXPECT_NE(refusal("[01," + deep + "]", limits).find("deeper"), std::string::npos);
    EXPECT_NE(refusal("[\"\\x\"," + deep + "]", limits).find("deeper"), std::string::npos);
    EXPECT_NE(refusal("[tru," + zeros(200) + "]", limits).find("more values"), std::string::npos);
}

// Where the parser stopped, as Python's json.JSONDecodeError counts it (0-based), and whether the
// text was not JSON (JsonSyntaxError) or JSON beyond what a double holds.
std::size_t syntax_offset(std::string_view text) {
    try {
        parse_bounded_json(text, {.max_bytes = 1000});
    } catch (JsonSyntaxError const& error) {
        EXPECT_TRUE(is_valid_utf8(error.what())) << error.what();
        return error.offset();
    } catch (JsonLimitError const& error) {
        ADD_FAILURE() << "not a syntax error: " << error.what();
        return 0;
    }
    ADD_FAILURE() << "accepted: " << text;
    return 0;
}

TEST(BoundedJson, ASyntaxErrorSaysAtWhichByteTheParserStopped) {
    EXPECT_EQ(syntax_offset(R"({"schema_version": 1,)"), 21U); // the end: more was expected
    EXPECT_EQ(syntax_offset("[1] x"), 4U);
    EXPECT_EQ(syntax_offset("{\"a\": \"\xff\"}"), 7U); // the byte that is not UTF-8
    EXPECT_EQ(syntax_offset(""), 0U);
    EXPECT_EQ(syntax_offset("   "), 3U);
    EXPECT_EQ(syntax_offset("[NaN]"), 1U);
    EXPECT_EQ(syntax_offset(R"(["\ud800"])"), 8U);
    // A number beyond a double is JSON, only not one a double holds: refused, not a syntax error.
    try {
        parse_bounded_json("[1e400]", {.max_bytes = 100});
        ADD_FAILURE() << "accepted";
    } catch (JsonSyntaxError const& error) {
        ADD_FAILURE() << "a syntax error: " << error.what();
    } catch (JsonLimitError const& error) {
        EXPECT_NE(std::string(error.what()).find("number overflow"), std::string::npos)
            << error.what();
    }
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
