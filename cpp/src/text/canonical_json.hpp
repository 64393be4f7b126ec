// The one JSON spelling used wherever bytes must be stable: identities, headers, records.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace tensoracle {

// Compact UTF-8 JSON with object keys in byte order and no insignificant white space. Floating
// point numbers are rejected (InvalidArgument naming the JSON pointer): every value we hash is a
// string, an integer, a boolean, null, or a container of those, so that two builds spell the
// same conditions with the same bytes.
std::string canonical_json(nlohmann::json const& value);

// Whether `text` is exactly canonical_json(value), found without writing it (a reader's check of
// a large value it has just parsed). Refuses what canonical_json refuses, alike.
bool is_canonical_json(nlohmann::json const& value, std::string_view text);

// The bytes Python writes for `value` with json.dumps(value, sort_keys=True, separators=(",",
// ":"), ensure_ascii=True): keys in code point order, every character outside printable ASCII as
// a lowercase \uXXXX escape (DEL included, astral characters as surrogate pairs), the short
// escapes \" \\ \n \r \t \b \f. Bundle digests are computed from it, so it must agree with
// Python byte for byte: numbers that are not integers of at most 64 bits (floats, and integers
// nlohmann holds as floats) have no spelling guaranteed to match, and are refused with
// InvalidArgument naming their JSON pointer.
std::string python_canonical_json(nlohmann::json const& value);

} // namespace tensoracle
