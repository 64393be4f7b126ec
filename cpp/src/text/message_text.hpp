// The pieces that messages are made of: a JSON value shown as an excerpt, a shape, a list joined
// by a separator. Private to the project's sources (the core, the deploy library and the
// command); every message that shows one of these shows it this way.
#pragma once

#include "text/json_excerpt.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

// A JSON value as a message shows it: its compact JSON, cut to `limit` characters and "..."
// when longer, non-ASCII characters written as \u escapes with `ascii` (json_excerpt).
inline std::string shown(nlohmann::json const& value, std::size_t limit = kJsonExcerptCharacters,
                         bool ascii = false) {
    return json_excerpt(value, limit, ascii);
}

// A shape as messages write it: "[1, 3, 224, 224]".
inline std::string shape_text(std::span<std::int64_t const> shape) {
    std::string text = "[";
    for (std::size_t index = 0; index < shape.size(); ++index) {
        if (index != 0) {
            text += ", ";
        }
        text += std::to_string(shape[index]);
    }
    return text + "]";
}

// The items in order, `separator` between each two ("a, b, c"); empty for none.
inline std::string joined(std::vector<std::string> const& items, std::string_view separator) {
    std::string text;
    for (std::size_t index = 0; index < items.size(); ++index) {
        if (index != 0) {
            text += separator;
        }
        text += items[index];
    }
    return text;
}

} // namespace tensoracle
