// Reading JSON text: a lexer of tokens (lexer below) and the grammar over them (parse). Each
// refusal says where nlohmann's lexer and parser would stop; json_parser_test compares both on
// every case it reads, and fuzz_json_text on whatever the fuzzer makes.
#include "json_parser.hpp"

#include "byte_words.hpp"
#include "text/bounded_json.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace tensoracle::json_text {
namespace {

// One token of the text: what it is and where it lies.
struct Token {
    enum class Kind : std::uint8_t {
        end, // the text's end
        begin_array,
        end_array,
        begin_object,
        end_object,
        colon,
        comma,
        string,
        number,
        literal_true,
        literal_false,
        literal_null
    };
    Kind kind = Kind::end;
    std::size_t begin = 0;
    std::size_t end = 0; // one past its last byte
    bool is_float = false;
};

bool is_digit(char c) noexcept {
    return c >= '0' && c <= '9';
}

std::string byte_text(char c) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    auto const byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
        return std::string("'") + c + "'";
    }
    return std::string("\\x") + kDigits[byte >> 4U] + kDigits[byte & 0x0FU];
}

// Reads the tokens of a text in order, white space skipped, and a byte order mark at its start.
class Lexer {
public:
    explicit Lexer(std::string_view text) : text_(text) {
        if (!text_.empty() && static_cast<unsigned char>(text_[0]) == 0xEF) {
            expect_byte(1, 0xBB, "a byte order mark (EF BB BF)");
            expect_byte(2, 0xBF, "a byte order mark (EF BB BF)");
            at_ = 3;
        }
    }

    // The next token, a string's decoded text in `string` when it is one.
    Token next(std::string& string) {
        while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\t' ||
                                      text_[at_] == '\n' || text_[at_] == '\r')) {
            ++at_;
        }
        Token token{.kind = Token::Kind::end, .begin = at_, .end = at_};
        if (at_ == text_.size()) {
            return token;
        }
        switch (text_[at_]) {
        case '[':
            token.kind = Token::Kind::begin_array;
            break;
        case ']':
            token.kind = Token::Kind::end_array;
            break;
        case '{':
            token.kind = Token::Kind::begin_object;
            break;
        case '}':
            token.kind = Token::Kind::end_object;
            break;
        case ':':
            token.kind = Token::Kind::colon;
            break;
        case ',':
            token.kind = Token::Kind::comma;
            break;
        case '"':
            token.kind = Token::Kind::string;
            at_ = scan_string(at_ + 1, string);
            break;
        case 't':
            token.kind = Token::Kind::literal_true;
            at_ = scan_literal(at_, "true") - 1;
            break;
        case 'f':
            token.kind = Token::Kind::literal_false;
            at_ = scan_literal(at_, "false") - 1;
            break;
        case 'n':
            token.kind = Token::Kind::literal_null;
            at_ = scan_literal(at_, "null") - 1;
            break;
        case '\0':
            refuse_nul(at_);
        default:
            if (text_[at_] != '-' && !is_digit(text_[at_])) {
                refuse(at_, "unexpected " + byte_text(text_[at_]) +
                                ": no JSON value or punctuation begins with it");
            }
            token.kind = Token::Kind::number;
            at_ = scan_number(at_, token.is_float) - 1;
            break;
        }
        ++at_;
        token.end = at_;
        return token;
    }

    [[noreturn]] void refuse(std::size_t offset, std::string const& what) const {
        throw JsonSyntaxError(escape_invalid_utf8("JSON syntax error at byte " +
                                                  std::to_string(offset) + ": " + what),
                              offset);
    }

    // JSON text holds no NUL byte, not even in a string, where it must be escaped (nlohmann's
    // lexer took one between tokens for the end of the text and accepted what preceded it).
    [[noreturn]] static void refuse_nul(std::size_t offset) {
        throw JsonSyntaxError(
            "a NUL byte at offset " + std::to_string(offset) + ": JSON text holds none", offset);
    }

private:
    // The byte at `at`, refusing the text when it ends before it.
    char byte_at(std::size_t at, char const* inside) const {
        if (at >= text_.size()) {
            refuse(text_.size(), std::string("unexpected end of input inside ") + inside);
        }
        return text_[at];
    }

    void expect_byte(std::size_t at, unsigned char byte, char const* inside) const {
        char const found = byte_at(at, inside);
        if (static_cast<unsigned char>(found) != byte) {
            refuse(at, "unexpected " + byte_text(found) + " inside " + inside);
        }
    }

    // From just past a string's opening quote to its closing quote, whose index it returns; the
    // decoded text in `out`.
    std::size_t scan_string(std::size_t at, std::string& out) const {
        out.clear();
        std::size_t run = at; // the first byte not yet copied to `out`
        for (;;) {
            at = text_words::skip_plain(text_, at);
            auto const byte = static_cast<unsigned char>(byte_at(at, "a string"));
            if (byte == '"') {
                out.append(text_, run, at - run);
                return at;
            }
            if (byte >= 0x80) {
                at = scan_utf8(at);
            } else if (byte == '\\') {
                out.append(text_, run, at - run);
                at = scan_escape(at, out);
                run = at;
            } else if (byte == 0) {
                refuse_nul(at);
            } else if (byte < 0x20) {
                refuse(at, "the control character " + byte_text(static_cast<char>(byte)) +
                               " in a string must be escaped");
            } else {
                ++at;
            }
        }
    }

    // Past the UTF-8 sequence at `at`, or refused at its first byte that cannot be (table 3-7 of
    // the Unicode standard: no overlong form, no surrogate, nothing past U+10FFFF).
    std::size_t scan_utf8(std::size_t at) const {
        Utf8Sequence const sequence = read_utf8_sequence(text_, at);
        if (sequence.length != 0) {
            return at + sequence.length;
        }
        char const lead = text_[at];
        if (sequence.well_formed_bytes == 0) {
            refuse(at, "ill-formed UTF-8 in a string: " + byte_text(lead) +
                           " begins no UTF-8 sequence");
        }
        std::size_t const stop = at + sequence.well_formed_bytes;
        char const byte = byte_at(stop, "a UTF-8 sequence in a string"); // refused at the end
        refuse(stop,
               "ill-formed UTF-8 in a string: " + byte_text(byte) + " after " + byte_text(lead));
    }

    // The four hex digits from `at`, or refused at the first that is not one.
    std::uint32_t hex_quad(std::size_t at) const {
        std::uint32_t value = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            char const c = byte_at(at + i, "a \\u escape");
            std::uint32_t digit = 0;
            if (is_digit(c)) {
                digit = static_cast<std::uint32_t>(c - '0');
            } else if (c >= 'a' && c <= 'f') {
                digit = static_cast<std::uint32_t>(c - 'a' + 10);
            } else if (c >= 'A' && c <= 'F') {
                digit = static_cast<std::uint32_t>(c - 'A' + 10);
            } else {
                refuse(at + i, "'\\u' must be followed by four hex digits, not " + byte_text(c));
            }
            value = value * 16 + digit;
        }
        return value;
    }

    // Past the escape whose backslash is at `at`, its character appended to `out` as UTF-8.
    std::size_t scan_escape(std::size_t at, std::string& out) const {
        char const c = byte_at(at + 1, "an escape");
        switch (c) {
        case '"':
        case '\\':
        case '/':
            out.push_back(c);
            return at + 2;
        case 'b':
            out.push_back('\b');
            return at + 2;
        case 'f':
            out.push_back('\f');
            return at + 2;
        case 'n':
            out.push_back('\n');
            return at + 2;
        case 'r':
            out.push_back('\r');
            return at + 2;
        case 't':
            out.push_back('\t');
            return at + 2;
        case 'u':
            break;
        default:
            refuse(at + 1, "'\\' followed by " + byte_text(c) + " is no escape");
        }
        std::uint32_t code = hex_quad(at + 2);
        std::size_t end = at + 6;
        if (code >= 0xDC00 && code <= 0xDFFF) {
            refuse(at + 5, "the low surrogate \\u" + std::string(text_.substr(at + 2, 4)) +
                               " follows no high surrogate");
        }
        if (code >= 0xD800 && code <= 0xDBFF) {
            expect_byte(at + 6, '\\', "a surrogate pair");
            expect_byte(at + 7, 'u', "a surrogate pair");
            std::uint32_t const low = hex_quad(at + 8);
            if (low < 0xDC00 || low > 0xDFFF) {
                refuse(at + 11, "the high surrogate \\u" + std::string(text_.substr(at + 2, 4)) +
                                    " is followed by \\u" + std::string(text_.substr(at + 8, 4)) +
                                    ", not a low surrogate");
            }
            code = 0x10000 + ((code - 0xD800) << 10U) + (low - 0xDC00);
            end = at + 12;
        }
        append_utf8(code, out);
        return end;
    }

    static void append_utf8(std::uint32_t code, std::string& out) {
        auto const put = [&](std::uint32_t byte) { out.push_back(static_cast<char>(byte)); };
        if (code < 0x80) {
            put(code);
        } else if (code < 0x800) {
            put(0xC0U | (code >> 6U));
            put(0x80U | (code & 0x3FU));
        } else if (code < 0x10000) {
            put(0xE0U | (code >> 12U));
            put(0x80U | ((code >> 6U) & 0x3FU));
            put(0x80U | (code & 0x3FU));
        } else {
            put(0xF0U | (code >> 18U));
            put(0x80U | ((code >> 12U) & 0x3FU));
            put(0x80U | ((code >> 6U) & 0x3FU));
            put(0x80U | (code & 0x3FU));
        }
    }

    // Past the number at `at`: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    std::size_t scan_number(std::size_t at, bool& is_float) const {
        auto const digits = [&](std::size_t from, char const* after) {
            char const first = byte_at(from, "a number");
            if (!is_digit(first)) {
                refuse(from, std::string("a number needs a digit after ") + after + ", not " +
                                 byte_text(first));
            }
            while (from < text_.size() && is_digit(text_[from])) {
                ++from;
            }
            return from;
        };
        std::size_t i = at;
        if (text_[i] == '-') {
            ++i;
        }
        if (byte_at(i, "a number") == '0') {
            ++i;
        } else {
            i = digits(i, "'-'");
        }
        is_float = false;
        if (i < text_.size() && text_[i] == '.') {
            i = digits(i + 1, "'.'");
            is_float = true;
        }
        if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
            ++i;
            if (i < text_.size() && (text_[i] == '+' || text_[i] == '-')) {
                ++i;
            }
            i = digits(i, "the exponent");
            is_float = true;
        }
        return i;
    }

    // Past the literal `spelling` at `at`, or refused at its first byte that differs.
    std::size_t scan_literal(std::size_t at, std::string_view spelling) const {
        for (std::size_t i = 1; i < spelling.size(); ++i) {
            char const c = byte_at(at + i, "a literal");
            if (c != spelling[i]) {
                refuse(at + i, "invalid literal: " + byte_text(c) + " where '" +
                                   std::string(spelling) + "' was being read");
            }
        }
        return at + spelling.size();
    }

    std::string_view text_;
    std::size_t at_ = 0;
};

std::string describe(Token const& token, std::string_view text) {
    switch (token.kind) {
    case Token::Kind::end:
        return "unexpected end of input";
    case Token::Kind::string:
        return "unexpected string";
    case Token::Kind::number:
        return "unexpected number " +
               std::string(
                   text.substr(token.begin, std::min<std::size_t>(token.end - token.begin, 32)));
    case Token::Kind::literal_true:
    case Token::Kind::literal_false:
    case Token::Kind::literal_null:
        return "unexpected literal " +
               std::string(text.substr(token.begin, token.end - token.begin));
    default:
        return "unexpected '" + std::string(text.substr(token.begin, 1)) + "'";
    }
}

// The number `token` as nlohmann hands it over: without '-', fraction or exponent as unsigned;
// with '-' as signed; either as a double when beyond 64 bits; a double beyond its range refused.
void hand_number(std::string_view text, Token const& token, Events& events) {
    char const* const first = text.data() + token.begin;
    char const* const last = text.data() + token.end;
    if (!token.is_float) {
        if (*first == '-') {
            std::int64_t value = 0;
            if (std::from_chars(first, last, value).ec == std::errc{}) {
                events.number_integer(value);
                return;
            }
        } else {
            std::uint64_t value = 0;
            if (std::from_chars(first, last, value).ec == std::errc{}) {
                events.number_unsigned(value);
                return;
            }
        }
    }
    // strtod, as nlohmann reads a double, with the decimal point of the C locale in force.
    std::string spelling(first, last);
    char const* const point = std::localeconv()->decimal_point;
    if (point != nullptr && *point != '\0' && *point != '.') {
        std::replace(spelling.begin(), spelling.end(), '.', *point);
    }
    double const value = std::strtod(spelling.c_str(), nullptr);
    if (!std::isfinite(value)) {
        throw JsonLimitError("number overflow at byte " + std::to_string(token.begin) + ": " +
                             std::string(first, last).substr(0, 64) + " is beyond a double");
    }
    events.number_float(value);
}

// The open containers, innermost last.
enum class Open : std::uint8_t { array, object };

} // namespace

void parse(std::string_view text, Events& events) {
    Lexer lexer(text);
    std::vector<Open> open;
    std::string string;
    auto const unexpected = [&](Token const& token, char const* expected) {
        std::size_t const offset = token.kind == Token::Kind::end ? text.size() : token.end - 1;
        lexer.refuse(offset, describe(token, text) + "; expected " + expected);
    };
    // A member's name and its colon, from the name's token; the value's first token after.
    auto const member = [&](Token const& name, char const* expected) {
        if (name.kind != Token::Kind::string) {
            unexpected(name, expected);
        }
        events.key(string);
        Token const colon = lexer.next(string);
        if (colon.kind != Token::Kind::colon) {
            unexpected(colon, "':' after a member's name");
        }
        return lexer.next(string);
    };
    Token token = lexer.next(string);
    for (;;) {
        // `token` begins a value.
        bool ended = true; // whether the value is whole (a scalar, [] or {})
        switch (token.kind) {
        case Token::Kind::begin_array:
            events.start_array();
            token = lexer.next(string);
            if (token.kind == Token::Kind::end_array) {
                events.end_array();
            } else {
                open.push_back(Open::array);
                ended = false;
            }
            break;
        case Token::Kind::begin_object:
            events.start_object();
            token = lexer.next(string);
            if (token.kind == Token::Kind::end_object) {
                events.end_object();
            } else {
                token = member(token, "a member's name in quotes or '}'");
                open.push_back(Open::object);
                ended = false;
            }
            break;
        case Token::Kind::string:
            events.string(string);
            break;
        case Token::Kind::number:
            hand_number(text, token, events);
            break;
        case Token::Kind::literal_true:
        case Token::Kind::literal_false:
            events.boolean(token.kind == Token::Kind::literal_true);
            break;
        case Token::Kind::literal_null:
            events.null();
            break;
        default:
            unexpected(token, "a value");
        }
        if (!ended) {
            continue; // `token` begins the container's first value
        }
        // A value has ended: close the containers it ends, up to one that goes on.
        for (;;) {
            token = lexer.next(string);
            if (open.empty()) {
                if (token.kind != Token::Kind::end) {
                    unexpected(token, "the end of the text after the value");
                }
                return;
            }
            bool const in_array = open.back() == Open::array;
            if (token.kind == Token::Kind::comma) {
                token = lexer.next(string);
                if (!in_array) {
                    token = member(token, "a member's name in quotes");
                }
                break;
            }
            if (in_array && token.kind == Token::Kind::end_array) {
                events.end_array();
            } else if (!in_array && token.kind == Token::Kind::end_object) {
                events.end_object();
            } else {
                unexpected(token, in_array ? "',' or ']'" : "',' or '}'");
            }
            open.pop_back();
        }
    }
}

} // namespace tensoracle::json_text
