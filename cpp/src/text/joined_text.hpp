// Lists in messages: the items of a list joined by a separator. Private to the project's sources
// (the core, the deploy library and the command).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

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
