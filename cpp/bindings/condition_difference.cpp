// Python binding of the nearest saved entry of a name and its differing conditions (the reason
// open_engine records when it builds again).
#include "cache/condition_difference.hpp"

#include "bindings.hpp"
#include "cache/engine_file.hpp"
#include "json_value.hpp"
#include "tensoracle/errors.hpp"
#include "text/bounded_json.hpp"
#include "text/canonical_json.hpp"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_condition_difference(nb::module_& module) {
    module.def(
        "nearest_entry",
        [](std::filesystem::path const& directory,
           nb::handle conditions_value) -> std::optional<nb::dict> {
            nlohmann::json const conditions = json_value(conditions_value, "conditions");
            std::optional<NearestEntry> nearest;
            {
                nb::gil_scoped_release released;
                nearest = nearest_entry(directory, conditions);
            }
            if (!nearest) {
                return std::nullopt;
            }
            return python_object({{"compared_with", nearest->file_name},
                                  {"differences", differences_json(nearest->differences)}});
        },
        nb::arg("directory"), nb::arg("conditions"),
        "{compared_with, differences: [{key, before, after, description}]} for the saved entry "
        "of the same name nearest to `conditions`, or None when there is none.");
}

} // namespace tensoracle::bindings
