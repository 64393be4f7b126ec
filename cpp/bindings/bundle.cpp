// Binds cubin bundle inspection: inspect_bundle (the JSON report), bundle_sha256 (the digest of a
// manifest given as JSON text), cubin_sm, the safe relative path rule, and the core's bounded
// JSON parser as bundle.json's pre-check uses it (json_refusal).
#include "bindings.hpp"
#include "buffer_view.hpp"
#include "cubin/bundle_reader.hpp"
#include "cubin/bundle_report.hpp"
#include "cubin/elf.hpp"
#include "tensoracle/cubin/bundle_manifest.hpp"
#include "text/bounded_json.hpp"

#include <cstddef>
#include <limits>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <string_view>
#include <utility>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

// Why parse_bounded_json refuses `data`: nothing when it parses; else the message and, when the
// bytes are not JSON at all (JsonSyntaxError), the offset of the byte where the parser stopped.
using JsonRefusal = std::optional<std::pair<std::string, std::optional<std::size_t>>>;

JsonRefusal json_refusal(nb::handle data, std::size_t max_bytes, std::size_t max_depth,
                         std::optional<std::size_t> max_values) {
    BufferView const view(data, "data");
    auto const bytes = view.bytes();
    std::string_view const text(reinterpret_cast<char const*>(bytes.data()), bytes.size());
    nb::gil_scoped_release released;
    try {
        parse_bounded_json(
            text, {.max_bytes = max_bytes,
                   .max_depth = max_depth,
                   .max_values = max_values.value_or(std::numeric_limits<std::size_t>::max())});
    } catch (JsonSyntaxError const& error) {
        return std::pair{std::string(error.what()), std::optional{error.offset()}};
    } catch (JsonLimitError const& error) {
        return std::pair{std::string(error.what()), std::optional<std::size_t>{}};
    }
    return std::nullopt;
}

} // namespace

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
    module.attr("MAX_MANIFEST_BYTES") = cubin::kMaxManifestBytes;
    module.attr("MAX_MANIFEST_VALUES") = cubin::kMaxManifestValues;
    module.attr("MAX_CUBIN_BYTES") = cubin::kMaxCubinBytes;
    module.def("json_refusal", &json_refusal, nb::arg("data"), nb::arg("max_bytes"),
               nb::arg("max_depth") = kMaxJsonDepth, nb::arg("max_values").none() = nb::none(),
               "Why the core's JSON parser refuses data (bytes-like) within max_bytes, max_depth "
               "and max_values (None: no limit but max_bytes): None when it parses, else "
               "(message, offset), offset being the byte at which a text that is not JSON stopped "
               "the parser, None for a passed limit or a number beyond a double.");
    module.def("inspected_sms", [] {
        return std::vector<std::uint32_t>(std::begin(cubin::kSmsInspected),
                                          std::end(cubin::kSmsInspected));
    });
}

} // namespace tensoracle::bindings
