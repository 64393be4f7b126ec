// Python values as JSON values (see json_value.hpp).
#include "json_value.hpp"

#include <cstdint>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

nlohmann::json json_value(nb::handle value, std::string const& where) {
    if (value.is_none()) {
        return nullptr;
    }
    if (nb::isinstance<nb::bool_>(value)) {
        return nb::cast<bool>(value);
    }
    if (nb::isinstance<nb::int_>(value)) {
        std::int64_t whole = 0;
        if (nb::try_cast(value, whole)) {
            return whole;
        }
        std::uint64_t positive = 0;
        if (nb::try_cast(value, positive)) {
            return positive;
        }
        return nb::cast<double>(value); // as json.dumps's text of it is read back
    }
    if (nb::isinstance<nb::float_>(value)) {
        return nb::cast<double>(value);
    }
    if (nb::isinstance<nb::str>(value)) {
        return nb::cast<std::string>(value);
    }
    if (nb::isinstance<nb::dict>(value)) {
        nlohmann::json object = nlohmann::json::object();
        for (auto const& [key, item] : nb::borrow<nb::dict>(value)) {
            if (!nb::isinstance<nb::str>(key)) {
                throw nb::type_error((where + " has a key that is not a string: " +
                                      nb::cast<std::string>(nb::repr(key)))
                                         .c_str());
            }
            std::string const name = nb::cast<std::string>(key);
            object[name] = json_value(item, where + "." + name);
        }
        return object;
    }
    if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
        nlohmann::json array = nlohmann::json::array();
        std::size_t index = 0;
        for (nb::handle item : value) {
            array.push_back(json_value(item, where + "[" + std::to_string(index++) + "]"));
        }
        return array;
    }
    throw nb::type_error((where + " holds a " +
                          nb::cast<std::string>(nb::str(value.type().attr("__name__"))) +
                          ", which is not a JSON value")
                             .c_str());
}

} // namespace tensoracle::bindings
