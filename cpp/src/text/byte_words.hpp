// Eight bytes of text at a time: the tests that let the JSON reader and writer step over plain
// text (ASCII that needs no escape) a word at a time instead of a byte at a time. Each returns
// whether any byte of the word has the property; the byte order of the load does not matter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tensoracle::text_words {

inline constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

inline std::uint64_t load(char const* at) noexcept {
    std::uint64_t word = 0;
    std::memcpy(&word, at, sizeof word);
    return word;
}

// Some byte is below `bound` (bound <= 0x80), for a word whose bytes are all below 0x80.
constexpr bool has_below(std::uint64_t word, unsigned bound) noexcept {
    return ((word - kOnes * bound) & ~word & kHighBits) != 0;
}

// Some byte equals `byte`.
constexpr bool has_byte(std::uint64_t word, unsigned byte) noexcept {
    std::uint64_t const differs = word ^ (kOnes * byte);
    return ((differs - kOnes) & ~differs & kHighBits) != 0;
}

// Whether the word is plain JSON string text: ASCII, no control character, no quote, no
// backslash.
constexpr bool is_plain(std::uint64_t word) noexcept {
    return (word & kHighBits) == 0 && !has_below(word, 0x20) && !has_byte(word, '"') &&
           !has_byte(word, '\\');
}

// The first index at or after `at` whose byte is not plain JSON string text (or text.size()),
// whole words skipped first: sixteen bytes at a time where SSE2 is there (every x86-64 CPU), then
// eight.
inline std::size_t skip_plain(std::string_view text, std::size_t at) noexcept {
#if defined(__SSE2__)
    __m128i const quote = _mm_set1_epi8('"');
    __m128i const backslash = _mm_set1_epi8('\\');
    __m128i const space = _mm_set1_epi8(0x20);
    while (at + 16 <= text.size()) {
        __m128i const bytes =
            _mm_loadu_si128(reinterpret_cast<__m128i const*>(text.data() + at)); // NOLINT
        // Signed compare: bytes 0x80..0xFF are negative, so below 0x20 too, and so not plain.
        __m128i const stops = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
            _mm_cmpgt_epi8(space, bytes));
        if (_mm_movemask_epi8(stops) != 0) {
            break;
        }
        at += 16;
    }
#endif
    while (at + 8 <= text.size() && is_plain(load(text.data() + at))) {
        at += 8;
    }
    return at;
}

// The first index at or after `at` whose byte is not ASCII (or text.size()), whole words first.
inline std::size_t skip_ascii(std::string_view text, std::size_t at) noexcept {
    while (at + 8 <= text.size() && (load(text.data() + at) & kHighBits) == 0) {
        at += 8;
    }
    return at;
}

} // namespace tensoracle::text_words
