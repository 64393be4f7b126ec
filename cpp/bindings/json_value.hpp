// A Python value of the JSON kinds (dict with string keys, list, tuple, str, int, float, bool,
// None) as the JSON value the core reads, so that a description (a GPU's properties, an engine's
// conditions) crosses into C++ as the object it is, not as text written and parsed again.
#pragma once

#include <nanobind/nanobind.h>
#include <nlohmann/json.hpp>
#include <string>

namespace tensoracle::bindings {

// TypeError naming `where` and the value's type for anything else (as json.dumps refuses it).
nlohmann::json json_value(nanobind::handle value, std::string const& where);

} // namespace tensoracle::bindings
