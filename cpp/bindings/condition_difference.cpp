// Python binding of the nearest saved entry of a name and its differing conditions (the reason
// open_engine records when it builds again).
#include "tensoracle/cache/condition_difference.hpp"

#include "bindings.hpp"
#include "tensoracle/cache/engine_file.hpp"
#include "tensoracle/errors.hpp"
#include "tensoracle/text/bounded_json.hpp"
#include "tensoracle/text/canonical_json.hpp"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_condition_difference(nb::module_& module) {
    module.def(
        "nearest_entry_json",
        [](std::filesystem::path const& directory,
           std::string const& conditions_json) -> std::optional<std::string> {
            nlohmann::json conditions;
            try {
                conditions = parse_bounded_json(conditions_json, {.max_bytes = kMaxHeaderBytes});
            } catch (JsonLimitError const& error) {
                throw InvalidArgument(std::string("conditions_json is not valid JSON: ") +
                                      error.what());
            }
            auto const nearest = nearest_entry(directory, conditions);
            if (!nearest) {
                return std::nullopt;
            }
            return canonical_json({{"compared_with", nearest->file_name},
                                   {"differences", differences_json(nearest->differences)}});
        },
        nb::arg("directory"), nb::arg("conditions_json"), nb::call_guard<nb::gil_scoped_release>(),
        "JSON {compared_with, differences: [{key, before, after, description}]} for the saved "
        "entry of the same name nearest to `conditions_json`, or None when there is none.");
}

} // namespace tensoracle::bindings
