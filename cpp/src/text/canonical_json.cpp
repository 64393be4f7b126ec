// Canonical JSON: sorted keys, no white space, UTF-8, and no floating point numbers.
//
// Written by a walk of the value that puts each run of a string's bytes that needs no escape
// whole, where nlohmann's dump() decodes and copies a string byte by byte (a 16 MiB string took
// 120 ms to write, 40 times reading it). The bytes are those dump(-1, ' ', false, strict) writes:
// the same escapes, and, for a string that is not UTF-8, dump's own refusal. The same walk
// compares a text with the canonical one without writing it (is_canonical_json).
#include "text/canonical_json.hpp"

#include "byte_words.hpp"
#include "tensoracle/errors.hpp"
#include "text/utf8_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace tensoracle {
namespace {

// Floats have several spellings of one value and rounding differences between writers, so they
// cannot be part of a digest; the pointer tells the caller which member to turn into a string.
void reject_floats(nlohmann::json const& value, nlohmann::json::json_pointer const& where) {
    if (value.is_number_float()) {
        throw InvalidArgument("canonical JSON does not accept floating point numbers: value " +
                              value.dump() + " at JSON pointer '" + where.to_string() +
                              "' (use an integer or a string)");
    }
    if (value.is_object()) {
        for (auto const& [key, member] : value.items()) {
            reject_floats(member, where / key);
        }
    } else if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
            reject_floats(value[i], where / i);
        }
    } else if (value.is_binary()) {
        throw InvalidArgument("canonical JSON does not accept binary values (at JSON pointer '" +
                              where.to_string() + "')");
    }
}

// Whether reject_floats would throw, found without building a pointer per member (most values
// hold neither, and this runs for every header read).
bool holds_float_or_binary(nlohmann::json const& value) {
    switch (value.type()) {
    case nlohmann::json::value_t::number_float:
    case nlohmann::json::value_t::binary:
        return true;
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array:
        return std::any_of(value.begin(), value.end(), [](nlohmann::json const& member) {
            return holds_float_or_binary(member);
        });
    default:
        return false;
    }
}

// Whether `byte` is written escaped: the quote, the backslash and the C0 controls.
constexpr std::array<bool, 256> kEscaped = [] {
    std::array<bool, 256> escaped{};
    for (std::size_t byte = 0; byte < 0x20; ++byte) {
        escaped[byte] = true;
    }
    escaped['"'] = true;
    escaped['\\'] = true;
    return escaped;
}();

// Where the canonical text goes: appended to a string (Append), or compared with a text already
// written (Match), which so needs no copy of what it checks; the walk is the same.
struct Append {
    std::string& out;
    void put(char c) { out.push_back(c); }
    void put(std::string_view text) { out.append(text); }
    // Room for `more` bytes, growing geometrically (a reserve of the exact size per string would
    // copy the whole text again for each string where reserve grows by no more than asked).
    void reserve(std::size_t more) {
        if (out.capacity() - out.size() < more) {
            out.reserve(std::max(out.size() + more, 2 * out.capacity()));
        }
    }
};

struct Match {
    std::string_view text;
    std::size_t at = 0;
    bool differs = false;
    void put(char c) {
        differs = differs || at >= text.size() || text[at] != c;
        ++at;
    }
    void put(std::string_view piece) {
        differs = differs || text.substr(std::min(at, text.size()), piece.size()) != piece;
        at += piece.size();
    }
    void reserve(std::size_t /*more*/) const noexcept {}
};

// Puts `text` as a JSON string; false, having put part of it, when it is not UTF-8.
template <typename Out>
bool write_string(std::string_view text, Out& out) {
    out.reserve(text.size() + 2);
    out.put('"');
    std::size_t run = 0; // where the bytes not yet put begin
    for (std::size_t at = 0; at < text.size();) {
        at = text_words::skip_plain(text, at); // plain ASCII text a word at a time
        if (at == text.size()) {
            break;
        }
        auto const byte = static_cast<unsigned char>(text[at]);
        if (byte >= 0x80) {
            std::size_t const length = utf8_sequence_length(text, at);
            if (length == 0) {
                return false;
            }
            at += length;
            continue;
        }
        if (!kEscaped[byte]) {
            ++at;
            continue;
        }
        out.put(text.substr(run, at - run));
        run = ++at;
        out.put('\\');
        switch (byte) {
        case '\b':
            out.put('b');
            break;
        case '\t':
            out.put('t');
            break;
        case '\n':
            out.put('n');
            break;
        case '\f':
            out.put('f');
            break;
        case '\r':
            out.put('r');
            break;
        case '"':
        case '\\':
            out.put(static_cast<char>(byte));
            break;
        default: {
            constexpr std::string_view kDigits = "0123456789abcdef";
            out.put("u00");
            out.put(kDigits[byte >> 4U]);
            out.put(kDigits[byte & 0x0FU]);
        }
        }
    }
    out.put(text.substr(run));
    out.put('"');
    return true;
}

template <typename Integer, typename Out>
void write_integer(Integer value, Out& out) {
    std::array<char, 24> digits{};
    auto const written = std::to_chars(digits.data(), digits.data() + digits.size(), value);
    out.put(std::string_view(digits.data(), written.ptr));
}

// nlohmann::json keeps object members in a std::map<std::string>, whose ordering compares chars
// as unsigned bytes: members are therefore visited, and written, in byte order of their keys.
// False, having put part of the value, when a string in it is not UTF-8.
template <typename Out>
bool write_value(nlohmann::json const& value, Out& out) {
    using value_t = nlohmann::json::value_t;
    switch (value.type()) {
    case value_t::object: {
        out.put('{');
        bool first = true;
        for (auto const& [key, member] : value.get_ref<nlohmann::json::object_t const&>()) {
            if (!first) {
                out.put(',');
            }
            first = false;
            if (!write_string(key, out)) {
                return false;
            }
            out.put(':');
            if (!write_value(member, out)) {
                return false;
            }
        }
        out.put('}');
        return true;
    }
    case value_t::array: {
        out.put('[');
        bool first = true;
        for (auto const& element : value.get_ref<nlohmann::json::array_t const&>()) {
            if (!first) {
                out.put(',');
            }
            first = false;
            if (!write_value(element, out)) {
                return false;
            }
        }
        out.put(']');
        return true;
    }
    case value_t::string:
        return write_string(value.get_ref<std::string const&>(), out);
    case value_t::boolean:
        out.put(value.get<bool>() ? "true" : "false");
        return true;
    case value_t::number_integer:
        write_integer(value.get<std::int64_t>(), out);
        return true;
    case value_t::number_unsigned:
        write_integer(value.get<std::uint64_t>(), out);
        return true;
    case value_t::null:
        out.put("null");
        return true;
    default:
        // Floats and binary values were refused before; a discarded value is written as dump()
        // writes it.
        out.put(value.dump());
        return true;
    }
}

// Refuses floats and binary values, which canonical JSON cannot hold, naming where.
void refuse_floats(nlohmann::json const& value) {
    if (holds_float_or_binary(value)) {
        reject_floats(value, nlohmann::json::json_pointer{}); // throws, naming where
    }
}

// Refuses a value holding a string that is not UTF-8, with dump's words for the byte (found by
// writing the value with dump).
[[noreturn]] void refuse_invalid_utf8(nlohmann::json const& value) {
    // ensure_ascii=false keeps non-ASCII text as its UTF-8 bytes; the strict error handler
    // refuses what is not UTF-8, naming the byte.
    try {
        (void)value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } catch (nlohmann::json::type_error const& error) {
        throw InvalidArgument(std::string("canonical JSON needs valid UTF-8 strings: ") +
                              error.what());
    }
    throw InvalidArgument("canonical JSON needs valid UTF-8 strings");
}

} // namespace

std::string canonical_json(nlohmann::json const& value) {
    refuse_floats(value);
    std::string text;
    Append out{text};
    if (!write_value(value, out)) {
        refuse_invalid_utf8(value);
    }
    return text;
}

bool is_canonical_json(nlohmann::json const& value, std::string_view text) {
    refuse_floats(value);
    Match out{.text = text};
    if (!write_value(value, out)) {
        refuse_invalid_utf8(value);
    }
    return !out.differs && out.at == text.size();
}

} // namespace tensoracle
