// Text that crosses into messages (and so into Python's str) from bytes we do not control.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tensoracle {

// How the UTF-8 sequence at `text[at]` reads: `length` is its length (1 to 4) when it is
// well-formed, else 0; `well_formed_bytes` counts its bytes up to the first that cannot continue
// it (0 when the first byte begins no sequence; at + well_formed_bytes is the text's size when the
// text ends inside it). Both are 0 when `at` is past the text.
struct Utf8Sequence {
    std::size_t length = 0;
    std::size_t well_formed_bytes = 0;
};
Utf8Sequence read_utf8_sequence(std::string_view text, std::size_t at) noexcept;

// read_utf8_sequence(text, at).length.
std::size_t utf8_sequence_length(std::string_view text, std::size_t at) noexcept;

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

// `text` with every byte that is not part of a well-formed UTF-8 sequence written as \xNN, so
// that the result is valid UTF-8 and shows what the bytes were.
std::string escape_invalid_utf8(std::string_view text);

// `text` as a terminal may show it without acting on it, for tables people read: a byte that is
// not part of well-formed UTF-8 as \xNN (80..ff), a C0 control character or DEL as \xNN
// (00..1f, 7f), a C1 control character and the characters that reorder or hide text (U+200E,
// U+200F, U+2028, U+2029, U+202A..U+202E, U+2066..U+2069) as \uNNNN, and a backslash as \\, so
// that two different names never print alike and none can move the cursor, set the title or
// clear the screen.
std::string escape_for_terminal(std::string_view text);

// escape_for_terminal of each line of `text`, its line breaks kept: for a table already laid out.
std::string escape_lines_for_terminal(std::string_view text);

} // namespace tensoracle
