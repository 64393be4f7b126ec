// The JSON grammar read from text into events, as nlohmann::json's SAX parser reads it with
// strict = true: the same texts accepted, the same values (numbers as unsigned or signed integers
// or doubles alike, a repeated key left to the handler), and a refusal at the same byte. What
// differs is the speed of strings: plain text in a string (ASCII with nothing to escape) is stepped
// over eight bytes at a time and copied once, where nlohmann's lexer copies each byte into two
// buffers (a 16 MiB string took it 90 times as long as reading the file).
//
// Where a text is refused (JsonSyntaxError::offset): at the byte that cannot continue what was
// being read (a number, a literal, a string, an escape, a UTF-8 sequence); where a token is whole
// but not one the grammar allows there, at its last byte; at the text's size when the text ends
// first. A number beyond a double is refused with a plain JsonLimitError ("number overflow").
// Messages are valid UTF-8 whatever the text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle::json_text {

// What the parser hands over, in the text's order. A string's text may be moved from.
class Events {
public:
    Events() = default;
    Events(Events const&) = delete;
    Events& operator=(Events const&) = delete;
    Events(Events&&) = delete;
    Events& operator=(Events&&) = delete;
    virtual ~Events() = default;

    virtual void null() = 0;
    virtual void boolean(bool value) = 0;
    virtual void number_integer(std::int64_t value) = 0;
    virtual void number_unsigned(std::uint64_t value) = 0;
    virtual void number_float(double value) = 0;
    virtual void string(std::string& value) = 0;
    virtual void start_object() = 0;
    virtual void key(std::string& name) = 0;
    virtual void end_object() = 0;
    virtual void start_array() = 0;
    virtual void end_array() = 0;
};

// Parses `text` as one JSON value and nothing after it but white space, a leading UTF-8 byte
// order mark skipped. A NUL byte where a token would begin is refused ("a NUL byte at offset N"),
// where nlohmann's lexer took it for the end of the text and accepted a value before it ("[1]\0x"):
// the one place where the two differ. A NUL inside a string is refused at the same byte as there
// (with that message too); inside a literal, number or escape, as the byte that cannot continue it.
// Throws JsonSyntaxError, or JsonLimitError for a number beyond a double; what `events` throws
// passes through.
void parse(std::string_view text, Events& events);

} // namespace tensoracle::json_text
