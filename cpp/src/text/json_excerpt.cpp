// A JSON value as an error message shows it (see json_excerpt.hpp).
#include "text/json_excerpt.hpp"

namespace tensoracle {

std::string json_excerpt(nlohmann::json const& value, std::size_t limit, bool ensure_ascii) {
    std::string text = value.dump(-1, ' ', ensure_ascii, nlohmann::json::error_handler_t::replace);
    if (text.size() > limit) {
        text.resize(limit);
        text += "...";
    }
    return text;
}

} // namespace tensoracle
