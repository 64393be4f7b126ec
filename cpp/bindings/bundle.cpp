// Binds cubin bundle inspection: inspect_bundle (the JSON report), bundle_sha256 (the digest of a
// manifest given as JSON text), cubin_sm and the safe relative path rule.
#include "bindings.hpp"
#include "buffer_view.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"
#include "tensoracle/cubin/bundle_report.hpp"
#include "tensoracle/cubin/cubin_elf.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

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
    module.def(
        "bundle_sha256",
        [](std::string const& manifest) {
            nb::gil_scoped_release released;
            return cubin::bundle_sha256_of_text(manifest);
        },
        nb::arg("manifest"),
        "The bundle digest of a manifest given as JSON text (its bundle_sha256 key left out).");
    module.def(
        "cubin_sm",
        [](nb::handle data, std::vector<std::uint32_t> const& allowed) {
            BufferView const view(data, "data");
            return cubin::cubin_sm(view.bytes(), allowed, "<bytes>");
        },
        nb::arg("data"), nb::arg("allowed"),
        "The SM number in a cubin's ELF header; raises CubinArchitectureError unless in allowed.");
    module.def(
        "is_safe_relative_path",
        [](std::string const& path) { return cubin::is_safe_relative_path(path); }, nb::arg("path"),
        "Whether a path stays inside its base under both POSIX and Windows rules.");
    module.def("inspected_sms", [] {
        return std::vector<std::uint32_t>(std::begin(cubin::kSmsInspected),
                                          std::end(cubin::kSmsInspected));
    });
}

} // namespace tensoracle::bindings
