// The JSON spelling of Python's json.dumps(sort_keys=True, separators=(",", ":"),
// ensure_ascii=True), written by hand so that every byte is under our control.
#include "tensoracle/errors.hpp"
#include "text/canonical_json.hpp"

#include <array>
#include <cstdint>
#include <string_view>

namespace tensoracle {
namespace {

constexpr std::array<char, 16> hex_digits = {'0', '1', '2', '3', '4', '5', '6', '7',
                                             '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

void append_unit(std::string& out, std::uint32_t unit) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) {
        out += hex_digits.at((unit >> static_cast<unsigned>(shift)) & 0xfU);
    }
}

// Decodes one UTF-8 sequence at `text[at]`; nlohmann's lexer has validated every string it
// parsed, so a malformed sequence can only come from a value built in C++.
std::uint32_t next_code_point(std::string_view text, std::size_t& at, std::string const& where) {
    auto const byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    unsigned char const lead = byte(at);
    std::size_t length = 1;
    std::uint32_t code = lead;
    if (lead >= 0xf0U && lead <= 0xf4U) {
        length = 4;
        code = lead & 0x07U;
    } else if (lead >= 0xe0U) {
        length = 3;
        code = lead & 0x0fU;
    } else if (lead >= 0xc2U && lead < 0xe0U) {
        length = 2;
        code = lead & 0x1fU;
    } else if (lead >= 0x80U) {
        length = 0;
    }
    if (length == 0 || at + length > text.size()) {
        throw InvalidArgument("canonical JSON: invalid UTF-8 at JSON pointer '" + where + "'");
    }
    for (std::size_t i = 1; i < length; ++i) {
        unsigned char const next = byte(at + i);
        if ((next & 0xc0U) != 0x80U) {
            throw InvalidArgument("canonical JSON: invalid UTF-8 at JSON pointer '" + where + "'");
        }
        code = (code << 6U) | (next & 0x3fU);
    }
    at += length;
    return code;
}

void append_string(std::string& out, std::string_view text, std::string const& where) {
    out += '"';
    for (std::size_t at = 0; at < text.size();) {
        std::uint32_t const code = next_code_point(text, at, where);
        switch (code) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        default:
            if (code >= 0x20U && code < 0x7fU) {
                out += static_cast<char>(code);
            } else if (code < 0x10000U) {
                append_unit(out, code);
            } else {
                std::uint32_t const offset = code - 0x10000U;
                append_unit(out, 0xd800U + (offset >> 10U));
                append_unit(out, 0xdc00U + (offset & 0x3ffU));
            }
        }
    }
    out += '"';
}

void append_value(std::string& out, nlohmann::json const& value,
                  nlohmann::json::json_pointer const& where) {
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        out += "null";
        return;
    case nlohmann::json::value_t::boolean:
        out += value.get<bool>() ? "true" : "false";
        return;
    case nlohmann::json::value_t::number_integer:
        out += std::to_string(value.get<std::int64_t>());
        return;
    case nlohmann::json::value_t::number_unsigned:
        out += std::to_string(value.get<std::uint64_t>());
        return;
    case nlohmann::json::value_t::string:
        append_string(out, value.get_ref<std::string const&>(), where.to_string());
        return;
    case nlohmann::json::value_t::array: {
        out += '[';
        for (std::size_t i = 0; i < value.size(); ++i) {
            out += i == 0 ? "" : ",";
            append_value(out, value[i], where / i);
        }
        out += ']';
        return;
    }
    case nlohmann::json::value_t::object: {
        // Members are held in a std::map<std::string>: byte order, which for UTF-8 is code point
        // order, the order Python's sort_keys gives.
        out += '{';
        bool first = true;
        for (auto const& [key, member] : value.items()) {
            out += first ? "" : ",";
            first = false;
            append_string(out, key, where.to_string());
            out += ':';
            append_value(out, member, where / key);
        }
        out += '}';
        return;
    }
    default:
        throw InvalidArgument("canonical JSON holds " + std::string{value.type_name()} + " " +
                              value.dump() + " at JSON pointer '" + where.to_string() +
                              "': only integers of at most 64 bits have a spelling that matches "
                              "Python's, floats and larger integers are not accepted");
    }
}

} // namespace

std::string python_canonical_json(nlohmann::json const& value) {
    std::string out;
    append_value(out, value, nlohmann::json::json_pointer{});
    return out;
}

} // namespace tensoracle
