// Declarations of the binding units that make up tensoracle._core, one per bound concept.
#pragma once

#include <nanobind/nanobind.h>

namespace tensoracle::bindings {

// Maps the core's C++ errors onto tensoracle.errors (see errors.cpp).
void bind_errors(nanobind::module_& module);
void bind_store(nanobind::module_& module);
// GPU compatibility properties from the CUDA driver (see gpu.cpp).
void bind_gpu(nanobind::module_& module);
void bind_compare(nanobind::module_& module);
// Cubin bundle inspection (see bundle.cpp).
void bind_bundle(nanobind::module_& module);
void bind_library_exports(nanobind::module_& module);
// The nearest saved entry and how its conditions differ (see condition_difference.cpp).
void bind_condition_difference(nanobind::module_& module);
// Remote cache keys, signatures and object verification (see remote.cpp).
void bind_remote(nanobind::module_& module);
// The streamed receiver of remote objects (see remote/receiver.cpp).
void bind_remote_receiver(nanobind::module_& module);
// Which GPU a saved engine runs on: the matching rule (see deploy.cpp).
void bind_deploy(nanobind::module_& module);
// A deployment manifest's checks of an entry's object and saved file (see
// manifest_entry_check.cpp); after bind_deploy, which binds TrustedManifest.
void bind_manifest_entry_check(nanobind::module_& module);
// The one IO comparison, over typed tensor descriptions (see io_difference.cpp).
void bind_io_difference(nanobind::module_& module);

} // namespace tensoracle::bindings
