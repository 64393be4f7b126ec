// Python values as JSON values (see json_value.hpp).
#include "json_value.hpp"

#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"

#include <cstdint>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

namespace {

nlohmann::json converted(nb::handle value, std::string const& where, std::size_t depth);

nlohmann::json container(nb::handle value, std::string const& where, std::size_t depth) {
    if (depth == kMaxJsonDepth) {
        throw nb::value_error((where + " nests deeper than " + std::to_string(kMaxJsonDepth) +
                               " levels, the limit of a JSON value")
                                  .c_str());
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
            object[name] = converted(item, where + "." + name, depth + 1);
        }
        return object;
    }
    nlohmann::json array = nlohmann::json::array();
    std::size_t index = 0;
    for (nb::handle item : value) {
        array.push_back(converted(item, where + "[" + std::to_string(index++) + "]", depth + 1));
    }
    return array;
}

nlohmann::json converted(nb::handle value, std::string const& where, std::size_t depth) {
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
    if (nb::isinstance<nb::dict>(value) || nb::isinstance<nb::list>(value) ||
        nb::isinstance<nb::tuple>(value)) {
        return container(value, where, depth);
    }
    throw nb::type_error((where + " holds a " +
                          nb::cast<std::string>(nb::str(value.type().attr("__name__"))) +
                          ", which is not a JSON value")
                             .c_str());
}

} // namespace

nlohmann::json json_value(nb::handle value, std::string const& where) {
    return converted(value, where, 0);
}

nlohmann::json json_object(nb::handle value, std::string const& where) {
    nlohmann::json object = json_value(value, where);
    if (!object.is_object()) {
        throw InvalidArgument(where + " must be a JSON object, not a " + object.type_name());
    }
    return object;
}

nb::object python_value(nlohmann::json const& value) {
    switch (value.type()) {
    case nlohmann::json::value_t::null:
        return nb::none();
    case nlohmann::json::value_t::boolean:
        return nb::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
        return nb::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
        return nb::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
        return nb::float_(value.get<double>());
    case nlohmann::json::value_t::string:
        return nb::str(value.get_ref<std::string const&>().c_str(),
                       value.get_ref<std::string const&>().size());
    case nlohmann::json::value_t::array: {
        nb::list array;
        for (auto const& item : value) {
            array.append(python_value(item));
        }
        return array;
    }
    case nlohmann::json::value_t::object: {
        nb::dict object;
        for (auto const& [name, item] : value.items()) {
            object[nb::str(name.c_str(), name.size())] = python_value(item);
        }
        return object;
    }
    default: // binary and discarded values are not read from JSON text
        throw nb::type_error("a JSON value of a kind that has no Python value");
    }
}

nb::dict python_object(nlohmann::json const& object) {
    if (!object.is_object()) {
        throw nb::type_error(
            (std::string("a JSON object was expected, not a ") + object.type_name()).c_str());
    }
    return nb::borrow<nb::dict>(python_value(object));
}

} // namespace tensoracle::bindings
