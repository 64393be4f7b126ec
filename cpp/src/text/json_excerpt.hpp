// A JSON value as an error message shows it: compact, invalid UTF-8 replaced, cut short when
// long. This header compiles as C++17.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle {

// How many characters of a value a message shows by default: an entry file name whole.
inline constexpr std::size_t kJsonExcerptCharacters = 160;

// The value's compact JSON (non-ASCII characters kept, or written as \u escapes with
// `ensure_ascii`), cut to `limit` characters followed by "..." when longer.
std::string json_excerpt(nlohmann::json const& value, std::size_t limit = kJsonExcerptCharacters,
                         bool ensure_ascii = false);

} // namespace tensoracle
