// JSON read from files and objects that anyone with write access may have crafted: parsed with
// limits on size and nesting depth, so that no input can exhaust the stack or memory of a node,
// and in time linear in the text's size whatever its shape (many small objects, long arrays,
// nesting up to the limit).
//
// nlohmann::json parses iteratively, but copying, comparing and writing a value recurse once per
// level; a limit on depth at parse time is what keeps every later use of the value bounded.
// Strings are checked for valid UTF-8 and paired surrogates as they are read.
#pragma once

#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tensoracle {

// Deeper than anything tensoracle writes (an engine header nests at most 6 levels), far below
// what the recursive operations on a value can take.
inline constexpr std::size_t kMaxJsonDepth = 64;

struct JsonLimits {
    // The text's size, checked before parsing.
    std::size_t max_bytes;
    // Containers open at once: [] and {} are 1 level, [[]] is 2.
    std::size_t max_depth = kMaxJsonDepth;
    // Values in all (each scalar, array and object counts once, member names do not): no limit
    // by default, since max_bytes already bounds them (a value takes at least one byte).
    std::size_t max_values = std::numeric_limits<std::size_t>::max();
};

// Why a text was refused: too large, too deep, too many values, or not JSON. The message is valid
// UTF-8 (bytes of the input that are not are shown as \xNN) and says which limit was passed.
class JsonLimitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A text that is not JSON at all (bad syntax, a string that is not UTF-8 or holds an unpaired
// surrogate, text after the value), with the offset of the byte where the parser stopped (the
// text's size when it ended too early). A number beyond a double is a plain JsonLimitError.
class JsonSyntaxError : public JsonLimitError {
public:
    JsonSyntaxError(std::string const& message, std::size_t offset);
    std::size_t offset() const noexcept { return offset_; }

private:
    std::size_t offset_;
};

// Parses `text` as one JSON value within `limits`, in time linear in its size. Throws
// JsonLimitError (JsonSyntaxError when the text is not JSON).
nlohmann::json parse_bounded_json(std::string_view text, JsonLimits limits);

// The nesting depth of a value (a scalar is 0, [] and {} are 1), computed without recursion.
std::size_t json_depth(nlohmann::json const& value);

} // namespace tensoracle
