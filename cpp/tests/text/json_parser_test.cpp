// The reader of JSON text (src/text/json_parser.cpp, through parse_bounded_json) against
// nlohmann::json::parse, which it replaced: for every text here both accept it and build the
// same value (the same types of numbers too), or both refuse it at the same byte, or both find a
// number beyond a double. The texts: hand-picked cases of every rule of the grammar, every prefix
// of a few documents (a text cut anywhere), and every document with one byte replaced by each of a
// set of bytes that matter to JSON.
#include "text/bounded_json.hpp"
#include "text/utf8_text.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle {
namespace {

using nlohmann::json;

struct Outcome {
    enum class Kind : std::uint8_t { value, syntax_error, overflow };
    Kind kind = Kind::value;
    json value;
    std::size_t offset = 0;
    std::string message;
};

Outcome accepted(json value) {
    Outcome outcome;
    outcome.value = std::move(value);
    return outcome;
}

Outcome refused(Outcome::Kind kind, std::string message, std::size_t offset = 0) {
    Outcome outcome;
    outcome.kind = kind;
    outcome.message = std::move(message);
    outcome.offset = offset;
    return outcome;
}

Outcome ours(std::string const& text) {
    try {
        return accepted(parse_bounded_json(text, {.max_bytes = 1U << 22U}));
    } catch (JsonSyntaxError const& error) {
        return refused(Outcome::Kind::syntax_error, error.what(), error.offset());
    } catch (JsonLimitError const& error) {
        return refused(Outcome::Kind::overflow, error.what());
    }
}

Outcome nlohmanns(std::string const& text) {
    try {
        return accepted(json::parse(text));
    } catch (json::parse_error const& error) {
        // `byte` counts the bytes read, the one the parser stopped at included.
        return refused(Outcome::Kind::syntax_error, error.what(), error.byte - 1);
    } catch (json::out_of_range const& error) {
        return refused(Outcome::Kind::overflow, error.what());
    }
}

// Equal values of equal types all the way down (json's == takes 1, 1u and 1.0 for equal).
bool same(json const& a, json const& b) {
    if (a.type() != b.type()) {
        return false;
    }
    if (a.is_object()) {
        if (a.size() != b.size()) {
            return false;
        }
        for (auto const& [key, member] : a.items()) {
            if (!b.contains(key) || !same(member, b.at(key))) {
                return false;
            }
        }
        return true;
    }
    if (a.is_array()) {
        if (a.size() != b.size()) {
            return false;
        }
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (!same(a[i], b[i])) {
                return false;
            }
        }
        return true;
    }
    return a == b;
}

std::string shown(std::string const& text) {
    return escape_invalid_utf8(text.substr(0, 80));
}

// Checks one text; returns whether both agreed.
bool agree(std::string const& text) {
    Outcome const mine = ours(text);
    Outcome const theirs = nlohmanns(text);
    if (mine.kind != theirs.kind) {
        ADD_FAILURE() << "text " << shown(text) << ": ours " << static_cast<int>(mine.kind) << " ("
                      << mine.message << "), nlohmann's " << static_cast<int>(theirs.kind) << " ("
                      << escape_invalid_utf8(theirs.message) << ")";
        return false;
    }
    if (mine.kind == Outcome::Kind::value && !same(mine.value, theirs.value)) {
        ADD_FAILURE() << "text " << shown(text) << ": ours " << mine.value.dump() << ", nlohmann's "
                      << theirs.value.dump();
        return false;
    }
    if (mine.kind == Outcome::Kind::syntax_error && mine.offset != theirs.offset) {
        ADD_FAILURE() << "text " << shown(text) << ": ours refused at " << mine.offset << " ("
                      << mine.message << "), nlohmann's at " << theirs.offset << " ("
                      << escape_invalid_utf8(theirs.message) << ")";
        return false;
    }
    if (mine.kind != Outcome::Kind::value) {
        EXPECT_TRUE(is_valid_utf8(mine.message)) << shown(mine.message);
    }
    return true;
}

std::vector<std::string> const kCases = {
    // White space, the byte order mark, top-level scalars, text after the value.
    "",
    " ",
    " \t\r\n[ ]\n",
    "\xEF\xBB\xBF[]",
    "\xEF\xBB\xBF",
    "\xEF\xBB[]",
    "\xEF[]",
    "\xEF",
    "[]\xEF\xBB\xBF",
    "1",
    "-1",
    "\"a\"",
    "true",
    "false",
    "null",
    "[1] x",
    "[1] 2",
    "{} {}",
    "[1]]",
    "\x0b[]",
    "[1]\x0c",
    "\xC3\xA9",
    "\x80",
    // Literals.
    "[tru]",
    "[tru",
    "[t]",
    "[truex]",
    "[nul]",
    "[fals]",
    "[falsey]",
    "[True]",
    "[NaN]",
    "[Infinity]",
    "[-Infinity]",
    "[nulll]",
    "[n",
    "[f",
    "nul",
    // Numbers: JSON's grammar and nlohmann's types (unsigned, signed, double).
    "0",
    "-0",
    "00",
    "01",
    "-01",
    "1.",
    "1.5",
    ".5",
    "-.5",
    "1e5",
    "1E+5",
    "1e-5",
    "-1e-5",
    "1e",
    "1e+",
    "1e-",
    "1E",
    "-",
    "--1",
    "+1",
    "0x10",
    "1.0e",
    "1.e5",
    "0.0",
    "-0.0",
    "123abc",
    "1 2",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "9223372036854775807",
    "9223372036854775808",
    "1e400",
    "-1e400",
    "1e-400",
    "-1e-400",
    "4.9e-324",
    "2.4703282292062327e-324",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "0.1",
    "123456789012345678901234567890",
    "-123456789012345678901234567890",
    "[1,-0,0.5,1e2]",
    "[0e0]",
    "[0E-0]",
    "[1.5e+10]",
    // Strings: escapes, \u escapes and surrogates, UTF-8, control characters.
    R"(["\"\\\/\b\f\n\r\t"])",
    R"(["\a"])",
    R"(["\x41"])",
    R"(["\u0041\u00e9\u20ac"])",
    R"(["\u0000"])",
    R"(["\uD83D\uDE00"])",
    R"(["\ud83d\ude00"])",
    R"(["\ud800"])",
    R"(["\ud800\u0041"])",
    R"(["\ud800\ud800"])",
    R"(["\udc00"])",
    R"(["\ud800x"])",
    R"(["\ud800\x"])",
    R"(["\u00"])",
    R"(["\u00g0"])",
    R"(["\uDBFF\uDFFF"])",
    R"(["\u"])",
    "[\"\\ud800",
    "[\"\\ud800\\",
    "[\"\\ud800\\u",
    "[\"\\ud800\\udc",
    "[\"\\",
    "[\"\\u12",
    "[\"abc",
    "\"",
    "[\"a\x01\"]",
    "[\"a\x1f\"]",
    "[\"a\x7f\"]",
    "[\"\t\"]",
    "[\"\n\"]",
    "[\"\xC3\xA9\"]",
    "[\"\xE2\x82\xAC\"]",
    "[\"\xF0\x9F\x98\x80\"]",
    "[\"\xF4\x8F\xBF\xBF\"]",
    "[\"\xF4\x90\x80\x80\"]",
    "[\"\xC0\xAF\"]",
    "[\"\xC1\xBF\"]",
    "[\"\xC2\"]",
    "[\"\xC2",
    "[\"\xE0\x80\x80\"]",
    "[\"\xE0\xA0\x80\"]",
    "[\"\xED\xA0\x80\"]",
    "[\"\xED\x9F\xBF\"]",
    "[\"\xEF\xBF\xBF\"]",
    "[\"\xF0\x8F\xBF\xBF\"]",
    "[\"\xF0\x90\x80\x80\"]",
    "[\"\xF5\x80\x80\x80\"]",
    "[\"\xFF\"]",
    "[\"\x80\"]",
    "[\"\xE2\x82\"]",
    "[\"\xE2\x82",
    "[\"\xF0\x9F\x98\"]",
    "[\"a\xff\xfe\"]",
    "[\"0123456789abcdef0123456789abcdef\xff\"]",
    "[\"0123456789abcdef0123456789abcdef\\\"0123456789\"]",
    "[\"long plain text, then \\n\"]",
    // Structure: commas, colons, brackets, members.
    "[",
    "]",
    "{",
    "}",
    "[,]",
    "[1,]",
    "[,1]",
    "[1,,2]",
    "[1 2]",
    "{\"a\":1,}",
    "{,}",
    "{\"a\" 1}",
    "{\"a\":}",
    "{\"a\"}",
    "{1:2}",
    "{\"a\":1 \"b\":2}",
    "{\"a\":1,\"a\":2}",
    "{\"a\":[1,{\"b\":null}],\"c\":{}}",
    "[[[[]]]]",
    "[[[]]",
    "[{]",
    "{[}",
    "[}",
    "{]",
    "{\"a\":1]",
    "[\"a\":1]",
    "{\"a\",1}",
    "{\"a\"::1}",
    "[1:2]",
    "{\"\":\"\"}",
    "{\"a\":{\"b\":{\"c\":[]}}}",
    "[1]\n",
    "[1] ,",
    ":",
    ",",
    "[true,false,null]",
    "{\"x\":true}",
    "{\"x\":tru}",
};

TEST(JsonParser, HandPickedTextsGiveWhatNlohmannGives) {
    for (std::string const& text : kCases) {
        agree(text);
    }
}

// Documents whose every prefix and every byte replaced by each of `kBytes` is compared.
std::vector<std::string> const kDocuments = {
    R"({"conditions":{"name":"m","shapes":[1,-2,3.5e2]},"plan":{"size":4,"xxh3_128":"00"}})",
    "[\"a\\u00e9\\ud83d\\ude00\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\\n\",true,false,null,{}]",
    " {\"k\" : [ 0 , -0.0e+1 , 18446744073709551615 , \"\\\"\\\\\\/\" ] } ",
};

std::string const kBytes = std::string("\"\\/[]{}:,.+-eEtfnu0179aAzZ \t\n\r\x01\x7f") +
                           "\x80\xBF\xC2\xDF\xE0\xED\xEF\xF0\xF4\xF5\xFF";

TEST(JsonParser, EveryPrefixOfADocumentGivesWhatNlohmannGives) {
    for (std::string const& document : kDocuments) {
        for (std::size_t size = 0; size <= document.size(); ++size) {
            agree(document.substr(0, size));
        }
    }
}

TEST(JsonParser, EveryByteReplacedGivesWhatNlohmannGives) {
    std::size_t compared = 0;
    for (std::string const& document : kDocuments) {
        for (std::size_t at = 0; at < document.size(); ++at) {
            for (char const byte : kBytes) {
                std::string text = document;
                text[at] = byte;
                if (!agree(text)) {
                    return; // one failure tells; thousands would bury it
                }
                ++compared;
            }
        }
    }
    EXPECT_GT(compared, 5000U);
}

// The speed that matters: a long string of plain text is one copy, and its value exact.
TEST(JsonParser, ALongStringIsReadWhole) {
    std::string text = "[\"";
    for (int i = 0; i < 100000; ++i) {
        text += "plain text ";
    }
    text += "\\u00e9\xC3\xA9 end\"]";
    Outcome const mine = ours(text);
    ASSERT_EQ(mine.kind, Outcome::Kind::value) << mine.message;
    std::string const& value = mine.value.at(0).get_ref<std::string const&>();
    EXPECT_EQ(value.size(), 1100000U + 8U);
    EXPECT_TRUE(value.ends_with("\xC3\xA9\xC3\xA9 end"));
    agree(text);
}

// A refusal names the byte and what was expected, in words a person can act on.
TEST(JsonParser, ARefusalSaysWhereAndWhat) {
    EXPECT_EQ(ours("[1 2]").message,
              "JSON syntax error at byte 3: unexpected number 2; expected ',' or ']'");
    EXPECT_EQ(ours("{\"a\" 1}").message,
              "JSON syntax error at byte 5: unexpected number 1; expected ':' after a member's "
              "name");
    EXPECT_EQ(ours("[").message,
              "JSON syntax error at byte 1: unexpected end of input; expected a value");
    EXPECT_EQ(ours("[\"a\x01\"]").message,
              "JSON syntax error at byte 3: the control character \\x01 in a string must be "
              "escaped");
    EXPECT_EQ(ours("1e400").message, "number overflow at byte 0: 1e400 is beyond a double");
}

// A NUL byte, which nlohmann's parser took for the end of the text where a token would begin, is
// refused where it lies: between tokens, inside a string, and after the value alike.
TEST(JsonParser, ANulByteIsRefusedWhereItLies) {
    using namespace std::string_literals;
    for (auto const& [text, offset] : {std::pair{"[1,\0]"s, 3U}, std::pair{"[\"a\0\"]"s, 3U},
                                       std::pair{"[1]\0[2]"s, 3U}, std::pair{"\0"s, 0U}}) {
        Outcome const mine = ours(text);
        ASSERT_EQ(mine.kind, Outcome::Kind::syntax_error) << shown(text);
        EXPECT_EQ(mine.offset, offset) << shown(text);
        EXPECT_EQ(mine.message,
                  "a NUL byte at offset " + std::to_string(offset) + ": JSON text holds none");
    }
}

} // namespace
} // namespace tensoracle
