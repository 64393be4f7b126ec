// Well-formedness of UTF-8 after the Unicode standard's table 3-7.
#include "text/utf8_text.hpp"

#include "byte_words.hpp"

#include <array>
#include <cstddef>

namespace tensoracle {

Utf8Sequence read_utf8_sequence(std::string_view text, std::size_t at) noexcept {
    if (at >= text.size()) {
        return {};
    }
    auto const lead = static_cast<unsigned char>(text[at]);
    if (lead < 0x80) {
        return {.length = 1, .well_formed_bytes = 1};
    }
    // The range of the byte after the lead, which rules out overlong forms, the surrogates
    // U+D800..DFFF and what lies past U+10FFFF; every later byte is any continuation byte.
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        low = lead == 0xE0 ? 0xA0 : 0x80;
        high = lead == 0xED ? 0x9F : 0xBF;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF;
    } else {
        return {};
    }
    for (std::size_t i = 1; i < length; ++i) {
        if (at + i >= text.size()) {
            return {.length = 0, .well_formed_bytes = i};
        }
        auto const byte = static_cast<unsigned char>(text[at + i]);
        if (byte < low || byte > high) {
            return {.length = 0, .well_formed_bytes = i};
        }
        low = 0x80;
        high = 0xBF;
    }
    return {.length = length, .well_formed_bytes = length};
}

std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept {
    return read_utf8_sequence(text, at).length;
}

bool is_valid_utf8(std::string_view text) noexcept {
    for (std::size_t at = 0; at < text.size();) {
        at = text_words::skip_ascii(text, at); // ASCII text a word at a time
        if (at == text.size()) {
            break;
        }
        std::size_t const length = utf8_sequence_length(text, at);
        if (length == 0) {
            return false;
        }
        at += length;
    }
    return true;
}

std::string escape_invalid_utf8(std::string_view text) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        std::size_t const length = utf8_sequence_length(text, at);
        if (length == 0) {
            auto const c = static_cast<unsigned char>(text[at]);
            out += "\\x";
            out.push_back(kDigits[c >> 4U]);
            out.push_back(kDigits[c & 0x0FU]);
            ++at;
        } else {
            out.append(text.substr(at, length));
            at += length;
        }
    }
    return out;
}

namespace {

void append_hex(std::string& out, char const* prefix, unsigned value, int digits) {
    constexpr std::string_view kDigits = "0123456789abcdef";
    out += prefix;
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) {
        out.push_back(kDigits[(value >> static_cast<unsigned>(shift)) & 0x0FU]);
    }
}

// The code point of the well-formed sequence of `length` bytes at `text[at]`.
unsigned code_point(std::string_view text, std::size_t at, std::size_t length) noexcept {
    auto const byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
    constexpr std::array<unsigned, 5> kLeadMask = {0, 0x7FU, 0x1FU, 0x0FU, 0x07U};
    unsigned value = byte(0) & kLeadMask.at(length);
    for (std::size_t i = 1; i < length; ++i) {
        value = (value << 6U) | (byte(i) & 0x3FU);
    }
    return value;
}

bool reorders_or_hides(unsigned point) noexcept {
    return point == 0x200E || point == 0x200F || point == 0x2028 || point == 0x2029 ||
           (point >= 0x202A && point <= 0x202E) || (point >= 0x2066 && point <= 0x2069);
}

} // namespace

std::string escape_for_terminal(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t at = 0; at < text.size();) {
        std::size_t const length = utf8_sequence_length(text, at);
        if (length == 0) {
            append_hex(out, "\\x", static_cast<unsigned char>(text[at]), 2);
            ++at;
            continue;
        }
        unsigned const point = code_point(text, at, length);
        if (point < 0x20 || point == 0x7F) {
            append_hex(out, "\\x", point, 2);
        } else if ((point >= 0x80 && point < 0xA0) || reorders_or_hides(point)) {
            // \u, not \x: \x80..\xff stand for bytes that are not UTF-8.
            append_hex(out, "\\u", point, 4);
        } else if (point == '\\') {
            out += "\\\\";
        } else {
            out.append(text.substr(at, length));
        }
        at += length;
    }
    return out;
}

std::string escape_lines_for_terminal(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    while (!text.empty()) {
        std::size_t const end = text.find('\n');
        out += escape_for_terminal(text.substr(0, end));
        if (end == std::string_view::npos) {
            break;
        }
        out += '\n';
        text.remove_prefix(end + 1);
    }
    return out;
}

} // namespace tensoracle
