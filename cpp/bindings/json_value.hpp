// A Python value of the JSON kinds (dict with string keys, list, tuple, str, int, float, bool,
// None) as the JSON value the core reads, so that a description (a GPU's properties, an engine's
// conditions) crosses into C++ as the object it is, not as text written and parsed again.
#pragma once

#include <nanobind/nanobind.h>
#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle::bindings {

// TypeError naming `where` and the value's type for anything else (as json.dumps refuses it);
// ValueError for a value nested deeper than kMaxJsonDepth (a dict that holds itself, say), the
// limit that a JSON text read by the core is held to.
nlohmann::json json_value(nanobind::handle value, std::string const& where);

// json_value(value, where), which must be an object: InvalidArgument "<where> must be a JSON
// object, not a <kind>" otherwise.
nlohmann::json json_object(nanobind::handle value, std::string const& where);

// The reverse: a JSON value as the Python value json.loads gives for its text (dict, list, str,
// int, float, bool, None; an object's members in the value's order).
nanobind::object python_value(nlohmann::json const& value);

// python_value of a JSON object (a header's conditions or references), typed as the dict it is.
nanobind::dict python_object(nlohmann::json const& object);

} // namespace tensoracle::bindings
