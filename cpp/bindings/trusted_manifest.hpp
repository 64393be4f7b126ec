// The bindings' form of a deployment manifest read once and trusted (tensoracle._core's
// TrustedManifest, bound in deploy.cpp; its entries' checks in manifest_entry_check.cpp).
#pragma once

#include "tensoracle/deploy/deployed_engine.hpp"
#include "tensoracle/deploy/manifest.hpp"

namespace tensoracle::bindings {

// A manifest read once and trusted as open_deployed trusts it, with the options it was read
// with: every entry can be opened from it, whatever GPU this machine has (or none), as
// open_deployed opens the one it selects.
struct TrustedManifest {
    deploy::Manifest manifest;
    deploy::OpenOptions options;
};

} // namespace tensoracle::bindings
