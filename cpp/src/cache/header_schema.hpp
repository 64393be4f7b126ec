// The types of the saved-header members that tensoracle reads back (the listing, `cache show`,
// the rebuild reason, the IO check of open_engine). A header that passes this check can be used
// by every reader without a type error; members tensoracle does not know are left alone.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tensoracle {

// The first member of `conditions` or `references` whose type is not the one tensoracle writes,
// described with its JSON path, its type and the expected type
// (e.g. `references.io.tensors[0].shape is "1x3", expected an array of integers`);
// std::nullopt when every known member is well typed.
std::optional<std::string> header_schema_violation(nlohmann::json const& conditions,
                                                   nlohmann::json const& references);

} // namespace tensoracle
