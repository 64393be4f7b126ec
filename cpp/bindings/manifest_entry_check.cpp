// Python binding of a deployment manifest's checks of one entry (src/deploy/manifest_entry_check):
// the Python package's `cache pull --manifest` judges a download and a saved file with the checks
// the native pull makes, so that both refuse the same objects with the same messages.
#include "deploy/manifest_entry_check.hpp"

#include "bindings.hpp"
#include "buffer_view.hpp"
#include "trusted_manifest.hpp"

#include <cstddef>
#include <cstdint>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <string>
#include <utility>

namespace nb = nanobind;

namespace tensoracle::bindings {
namespace {

// One entry of a trusted manifest, as a pull checks it (it points into the manifest, which the
// binding keeps alive as long as the check).
struct EntryCheck {
    deploy::detail::ExpectedEntry expected;
};

} // namespace

void bind_manifest_entry_check(nb::module_& module) {
    nb::class_<EntryCheck>(
        module, "ManifestEntryCheck",
        "What a pull checks of one entry of a trusted manifest: a saved file at the entry's name "
        "(check_saved) and a download (ManifestObjectCheck).")
        .def(
            "__init__",
            [](EntryCheck* self, TrustedManifest const& trusted, std::size_t index,
               std::string where) {
                if (index >= trusted.manifest.entries.size()) {
                    throw nb::index_error("no such entry in the manifest");
                }
                new (self) EntryCheck{deploy::detail::expected_entry(
                    trusted.manifest.entries[index], std::move(where))};
            },
            nb::arg("manifest"), nb::arg("index"), nb::arg("where"), nb::keep_alive<1, 2>(),
            "The checks of the entry `index` of `manifest`, named `where` in messages "
            "(\"deploy.json: entries[0]\"). Raises IndexError for an index beyond the entries.")
        .def(
            "check_saved",
            [](EntryCheck const& check, std::filesystem::path const& path) {
                nb::gil_scoped_release const released;
                deploy::detail::check_saved_entry(path, check.expected);
            },
            nb::arg("path"),
            "Judges the saved entry at `path` from its header: EngineConditionError naming the "
            "field that differs (UntrustedEngineError for the header's SHA-256 of a verified "
            "signed manifest's entry), CorruptEngineError for a link, anything but a regular file "
            "(never followed or waited on) or a damaged header, OSError when it cannot be read. "
            "The file is only read.");
    nb::class_<deploy::detail::ObjectCheck>(
        module, "ManifestObjectCheck",
        "The manifest's checks of one download, as it arrives: its size when made, its header "
        "once fed, its signature trailer at finish().")
        .def(
            "__init__",
            [](deploy::detail::ObjectCheck* self, EntryCheck const& entry, std::string url,
               std::uint64_t object_size) {
                new (self) deploy::detail::ObjectCheck(entry.expected, std::move(url), object_size);
            },
            nb::arg("entry"), nb::arg("url"), nb::arg("object_size"), nb::keep_alive<1, 2>(),
            "Checks a download of `object_size` bytes named `url` for `entry`. Raises "
            "EngineConditionError naming the object and the field when the size is not the "
            "entry's engine_bytes (with or without a signature trailer, as the manifest says).")
        .def(
            "feed",
            [](deploy::detail::ObjectCheck& check, nb::handle chunk) {
                BufferView const view(chunk, "chunk");
                nb::gil_scoped_release const released;
                check.feed(view.bytes());
            },
            nb::arg("chunk"),
            "Takes the object's next bytes (any contiguous bytes-like object), in order. Raises "
            "EngineConditionError (UntrustedEngineError, CorruptEngineError) naming the object "
            "and the field once its header differs from the entry's.")
        .def(
            "finish", [](deploy::detail::ObjectCheck const& check) { check.finish(); },
            "After the last byte. Raises EngineConditionError when the signature trailer is not "
            "the manifest's, CorruptEngineError when the object ended before its header.");
}

} // namespace tensoracle::bindings
