// Parsing untrusted JSON within limits, through nlohmann::json's parser callback (called at the
// start of every object and array with the depth reached).
#include "tensoracle/text/bounded_json.hpp"

#include "tensoracle/text/utf8_text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace tensoracle {

nlohmann::json parse_bounded_json(std::string_view text, JsonLimits limits) {
    if (text.size() > limits.max_bytes) {
        throw JsonLimitError("the JSON text of " + std::to_string(text.size()) +
                             " bytes exceeds the limit of " + std::to_string(limits.max_bytes) +
                             " bytes");
    }
    auto const bound = [limits](int depth, nlohmann::json::parse_event_t event,
                                nlohmann::json& /*parsed*/) {
        bool const opens = event == nlohmann::json::parse_event_t::object_start ||
                           event == nlohmann::json::parse_event_t::array_start;
        // `depth` counts the containers already open around this one.
        if (opens && static_cast<std::size_t>(depth) >= limits.max_depth) {
            throw JsonLimitError("the JSON text nests deeper than the limit of " +
                                 std::to_string(limits.max_depth) + " levels");
        }
        return true;
    };
    try {
        return nlohmann::json::parse(text, bound);
    } catch (nlohmann::json::exception const& error) {
        // The parser quotes the bytes it last read, which may be anything: keep the message text.
        throw JsonLimitError(escape_invalid_utf8(error.what()));
    }
}

std::size_t json_depth(nlohmann::json const& value) {
    std::size_t deepest = 0;
    std::vector<std::pair<nlohmann::json const*, std::size_t>> pending{{&value, 0}};
    while (!pending.empty()) {
        auto const [item, depth] = pending.back();
        pending.pop_back();
        if (!item->is_structured()) {
            continue;
        }
        std::size_t const inside = depth + 1;
        deepest = std::max(deepest, inside);
        for (auto const& member : *item) {
            pending.emplace_back(&member, inside);
        }
    }
    return deepest;
}

} // namespace tensoracle
