// Binds cubin bundle inspection: tensoracle._core.inspect_bundle returns the JSON report.
#include "bindings.hpp"
#include "tensoracle/bundle_report.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace tensoracle::bindings {

void bind_bundle(nb::module_& module) {
    module.def(
        "inspect_bundle",
        [](std::string const& directory, std::optional<std::string> const& plugin) {
            nb::gil_scoped_release released;
            return cubin::inspect_bundle_report(directory, plugin);
        },
        nb::arg("directory"), nb::arg("plugin").none() = nb::none(),
        "Checks a cubin bundle directory (and a plugin library); returns the report as JSON.");
}

} // namespace tensoracle::bindings
