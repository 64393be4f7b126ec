// Canonical JSON: sorted keys, no white space, UTF-8, and no floating point numbers.
#include "tensoracle/text/canonical_json.hpp"

#include "tensoracle/errors.hpp"

#include <algorithm>

namespace tensoracle {
namespace {

// Floats have several spellings of one value and rounding differences between writers, so they
// cannot be part of a digest; the pointer tells the caller which member to turn into a string.
void reject_floats(nlohmann::json const& value, nlohmann::json::json_pointer const& where) {
    if (value.is_number_float()) {
        throw InvalidArgument("canonical JSON does not accept floating point numbers: value " +
                              value.dump() + " at JSON pointer '" + where.to_string() +
                              "' (use an integer or a string)");
    }
    if (value.is_object()) {
        for (auto const& [key, member] : value.items()) {
            reject_floats(member, where / key);
        }
    } else if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
            reject_floats(value[i], where / i);
        }
    } else if (value.is_binary()) {
        throw InvalidArgument("canonical JSON does not accept binary values (at JSON pointer '" +
                              where.to_string() + "')");
    }
}

// Whether reject_floats would throw, found without building a pointer per member (most values
// hold neither, and this runs for every header read).
bool holds_float_or_binary(nlohmann::json const& value) {
    switch (value.type()) {
    case nlohmann::json::value_t::number_float:
    case nlohmann::json::value_t::binary:
        return true;
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array:
        return std::any_of(value.begin(), value.end(), [](nlohmann::json const& member) {
            return holds_float_or_binary(member);
        });
    default:
        return false;
    }
}

} // namespace

std::string canonical_json(nlohmann::json const& value) {
    if (holds_float_or_binary(value)) {
        reject_floats(value, nlohmann::json::json_pointer{}); // throws, naming where
    }
    // nlohmann::json keeps object members in a std::map<std::string>, whose ordering compares
    // chars as unsigned bytes: dump() therefore writes keys in byte order. ensure_ascii=false
    // keeps non-ASCII text as its UTF-8 bytes, and the strict error handler refuses invalid UTF-8.
    try {
        return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict);
    } catch (nlohmann::json::type_error const& error) {
        throw InvalidArgument(std::string("canonical JSON needs valid UTF-8 strings: ") +
                              error.what());
    }
}

} // namespace tensoracle
