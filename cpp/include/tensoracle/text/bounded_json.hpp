// JSON read from files and objects that anyone with write access may have crafted: parsed with
// limits on size and nesting depth, so that no input can exhaust the stack or memory of a node.
//
// nlohmann::json parses iteratively, but copying, comparing and writing a value recurse once per
// level; a limit on depth at parse time is what keeps every later use of the value bounded.
// Strings are checked for valid UTF-8 (and paired surrogates) by nlohmann's lexer itself.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tensoracle {

// Deeper than anything tensoracle writes (an engine header nests at most 6 levels), far below
// what the recursive operations on a value can take.
inline constexpr std::size_t kMaxJsonDepth = 64;

struct JsonLimits {
    std::size_t max_bytes;
    std::size_t max_depth = kMaxJsonDepth;
};

// Why a text was refused: too large, too deep, or not JSON. The message is valid UTF-8 (bytes of
// the input that are not are shown as \xNN) and says which limit was passed.
class JsonLimitError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses `text` as one JSON value within `limits`. Throws JsonLimitError.
nlohmann::json parse_bounded_json(std::string_view text, JsonLimits limits);

// The nesting depth of a value (a scalar is 0, [] and {} are 1), computed without recursion.
std::size_t json_depth(nlohmann::json const& value);

} // namespace tensoracle
