// The one JSON spelling used wherever bytes must be stable: identities, headers, records.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle {

// Compact UTF-8 JSON with object keys in byte order and no insignificant white space. Floating
// point numbers are rejected (InvalidArgument naming the JSON pointer): every value we hash is a
// string, an integer, a boolean, null, or a container of those, so that two builds spell the
// same conditions with the same bytes.
std::string canonical_json(nlohmann::json const& value);

} // namespace tensoracle
